package spec

import (
	"fmt"
	"time"

	"benchlab/internal/workload"
)

// Turn is workload.interleave: the length of each target's turn when the
// targets of a repeat take turns, "off" (or 0) for one target after the
// other, or unset: then `run` interleaves where it is free (cli's
// scheduling of targets) and stores what it chose, so that a stored spec
// always says how its targets ran.
type Turn struct {
	// Duration is the turn; 0 runs the targets one after the other.
	time.Duration
	// Off says the spec (or a flag) asked for one target after the other.
	Off bool
}

// Unset says the spec left workload.interleave to benchlab.
func (t Turn) Unset() bool { return t.Duration == 0 && !t.Off }

// UnmarshalText accepts "off", "0" or a duration.
func (t *Turn) UnmarshalText(b []byte) error {
	if s := string(b); s == "off" || s == "0" {
		*t = Turn{Off: true}
		return nil
	}
	var d workload.Duration
	if err := d.UnmarshalText(b); err != nil {
		return fmt.Errorf("%w, or \"off\"", err)
	}
	*t = Turn{Duration: d.Duration, Off: d.Duration == 0}
	return nil
}

// MarshalText writes "off" or the turn.
func (t Turn) MarshalText() ([]byte, error) {
	if t.Duration == 0 {
		return []byte("off"), nil
	}
	return []byte(t.Duration.String()), nil
}

// InterleaveError says why this spec's targets cannot take turns of d
// (workload.interleave = d would be refused), nil when they can.
func (s Spec) InterleaveError(d time.Duration) error {
	suite, ok := workload.Lookup(s.Workload.Suite)
	if !ok {
		return errf("workload.suite", "unknown suite %q", s.Workload.Suite)
	}
	s.Workload.Interleave = Turn{Duration: d}
	return s.checkInterleave(suite)
}
