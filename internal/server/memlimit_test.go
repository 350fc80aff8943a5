package server_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"benchlab/internal/engine/postgres"
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
	if err := in.Stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("cgroup %s left after Stop: %v", dir, err)
	}
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
