package server_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"benchlab/internal/engine/postgres"
	"benchlab/internal/server"
)

// TestStopStoppedServer stops (SIGSTOP) a PostgreSQL server and every
// process under it, as a hung host or a debugger would, then stops the
// server: the stop sets the tree going again, so the server shuts down
// cleanly (no "killed" error, though its stop timeout is long), and no
// process of the tree is left, not even the backends that left the
// server's process group. The server is ready when it answers SQL (a
// TCP probe answers as soon as the postmaster listens, before it has
// started its helpers: on a loaded machine the tree then had no child
// yet); a process that ends on its own before the test stops it (the
// probe's backend) is left out.
func TestStopStoppedServer(t *testing.T) {
	if _, err := server.FindBinaries(postgres.Flavor, ""); err != nil {
		t.Skipf("no PostgreSQL install: %v", err)
	}
	in, err := server.Launch(context.Background(), server.Config{Flavor: postgres.Flavor, Env: logEnv(t), Engine: "postgres",
		Target: "t", Dir: t.TempDir(), StopTimeout: 5 * time.Minute}, postgres.Probe)
	if err != nil {
		t.Fatal(err)
	}
	pid := in.PIDs()[0]
	var tree []int
	for _, p := range append([]int{pid}, childrenOf(t, pid)...) {
		if err := syscall.Kill(p, syscall.SIGSTOP); err == nil {
			tree = append(tree, p)
		} else if err != syscall.ESRCH || p == pid {
			t.Fatalf("stopping process %d of the server's tree: %v", p, err)
		}
	}
	if len(tree) < 2 {
		t.Fatalf("server %d has no child processes to stop", pid)
	}
	if err := in.Stop(); err != nil {
		t.Errorf("stop of a stopped server: %v; want a clean shutdown", err)
	}
	for _, p := range tree {
		if state(p) != "" && state(p) != "Z" { // a zombie has ended: its new parent reaps it
			b, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/cmdline")
			t.Errorf("process %d (%s) of the server's tree is still there", p, strings.ReplaceAll(string(b), "\x00", " "))
			syscall.Kill(p, syscall.SIGKILL)
		}
	}
}

// state is pid's state letter from /proc ("R", "S", "Z", ...), "" when it
// is gone.
func state(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	i := strings.LastIndexByte(string(b), ')')
	if f := strings.Fields(string(b[i+1:])); i > 0 && len(f) > 0 {
		return f[0]
	}
	return ""
}

// childrenOf are the processes under pid, read from /proc.
func childrenOf(t *testing.T, pid int) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	parent := map[int]int{}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(b), ')')
		if f := strings.Fields(string(b[i+1:])); i > 0 && len(f) > 1 {
			parent[p], _ = strconv.Atoi(f[1])
		}
	}
	var out []int
	for p := range parent {
		for q := parent[p]; q > 1; q = parent[q] {
			if q == pid {
				out = append(out, p)
				break
			}
		}
	}
	return out
}
