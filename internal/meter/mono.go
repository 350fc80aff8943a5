package meter

import (
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
func NewClock() Clock { return Clock{base: time.Now(), baseNano: nanotime()} }

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
