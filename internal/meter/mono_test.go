package meter

import (
	"testing"
	"testing/synctest"
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

// TestTimeClockFollowsFakeTime checks that a clock made by NewTimeClock
// reads the fake time of a testing/synctest bubble, exactly, and converts
// it to and from time.Time as NewClock's does.
func TestTimeClockFollowsFakeTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := NewTimeClock()
		start := time.Now()
		a := c.Now()
		time.Sleep(time.Hour)
		b := c.Now()
		if d := time.Duration(b - a); d != time.Hour {
			t.Errorf("an hour of fake time read as %s", d)
		}
		if got := c.Time(b); !got.Equal(start.Add(time.Hour)) {
			t.Errorf("Time(Now()) = %s, want %s", got, start.Add(time.Hour))
		}
		if c.At(time.Now()) != b {
			t.Errorf("At(time.Now()) = %d, want Now() = %d", c.At(time.Now()), b)
		}
	})
}
