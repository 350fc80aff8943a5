package profile

import "sort"

// Window is a span of perf's clock in nanoseconds (Now, At): From <= t <
// To, or no end when To is 0.
type Window struct{ From, To int64 }

// Windows are disjoint spans in time order: the measured part of a step
// (one window), or the turns of one target of an interleaved step (many),
// whose samples alone are that target's.
type Windows []Window

// Span is the one window from from to to (to 0: no end).
func Span(from, to int64) Windows { return Windows{{from, to}} }

// holding returns the window that holds t.
func (ws Windows) holding(t int64) (Window, bool) {
	// The first window that ends after t (or never ends) holds t if it has
	// begun by then.
	i := sort.Search(len(ws), func(i int) bool { return ws[i].To == 0 || ws[i].To > t })
	if i < len(ws) && ws[i].From <= t {
		return ws[i], true
	}
	return Window{}, false
}
