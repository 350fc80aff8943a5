package engine_test

import (
	"errors"
	"testing"

	"benchlab/internal/engine"
)

// deathOf is a Liveness whose death the test sets.
type deathOf struct{ err error }

func (d deathOf) Died() error { return d.err }

// TestWrapDied: a failed call's error gains the target's death after it,
// still matching the call's error; a living target, or no error, leaves
// it as it was.
func TestWrapDied(t *testing.T) {
	call := errors.New("read: connection reset")
	if err := engine.WrapDied(call, deathOf{}); err != call {
		t.Errorf("alive: %v; want the call's error as is", err)
	}
	if err := engine.WrapDied(nil, deathOf{errors.New("gone")}); err != nil {
		t.Errorf("no error: %v; want nil", err)
	}
	err := engine.WrapDied(call, deathOf{errors.New("server process 7 exited unexpectedly")})
	if !errors.Is(err, call) || err.Error() != "read: connection reset; server process 7 exited unexpectedly" {
		t.Errorf("dead: %v", err)
	}
}
