package postgres_test

import (
	"testing"

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
