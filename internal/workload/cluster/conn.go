package cluster

import (
	"benchlab/internal/engine"
	"context"
	"fmt"
)

// conn is a worker's connection that moves to the next node when its
// node fails: through Connect (a proxy, or the DB's current primary) it
// connects again there, otherwise to the next node in turn.
type conn struct {
	cl   Cluster
	node int // the node connected to, -1 through Connect (the writer's node)
	c    engine.Conn
}

// open connects to node (or the proxy when node < 0).
func (k *conn) open(ctx context.Context) error {
	var c engine.Conn
	var err error
	if k.node < 0 {
		c, err = k.cl.Connect(ctx)
	} else {
		c, err = k.cl.ConnectNode(ctx, k.node)
	}
	if err != nil {
		return err // c may be a nil pointer in a non-nil interface
	}
	k.c = c
	return nil
}

// reset drops the connection and, without a proxy, moves to the next node.
func (k *conn) reset() {
	if k.c != nil {
		k.c.Close()
		k.c = nil
	}
	if k.node >= 0 {
		k.node = (k.node + 1) % k.cl.Nodes()
	}
}

// Close closes the connection.
func (k *conn) Close() error {
	if k.c == nil {
		return nil
	}
	return k.c.Close()
}

// flat turns err into an error of the same text that wraps nothing, so
// that the runner counts a failed try without ending the step on a lost
// connection (engine.ErrConnLost): losing a connection is what failover
// measures.
func flat(err error) error { return fmt.Errorf("%s", err.Error()) }
