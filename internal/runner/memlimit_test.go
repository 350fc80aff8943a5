package runner

import (
	"math"
	"runtime/debug"
	"testing"
)

// TestLimitStepMemory: a step sets a soft limit of at least its slack above
// what the Go runtime holds and puts the unlimited state back afterwards; a
// limit set before (GOMEMLIMIT) stands untouched.
func TestLimitStepMemory(t *testing.T) {
	if prev := debug.SetMemoryLimit(-1); prev != math.MaxInt64 {
		t.Fatalf("the test process has a memory limit %d already (GOMEMLIMIT?)", prev)
	}
	keep := make([]byte, 8<<20) // 8 MiB live: the limit must leave twice that
	limit, restore := limitStepMemory()
	if got := debug.SetMemoryLimit(-1); got != limit || limit < 2*int64(len(keep))+memSlack {
		t.Errorf("limit %d, runtime's %d; want them equal and at least twice the 8 MiB live plus %d", limit, got, memSlack)
	}
	keep[0] = 1
	restore()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("after the step the limit is %d; want none", got)
	}
	debug.SetMemoryLimit(1 << 40)
	defer debug.SetMemoryLimit(math.MaxInt64)
	if limit, restore := limitStepMemory(); limit != 0 || debug.SetMemoryLimit(-1) != 1<<40 {
		t.Errorf("with a limit set before: set %d, runtime's %d; want the earlier limit kept", limit, debug.SetMemoryLimit(-1))
	} else {
		restore()
		if debug.SetMemoryLimit(-1) != 1<<40 {
			t.Error("restore changed a limit the step did not set")
		}
	}
	_ = keep[len(keep)-1]
}
