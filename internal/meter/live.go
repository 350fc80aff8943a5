// Package meter holds the measuring instruments: lock-free per-worker
// counters for the live 1-second series, HDR latency histograms, /proc and
// perf sampling, and facts about the host. The records they produce
// (records.go: latency, efficiency, host, canaries) are defined here and
// kept by the store as they are; the instruments import nothing above them.
package meter

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// subBuckets per power of two in the live latency buckets: 16 gives a
// relative error under 6.25%, plenty for a 1-second p95 and cheap to drain.
const subBuckets = 16

// NumBuckets is the number of live latency buckets, covering 0 ns to 2^63 ns.
const NumBuckets = 61 * subBuckets

// bucketOf maps a latency in ns to its live bucket.
func bucketOf(v int64) int {
	if v < subBuckets {
		if v < 0 {
			return 0
		}
		return int(v)
	}
	shift := bits.Len64(uint64(v)) - 5 // v >> shift is in [16, 31]
	return (shift+1)*subBuckets + int(v>>shift) - subBuckets
}

// BucketUpper returns the largest latency (ns) that falls in bucket i.
func BucketUpper(i int) int64 {
	if i < subBuckets {
		return int64(i)
	}
	shift := i/subBuckets - 1
	m := int64(i%subBuckets + subBuckets)
	return (m+1)<<shift - 1
}

// Live is one worker's counters for the current interval. The worker is the
// only writer and only ever raises its running totals, with plain atomic
// stores (no locked read-modify-write on the hot path); a reporter drains it
// once per second by taking the difference from the totals it saw last. An
// operation racing a drain lands in one of the two adjacent intervals, never
// in none. Events are not counted apart: each done operation is in exactly
// one latency bucket, so the buckets' sum is the count (one atomic store
// per operation less, on a hot path that has three or four).
type Live struct {
	statements, errors, rows atomic.Int64
	maxNs                    atomic.Int64
	buckets                  [NumBuckets]atomic.Int64
	_                        [64]byte // keep neighbours off this cache line

	// The totals at the last drain; only the reporter touches them.
	seenStatements, seenErrors, seenRows int64
	seenBuckets                          [NumBuckets]int64
}

// bump adds d to a counter that only this worker writes.
func bump(c *atomic.Int64, d int64) { c.Store(c.Load() + d) }

// Record adds one finished operation.
func (l *Live) Record(lat time.Duration, statements int, rows int64, failed bool) {
	bump(&l.statements, int64(statements))
	if failed {
		// A failed operation is an error, not an event: it has no rows
		// and no latency of a done operation.
		bump(&l.errors, 1)
		return
	}
	if rows != 0 {
		bump(&l.rows, rows)
	}
	ns := int64(lat)
	if ns > l.maxNs.Load() {
		l.maxNs.Store(ns) // single writer; a concurrent drain may lose one max, which the next interval shows
	}
	bump(&l.buckets[bucketOf(ns)], 1)
}

// RecordBatch adds the operations of one batch: each latency of lat (in
// nanoseconds), their statements and rows together, and one error, for the
// last operation, when failed.
func (l *Live) RecordBatch(lat []int64, statements int, rows int64, failed bool) {
	if failed && len(lat) > 0 {
		lat = lat[:len(lat)-1]
		bump(&l.errors, 1)
	}
	bump(&l.statements, int64(statements))
	if rows != 0 {
		bump(&l.rows, rows)
	}
	high := int64(0)
	for _, ns := range lat {
		high = max(high, ns)
		bump(&l.buckets[bucketOf(ns)], 1)
	}
	if high > l.maxNs.Load() {
		l.maxNs.Store(high)
	}
}

// Window accumulates drained intervals of any number of workers.
type Window struct {
	Events, Statements, Errors, Rows int64
	Max                              time.Duration
	Buckets                          [NumBuckets]int64
}

// DrainInto moves l's counts since the last drain into w. Only one
// goroutine may drain a Live.
func (l *Live) DrainInto(w *Window) {
	delta := func(c *atomic.Int64, seen *int64) int64 {
		v := c.Load()
		d := v - *seen
		*seen = v
		return d
	}
	w.Statements += delta(&l.statements, &l.seenStatements)
	w.Errors += delta(&l.errors, &l.seenErrors)
	w.Rows += delta(&l.rows, &l.seenRows)
	if m := time.Duration(l.maxNs.Swap(0)); m > w.Max {
		w.Max = m
	}
	for i := range l.buckets {
		if v := l.buckets[i].Load(); v != l.seenBuckets[i] {
			w.Buckets[i] += v - l.seenBuckets[i]
			w.Events += v - l.seenBuckets[i]
			l.seenBuckets[i] = v
		}
	}
}

// Add merges o into w.
func (w *Window) Add(o *Window) {
	w.Events += o.Events
	w.Statements += o.Statements
	w.Errors += o.Errors
	w.Rows += o.Rows
	w.Max = max(w.Max, o.Max)
	for i, c := range o.Buckets {
		w.Buckets[i] += c
	}
}

// Quantile returns the upper bound of the bucket holding quantile q (0..1),
// capped at the interval's exact maximum; 0 when nothing was recorded.
func (w *Window) Quantile(q float64) time.Duration {
	var total int64
	for _, c := range w.Buckets {
		total += c
	}
	if total == 0 {
		return 0
	}
	rank := int64(q*float64(total) + 0.5)
	rank = max(rank, 1)
	var seen int64
	for i, c := range w.Buckets {
		seen += c
		if seen >= rank {
			return min(time.Duration(BucketUpper(i)), w.Max)
		}
	}
	return w.Max
}
