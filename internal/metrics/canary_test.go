package metrics

import (
	"context"
	"os"
	"testing"
	"time"
)

func TestCanary(t *testing.T) {
	dir := t.TempDir()
	start := time.Now()
	c := Canary(context.Background(), dir, 50*time.Millisecond)
	took := time.Since(start)
	if c.Error != "" || c.CPULoopsPerSec <= 0 || c.FsyncsPerSec <= 0 {
		t.Fatalf("canary %+v, want both rates positive and no error", c)
	}
	if took < 100*time.Millisecond || took > 5*time.Second {
		t.Errorf("two 50 ms probes took %s", took)
	}
	left, err := os.ReadDir(dir)
	if err != nil || len(left) != 0 {
		t.Errorf("canary left %v in its dir (err %v)", left, err)
	}
	// A dir that cannot be created: the CPU figure stays, fsync says why.
	c = Canary(context.Background(), "/proc/benchlab-no-such-dir", 10*time.Millisecond)
	if c.Error == "" || c.FsyncsPerSec != 0 || c.CPULoopsPerSec <= 0 {
		t.Errorf("canary in an unwritable dir: %+v", c)
	}
}
