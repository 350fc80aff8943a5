package server_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"benchlab/internal/engine/postgres"
	"benchlab/internal/meter"
	"benchlab/internal/server"
)

func TestParseMemory(t *testing.T) {
	for in, want := range map[string]int64{"2GB": 2 << 30, "512mb": 512 << 20, "1.5GB": 3 << 29, "67108864": 64 << 20, " 1 TB ": 1 << 40} {
		if got, err := server.ParseMemory(in); err != nil || got != want {
			t.Errorf("ParseMemory(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "lots", "-1GB", "0", "10MB", "2XB"} {
		if _, err := server.ParseMemory(in); err == nil {
			t.Errorf("ParseMemory(%q) accepted", in)
		}
	}
}

// TestMemoryLimit starts PostgreSQL with a 256 MB memory limit: the server's
// processes (the postmaster and the backends it forks) run in a memory
// cgroup of their own whose limit is 256 MB, the limit is among the
// settings benchlab reports, and Stop removes the cgroup.
func TestMemoryLimit(t *testing.T) {
	if _, err := server.FindBinaries(postgres.Flavor, ""); err != nil {
		t.Skipf("no PostgreSQL install: %v", err)
	}
	if os.Geteuid() != 0 {
		t.Skip("memory cgroups need root; tests run as root")
	}
	in, err := server.Launch(context.Background(), server.Config{Flavor: postgres.Flavor, Env: logEnv(t), Engine: "postgres",
		Target: "small", Dir: t.TempDir(), Settings: map[string]string{"shared_buffers": "16MB"}, MemoryLimit: 256 << 20}, tcpProbe)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Stop()
	pid := in.PIDs()[0]
	dir, limitFile := memoryCgroupOf(t, pid)
	if !strings.Contains(filepath.Base(dir), "benchlab-small-") {
		t.Fatalf("server %d is in memory cgroup %s, want one of benchlab's", pid, dir)
	}
	b, err := os.ReadFile(filepath.Join(dir, limitFile))
	if err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(256<<20) {
		t.Errorf("%s: %q, %v; want %d", limitFile, b, err, 256<<20)
	}
	if got := in.ManagedSettings()["benchlab.memory_limit"]; !strings.HasPrefix(got, "256MB (cgroup v") {
		t.Errorf("benchlab.memory_limit = %q, want 256MB and the cgroup", got)
	}
	if !in.MarkMemory() {
		t.Fatal("MarkMemory: the server has no memory cgroup")
	}
	m, ok, err := in.CgroupMemory()
	if err != nil || !ok {
		t.Fatalf("CgroupMemory: %v, %v", ok, err)
	}
	if m.Limit != 256<<20 || m.Usage <= 0 || m.Usage > m.Limit || m.Peak < m.Usage || m.Peak > m.Limit || m.LimitHits != 0 ||
		m.Cache < 0 || m.Cache > m.Usage {
		t.Errorf("cgroup memory %+v: want usage and cache within the limit, peak from usage to the limit, no hits", m)
	}
	perfDir := perfCgroupOf(t, in)
	if err := in.Stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	for _, d := range []string{dir, perfDir} {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("cgroup %s left after Stop: %v", d, err)
		}
	}
}

// TestPerfCgroup starts PostgreSQL without a memory limit: as root, its
// processes (the postmaster and the processes it forked after it started)
// are all in a cgroup of their own that perf can filter by, and Stop
// removes it.
func TestPerfCgroup(t *testing.T) {
	if _, err := server.FindBinaries(postgres.Flavor, ""); err != nil {
		t.Skipf("no PostgreSQL install: %v", err)
	}
	if os.Geteuid() != 0 {
		t.Skip("cgroups need root; tests run as root")
	}
	in, err := server.Launch(context.Background(), server.Config{Flavor: postgres.Flavor, Env: logEnv(t), Engine: "postgres",
		Target: "perf", Dir: t.TempDir(), Settings: map[string]string{"shared_buffers": "16MB"}}, tcpProbe)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Stop()
	if in.MarkMemory() {
		t.Error("MarkMemory: true for a server without a memory limit")
	}
	dir := perfCgroupOf(t, in)
	if err := in.Stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("cgroup %s left after Stop: %v", dir, err)
	}
}

// perfCgroupOf finds the directory of the server's perf cgroup and checks
// that it holds every process of the server's tree, more than one.
func perfCgroupOf(t *testing.T, in *server.Instance) string {
	t.Helper()
	name, err := in.PerfCgroup()
	if err != nil {
		t.Fatalf("PerfCgroup: %v", err)
	}
	var dir string
	for _, base := range []string{"/sys/fs/cgroup/perf_event", "/sys/fs/cgroup/unified", "/sys/fs/cgroup"} {
		if _, err := os.Stat(filepath.Join(base, name, "cgroup.procs")); err == nil {
			dir = filepath.Join(base, name)
			break
		}
	}
	if dir == "" {
		t.Fatalf("perf cgroup %q: no such directory", name)
	}
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		t.Fatal(err)
	}
	procs := strings.Fields(string(b))
	// The postmaster forks its helper processes (checkpointer, writers)
	// as it starts, on a busy machine after it accepts connections.
	tree := meter.ProcessTree(in.PIDs())
	for end := time.Now().Add(time.Minute); len(tree) < 2 && time.Now().Before(end); {
		time.Sleep(50 * time.Millisecond)
		tree = meter.ProcessTree(in.PIDs())
	}
	if len(tree) < 2 {
		t.Fatalf("server tree %v: want the postmaster and its children", tree)
	}
	b, err = os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		t.Fatal(err)
	}
	procs = strings.Fields(string(b))
	for _, p := range tree {
		if slices.Contains(procs, strconv.Itoa(p)) {
			continue
		}
		// A short-lived child (a backend or a helper) may have ended
		// between reading the tree and the cgroup: only a process still
		// there, and in another cgroup by its own account, is wrong.
		own, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", p))
		if err != nil || strings.Contains(string(own), name) {
			continue
		}
		t.Errorf("process %d of the server is not in %s (%v; it is in %q)", p, dir, procs, own)
	}
	return dir
}

// memoryCgroupOf finds the memory cgroup directory of process pid and the
// name of its limit file.
func memoryCgroupOf(t *testing.T, pid int) (string, string) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) == 3 && strings.Contains(","+parts[1]+",", ",memory,") {
			return filepath.Join("/sys/fs/cgroup/memory", parts[2]), "memory.limit_in_bytes"
		}
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "0::") {
			return filepath.Join("/sys/fs/cgroup", strings.TrimPrefix(line, "0::")), "memory.max"
		}
	}
	t.Fatalf("no memory cgroup in %s", b)
	return "", ""
}
