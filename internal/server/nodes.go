package server

import (
	"fmt"
	"sync"
)

// Nodes are the managed servers of a cluster, some of which a scenario
// kills on purpose (KillGroup): their deaths are expected, the others'
// are not.
type Nodes struct {
	insts []*Instance

	mu     sync.Mutex
	killed []bool
}

// NewNodes tracks insts, node i being insts[i].
func NewNodes(insts ...*Instance) *Nodes {
	return &Nodes{insts: insts, killed: make([]bool, len(insts))}
}

// Len is the node count.
func (n *Nodes) Len() int { return len(n.insts) }

// At is node i.
func (n *Nodes) At(i int) *Instance {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.insts[i]
}

// Kill kills node i's process group as a crash would and remembers that
// its death was asked for.
func (n *Nodes) Kill(i int) error {
	if i < 0 || i >= len(n.insts) {
		return fmt.Errorf("no node %d; the cluster has %d", i+1, len(n.insts))
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

// Died says why a node died that Kill did not kill (the first such); else
// it returns the count of the dead ones, for the cluster's own judgement
// (a quorum lost, every node gone).
func (n *Nodes) Died() (int, error) {
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

// Replace puts in in node i's place (a replica rebuilt after a
// switchover); the old instance must be stopped already.
func (n *Nodes) Replace(i int, in *Instance) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.insts[i] = in
	n.killed[i] = false
}
