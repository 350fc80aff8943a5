package server

import (
	"fmt"
	"sync"
)

// Nodes are the managed servers of a cluster, some of which a scenario
// kills on purpose (KillGroup): their deaths are expected, the others'
// are not. The cluster engines share this bookkeeping, and what counts
// as the whole cluster's death (DiedAll, DiedQuorum).
type Nodes struct {
	cluster string // the engine's name, at the head of errors
	insts   []*Instance

	mu     sync.Mutex
	killed []bool
}

// NewNodes tracks insts, node i being insts[i], for the engine named
// cluster.
func NewNodes(cluster string, insts ...*Instance) *Nodes {
	return &Nodes{cluster: cluster, insts: insts, killed: make([]bool, len(insts))}
}

// Len is the node count.
func (n *Nodes) Len() int { return len(n.insts) }

// At is node i.
func (n *Nodes) At(i int) *Instance {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.insts[i]
}

// Check says why i (from 0) names no node of the cluster; nil when it
// does.
func (n *Nodes) Check(i int) error {
	if i < 0 || i >= len(n.insts) {
		return fmt.Errorf("%s: no node %d; the cluster has %d", n.cluster, i+1, len(n.insts))
	}
	return nil
}

// Kill kills node i's process group as a crash would and remembers that
// its death was asked for.
func (n *Nodes) Kill(i int) error {
	if err := n.Check(i); err != nil {
		return err
	}
	n.mu.Lock()
	n.killed[i] = true
	n.mu.Unlock()
	return KillGroup(n.insts[i])
}

// Killed reports whether node i was killed on purpose.
func (n *Nodes) Killed(i int) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.killed[i]
}

// died says why a node died that Kill did not kill (the first such); else
// it returns the count of the dead ones, for the cluster's own judgement
// (a quorum lost, every node gone).
func (n *Nodes) died() (int, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	dead := 0
	for i, in := range n.insts {
		if in == nil {
			continue
		}
		if err := in.Died(); err != nil {
			if !n.killed[i] {
				return dead, err
			}
			dead++
		}
	}
	return dead, nil
}

// DiedAll says why a cluster that serves while one node lives (a primary
// whose replica can be promoted) can no longer serve: a node died that
// Kill did not kill, or every node is dead.
func (n *Nodes) DiedAll() error {
	dead, err := n.died()
	if err != nil {
		return err
	}
	if dead == len(n.insts) {
		return fmt.Errorf("%s: every node was killed", n.cluster)
	}
	return nil
}

// DiedQuorum says why a cluster that serves while more than half its
// nodes live (Galera's quorum) can no longer serve: a node died that Kill
// did not kill, or half the nodes or more were killed. One killed node of
// three is a failover, not a death.
func (n *Nodes) DiedQuorum() error {
	dead, err := n.died()
	if err != nil {
		return err
	}
	if dead > 0 && 2*dead >= len(n.insts) {
		return fmt.Errorf("%s: %d of %d nodes killed: the others lost the quorum", n.cluster, dead, len(n.insts))
	}
	return nil
}

// Replace puts in in node i's place (a replica rebuilt after a
// switchover); the old instance must be stopped already.
func (n *Nodes) Replace(i int, in *Instance) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.insts[i] = in
	n.killed[i] = false
}
