package metrics

import (
	"testing"
	"time"
)

// TestClock checks that the clock's readings and its conversion of
// time.Time agree to within a millisecond, and that it advances.
func TestClock(t *testing.T) {
	c := NewClock()
	a := c.Now()
	time.Sleep(20 * time.Millisecond)
	b := c.Now()
	if d := time.Duration(b - a); d < 20*time.Millisecond || d > 2*time.Second {
		t.Errorf("20 ms sleep measured as %s", d)
	}
	now := time.Now()
	// The clock's base pair is read a few ns apart, so the two may differ
	// slightly either way.
	if d := time.Duration(c.Now() - c.At(now)); d < -time.Millisecond || d > time.Millisecond {
		t.Errorf("At(time.Now()) is %s from Now()", d)
	}
	if d := c.At(now.Add(time.Hour)) - c.At(now); time.Duration(d) != time.Hour {
		t.Errorf("an hour later converts to %s later", time.Duration(d))
	}
}
