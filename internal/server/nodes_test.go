package server

import (
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// sleeper is an Instance whose process is a real sleep in a process group
// of its own, watched as Launch watches a server: enough for the cluster
// bookkeeping, which only kills and waits.
func sleeper(t *testing.T) *Instance {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	in := &Instance{cfg: Config{Engine: "test", Target: "t"}, cmd: cmd, exited: make(chan struct{}), stopping: make(chan struct{})}
	go func() {
		in.exitErr = cmd.Wait()
		close(in.exited)
	}()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-in.exited
	})
	return in
}

// TestNodesDiedAll: a primary-with-replicas cluster lives while one node
// does; a node killed through Kill is expected, one that dies otherwise
// is the cluster's death; node numbers out of range are refused, naming
// the engine and counting from 1.
func TestNodesDiedAll(t *testing.T) {
	a, b := sleeper(t), sleeper(t)
	n := NewNodes("demo", a, b)
	for _, i := range []int{-1, 2} {
		if err := n.Check(i); err == nil || !strings.HasPrefix(err.Error(), "demo: no node") ||
			!strings.Contains(err.Error(), "the cluster has 2") {
			t.Errorf("Check(%d) = %v; want demo: no node ...; the cluster has 2", i, err)
		}
		if err := n.Kill(i); err == nil || err.Error() != n.Check(i).Error() {
			t.Errorf("Kill(%d) = %v; want Check's error", i, err)
		}
	}
	if err := n.Check(1); err != nil {
		t.Errorf("Check(1) = %v", err)
	}
	if err := n.DiedAll(); err != nil {
		t.Fatalf("both nodes run: %v", err)
	}
	if err := n.Kill(0); err != nil {
		t.Fatal(err)
	}
	<-a.exited
	if !n.Killed(0) || n.Killed(1) {
		t.Errorf("Killed: %v %v; want true false", n.Killed(0), n.Killed(1))
	}
	if err := n.DiedAll(); err != nil {
		t.Errorf("one node killed on purpose: %v; want the cluster alive", err)
	}
	if err := n.Kill(1); err != nil {
		t.Fatal(err)
	}
	<-b.exited
	if err := n.DiedAll(); err == nil || err.Error() != "demo: every node was killed" {
		t.Errorf("every node killed: %v", err)
	}
}

// TestNodesDiedQuorum: a Galera-like cluster of three survives one killed
// node and dies with two; a node dying unasked is a death whatever the
// count, and Replace forgets the old node's kill.
func TestNodesDiedQuorum(t *testing.T) {
	a, b, c := sleeper(t), sleeper(t), sleeper(t)
	n := NewNodes("demo", a, b, c)
	if err := n.Kill(0); err != nil {
		t.Fatal(err)
	}
	<-a.exited
	if err := n.DiedQuorum(); err != nil {
		t.Errorf("one of three killed: %v; want a failover, not a death", err)
	}
	// Node 3 dies on its own: its death is the cluster's, with its reason.
	if err := syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-c.exited
	for name, f := range map[string]func() error{"DiedQuorum": n.DiedQuorum, "DiedAll": n.DiedAll} {
		if err := f(); err == nil || !strings.Contains(err.Error(), "exited unexpectedly") {
			t.Errorf("%s after an unasked death: %v; want the node's exit", name, err)
		}
	}
	// Rebuilt in place, node 3 runs again; a second kill loses the quorum.
	n.Replace(2, sleeper(t))
	if err := n.DiedQuorum(); err != nil {
		t.Errorf("node 3 replaced: %v", err)
	}
	if err := n.Kill(1); err != nil {
		t.Fatal(err)
	}
	<-b.exited
	if err := n.DiedQuorum(); err == nil || err.Error() != "demo: 2 of 3 nodes killed: the others lost the quorum" {
		t.Errorf("two of three killed: %v", err)
	}
	if n.Killed(2) {
		t.Error("a replaced node keeps the old one's kill")
	}
}

// TestWrapDied: a managed target's failed call carries the death of its
// process, when it died, and nothing else changes.
func TestWrapDied(t *testing.T) {
	in := sleeper(t)
	m := Manage(in)
	call := errors.New("read: connection reset")
	if err := m.Wrap(call); err != call {
		t.Errorf("alive: Wrap = %v; want the call's error as is", err)
	}
	if m.Wrap(nil) != nil {
		t.Error("Wrap(nil) is not nil")
	}
	syscall.Kill(-in.cmd.Process.Pid, syscall.SIGKILL)
	<-in.exited
	err := m.Wrap(call)
	if !errors.Is(err, call) || !strings.Contains(err.Error(), "read: connection reset; test target t") ||
		!strings.Contains(err.Error(), "exited unexpectedly") {
		t.Errorf("dead: Wrap = %v; want the call's error, then the death", err)
	}
}
