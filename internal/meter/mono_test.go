package meter

import (
	"testing"
	"testing/synctest"
	"time"
)

// TestClock checks that the clock advances as package time's does and
// that its conversion of a time.Time read between two of its readings
// falls between them, each to within a millisecond (the clock's base pair
// is read a few ns apart), however long the machine keeps the test from
// running between the readings.
func TestClock(t *testing.T) {
	c := NewClock()
	t0 := time.Now()
	a := c.Now()
	time.Sleep(20 * time.Millisecond)
	b := c.Now()
	t1 := time.Since(t0)
	if d := time.Duration(b - a); d < 20*time.Millisecond || d > t1+time.Millisecond {
		t.Errorf("20 ms sleep measured as %s, package time saw %s around it", d, t1)
	}
	before := c.Now()
	now := time.Now()
	after := c.Now()
	if at := c.At(now); at < before-int64(time.Millisecond) || at > after+int64(time.Millisecond) {
		t.Errorf("At(time.Now()) is %s after the reading before it and %s before the one after it",
			time.Duration(at-before), time.Duration(after-at))
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
