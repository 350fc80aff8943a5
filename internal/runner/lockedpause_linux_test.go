package runner

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestLockedPauseStaysLocked yields a worker locked to its thread, as a
// locked worker's loop does: the yield may move it to another thread, but
// it comes back locked to that one, so that while it sleeps no other
// goroutine runs on that thread.
func TestLockedPauseStaysLocked(t *testing.T) {
	var quit atomic.Bool
	var watch, seen atomic.Int64
	defer quit.Store(true)
	for range 4 {
		go func() {
			for !quit.Load() {
				// On the watched thread both before and after reading
				// which one it is: a goroutine moved between two reads
				// of its thread is not caught by mistake.
				a := int64(syscall.Gettid())
				if w := watch.Load(); a == w && int64(syscall.Gettid()) == w {
					seen.Store(w)
				}
				runtime.Gosched()
			}
		}()
	}
	stop := &stopper{end: func() {}}
	done := make(chan string, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		yielded := int64(0)
		for i := range 5 {
			now := yielded + yieldEvery
			watch.Store(0) // other goroutines may use the thread during the yield
			if !pause(now, now+1, &yielded, stop, true) || yielded != now {
				done <- fmt.Sprintf("pause %d did not yield (yielded = %d, want %d)", i, yielded, now)
				return
			}
			tid := int64(syscall.Gettid())
			seen.Store(0)
			watch.Store(tid)
			time.Sleep(20 * time.Millisecond)
			if seen.Load() == tid {
				done <- fmt.Sprintf("after pause %d another goroutine ran on the worker's thread %d: not locked", i, tid)
				return
			}
		}
		done <- ""
	}()
	if msg := <-done; msg != "" {
		t.Fatal(msg)
	}
}
