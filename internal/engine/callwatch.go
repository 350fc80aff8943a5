package engine

import (
	"context"
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
type CallWatch struct {
	watched context.Context
	unwatch func() bool
	calling atomic.Bool
}

// Enter starts a call under ctx on conn (nil: nothing to interrupt); it
// fails, starting nothing, when ctx has ended. Leave ends the call.
func (w *CallWatch) Enter(ctx context.Context, conn Deadliner) error {
	if ctx != w.watched {
		w.Stop()
		w.watched = ctx
		if ctx.Done() != nil && conn != nil {
			w.unwatch = context.AfterFunc(ctx, func() {
				if w.calling.Load() {
					conn.SetDeadline(time.Unix(1, 0))
				}
			})
		}
	}
	w.calling.Store(true)
	select {
	case <-ctx.Done():
		w.calling.Store(false)
		return context.Cause(ctx)
	default:
		return nil
	}
}

// Leave ends the call Enter began.
func (w *CallWatch) Leave() { w.calling.Store(false) }

// Stop ends the watch of the last context (when the connection closes).
func (w *CallWatch) Stop() {
	if w.unwatch != nil {
		w.unwatch()
		w.unwatch = nil
	}
}
