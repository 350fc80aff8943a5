package engine

import (
	"context"
	"runtime"
	"sync/atomic"
	"time"
)

// Deadliner is a connection whose blocked reads and writes a past deadline
// ends (net.Conn, benchlab's blocking sockets).
type Deadliner interface{ SetDeadline(time.Time) error }

// CallWatch lets a worker's context end a call that does not read it
// itself (the short statements written on benchlab's own socket): when the
// context ends during a call, the socket gets a past deadline, so a hung
// server cannot hold the worker past its operation timeout or an
// interrupt. An idle connection is left alone, so its session still ends
// cleanly. A worker passes one context to all its operations, so the watch
// is registered once per context, with no timer per call.
//
// A context's end interrupts only a call made under that context: its
// watch may run late (a goroutine the runtime starts when the context
// ends, which a busy machine schedules when it can), when that call has
// returned and the next one runs under a new context (the runner's after
// an operation timeout), and that call is left alone. The deadline is set
// strictly inside the call it interrupts: Leave waits for an interrupt
// under way. The sockets fastpath.Dial returns keep a passed deadline for
// good, its blocking ones and Go's alike, so a driver that sets a deadline
// of its own later in the call (go-sql-driver with a DSN's readTimeout)
// cannot push the interrupt out (fastpath.Conn and its polled sockets).
type CallWatch struct {
	watched context.Context
	entry   *watchEntry // watched's, the token of the calls made under it
	unwatch func() bool
	// call is the entry of the call under way, nil between calls, or
	// interrupting while a context's end sets the deadline.
	call atomic.Pointer[watchEntry]
}

// watchEntry is one watched context's: calls under it store it in
// CallWatch.call, and its end interrupts only those.
type watchEntry struct{ conn Deadliner }

// interrupting marks CallWatch.call while a deadline is being set.
var interrupting = &watchEntry{}

// Enter starts a call under ctx on conn (nil: nothing to interrupt); it
// fails, starting nothing, when ctx has ended. Leave ends the call.
func (w *CallWatch) Enter(ctx context.Context, conn Deadliner) error {
	if ctx != w.watched {
		w.Stop()
		w.watched = ctx
		e := &watchEntry{conn: conn}
		w.entry = e
		if ctx.Done() != nil && conn != nil {
			w.unwatch = context.AfterFunc(ctx, func() { w.interrupt(e) })
		}
	}
	w.call.Store(w.entry)
	select {
	case <-ctx.Done():
		w.Leave()
		return context.Cause(ctx)
	default:
		return nil
	}
}

// interrupt sets a past deadline on e's connection if a call under e is
// under way.
func (w *CallWatch) interrupt(e *watchEntry) {
	if w.call.CompareAndSwap(e, interrupting) {
		e.conn.SetDeadline(time.Unix(1, 0))
		w.call.Store(e)
	}
}

// Leave ends the call Enter began, once an interrupt under way is done.
func (w *CallWatch) Leave() {
	for {
		e := w.call.Load()
		if e != interrupting && w.call.CompareAndSwap(e, nil) {
			return
		}
		runtime.Gosched()
	}
}

// Stop ends the watch of the last context (when the connection closes).
func (w *CallWatch) Stop() {
	if w.unwatch != nil {
		w.unwatch()
		w.unwatch = nil
	}
}
