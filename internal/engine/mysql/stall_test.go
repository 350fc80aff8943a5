package mysql_test

import (
	"testing"
	"time"

	"benchlab/internal/server/servertest"
)

// TestStalledServer stops MariaDB for 3 s inside a 3 s test: the stall is
// stored as a failed test with the timed-out operation in its max latency,
// never as an ok run.
func TestStalledServer(t *testing.T) { servertest.Stalled(t, "mysql", 3*time.Second) }
