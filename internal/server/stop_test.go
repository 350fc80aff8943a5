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
// server's process group.
func TestStopStoppedServer(t *testing.T) {
	if _, err := server.FindBinaries(postgres.Flavor, ""); err != nil {
		t.Skipf("no PostgreSQL install: %v", err)
	}
	in, err := server.Launch(context.Background(), server.Config{Flavor: postgres.Flavor, Env: logEnv(t), Engine: "postgres",
		Target: "t", Dir: t.TempDir(), StopTimeout: 5 * time.Minute}, tcpProbe)
	if err != nil {
		t.Fatal(err)
	}
	pid := in.PIDs()[0]
	tree := append([]int{pid}, childrenOf(t, pid)...)
	if len(tree) < 2 {
		t.Fatalf("server %d has no child processes to stop", pid)
	}
	for _, p := range tree {
		if err := syscall.Kill(p, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
	}
	if err := in.Stop(); err != nil {
		t.Errorf("stop of a stopped server: %v; want a clean shutdown", err)
	}
	for _, p := range tree {
		if err := syscall.Kill(p, 0); err == nil {
			b, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/cmdline")
			t.Errorf("process %d (%s) of the server's tree is still there", p, strings.ReplaceAll(string(b), "\x00", " "))
			syscall.Kill(p, syscall.SIGKILL)
		}
	}
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
