package meter

import (
	"math"
	"time"
	_ "unsafe" // for go:linkname
)

// nanotime is the runtime's monotonic clock: one vDSO call, where time.Now
// makes two (wall and monotonic). Linking it is allowed by the runtime,
// which lists it among the names other packages use.
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

// Clock reads the monotonic clock in nanoseconds on a scale fixed at its
// creation, so that per-operation timestamps cost one clock read each and
// convert to and from time.Time.
type Clock struct {
	base     time.Time
	baseNano int64
	// viaTime reads package time instead of the runtime (NewTimeClock).
	viaTime bool
}

// NewClock starts a clock now that reads the runtime's monotonic clock.
// Its base pair (a time.Time and a clock reading of the same moment) is
// taken between two clock readings, the middle of the closest of a few
// tries: a thread descheduled between the two reads of a single try (a
// busy machine) would put every conversion off by that pause.
func NewClock() Clock {
	var c Clock
	gap := int64(math.MaxInt64)
	for range 8 {
		n0 := nanotime()
		t := time.Now()
		n1 := nanotime()
		if n1-n0 < gap {
			gap, c = n1-n0, Clock{base: t, baseNano: n0 + (n1-n0)/2}
		}
		if gap < int64(time.Microsecond) {
			break
		}
	}
	return c
}

// NewTimeClock starts a clock now that reads package time's monotonic
// clock: two clock reads per reading where NewClock's takes one, but inside
// a testing/synctest bubble it follows the bubble's fake clock, as timers
// and time.Now do there, while the runtime's clock does not.
func NewTimeClock() Clock { return Clock{base: time.Now(), viaTime: true} }

// Now reads the clock.
func (c Clock) Now() int64 {
	if c.viaTime {
		return int64(time.Since(c.base))
	}
	return nanotime()
}

// At is t on the clock's scale.
func (c Clock) At(t time.Time) int64 { return c.baseNano + int64(t.Sub(c.base)) }

// Time is the clock reading ns as a time.Time.
func (c Clock) Time(ns int64) time.Time { return c.base.Add(time.Duration(ns - c.baseNano)) }
