package postgres_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
	_ "benchlab/internal/engine/postgres"
	"benchlab/internal/server/servertest"
)

// These tests start real PostgreSQL 15 servers from Debian's postgresql-15
// package (.ci/run installs it) with small memory settings.

func TestMatrix(t *testing.T) {
	servertest.Matrix(t, "postgres", "15.",
		map[string]string{"shared_buffers": "32MB", "synchronous_commit": "on"},
		map[string]string{"shared_buffers": "64MB", "synchronous_commit": "off"})
}

func TestBadSetting(t *testing.T) {
	servertest.BadSetting(t, "postgres", map[string]string{"shared_buffers": "lots"}, `"shared_buffers"`)
}

func TestPortInUse(t *testing.T) { servertest.PortInUse(t, "postgres") }

func TestKilledServer(t *testing.T) { servertest.Killed(t, "postgres") }

func TestCancel(t *testing.T) { servertest.Cancel(t, "postgres") }

// TestServerPinned starts a server with cpus = "1": the postmaster and every
// backend it forks may run on CPU 1 only (issue 3 item 7).
func TestServerPinned(t *testing.T) {
	servertest.Setup(t)
	db := enginetest.Open(t, engine.Target{Name: "pinned", Engine: "postgres", CPUs: "1"})
	roots := db.(engine.Server).PIDs()
	if len(roots) == 0 {
		t.Fatal("no server process")
	}
	procs := append([]int(nil), roots...)
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The parent pid is the 2nd field after the command in parentheses.
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(roots[0]) {
			procs = append(procs, pid)
		}
	}
	if len(procs) < 3 {
		t.Errorf("found %d server processes, want the postmaster and its background processes", len(procs))
	}
	for _, pid := range procs {
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			continue // exited meanwhile
		}
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok && strings.TrimSpace(v) != "1" {
				t.Errorf("server process %d may run on CPUs %s, want 1", pid, strings.TrimSpace(v))
			}
		}
	}
}

func TestCustomSQL(t *testing.T) { servertest.Custom(t, "postgres") }

func TestTPCC(t *testing.T) { servertest.TPCC(t, "postgres") }
