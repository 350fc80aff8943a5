//go:build linux

package fastpath

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"testing"
	"time"

	"benchlab/internal/engine"
)

// quietServer accepts connections on loopback and hands each to the test,
// which writes on it when it wants an answer to arrive.
func quietServer(t *testing.T) (addr string, conns chan net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conns = make(chan net.Conn, 1000)
	t.Cleanup(func() {
		ln.Close()
		close(conns)
		for c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns <- c
		}
	}()
	return ln.Addr().String(), conns
}

// TestCallWatchSparesALaterCall forces the order a busy machine makes: a
// worker's context ends after its call returned, and the runtime runs the
// context's watch only once the next call, under another context, has
// begun. That call must not be interrupted. GOMAXPROCS(1) makes the order
// certain: the watch's goroutine cannot run until the test's yields.
func TestCallWatchSparesALaterCall(t *testing.T) {
	addr, conns := quietServer(t)
	c, err := Dial(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	srv := <-conns
	var w engine.CallWatch
	defer w.Stop()
	first, endFirst := context.WithCancel(context.Background())
	if err := w.Enter(first, c); err != nil {
		t.Fatal(err)
	}
	w.Leave()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	runtime.Gosched() // a fresh time slice: nothing preempts the next lines
	endFirst()        // its watch's goroutine is made runnable, not run
	second, endSecond := context.WithCancel(context.Background())
	defer endSecond()
	if err := w.Enter(second, c); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		runtime.Gosched() // the first context's watch runs now
	}
	if _, err := srv.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1)
	_, err = c.Read(buf)
	w.Leave()
	if err != nil {
		t.Fatalf("a call under a live context failed: %v (the end of an earlier context interrupted it)", err)
	}
}

// TestCallWatchEndsEveryCall cancels calls blocked on a server that never
// answers, the cancel racing the call's start in each of many rounds, and
// checks that every call ends: refused at Enter, or its read ended with a
// timeout; never a read that waits on.
func TestCallWatchEndsEveryCall(t *testing.T) {
	addr, conns := quietServer(t)
	guard := time.After(2 * time.Minute) // a hang guard, not a window
	for round := range 200 {
		c, err := Dial(context.Background(), "tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		<-conns
		var w engine.CallWatch
		ctx, cancel := context.WithCancel(context.Background())
		go cancel()
		ended := make(chan error, 1)
		go func() {
			if err := w.Enter(ctx, c); err != nil {
				ended <- err
				return
			}
			_, err := c.Read(make([]byte, 1))
			w.Leave()
			ended <- err
		}()
		select {
		case err = <-ended:
		case <-guard:
			t.Fatalf("round %d: the cancel did not end the call", round)
		}
		if !errors.Is(err, context.Canceled) && !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("round %d: the call ended with %v; want context.Canceled or a timeout", round, err)
		}
		w.Stop()
		c.Close()
	}
}

// TestPassedDeadlineHolds checks, on both kinds of socket Dial returns
// (benchlab's blocking one, and Go's when workers wait through the poller),
// that a connection whose deadline passed stays ended whatever is set
// after: a driver that sets its own deadlines after a cancel's (as
// go-sql-driver does before every read and write when a DSN sets
// readTimeout or writeTimeout) cannot revive the call. The read would
// otherwise wait an hour; the hang guard fails it long before.
func TestPassedDeadlineHolds(t *testing.T) {
	for _, polled := range []bool{false, true} {
		ctx := context.Background()
		if polled {
			ctx = engine.WithPolledIO(ctx)
		}
		addr, conns := quietServer(t)
		c, err := Dial(ctx, "tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		<-conns
		c.SetDeadline(time.Unix(1, 0))
		c.SetReadDeadline(time.Now().Add(time.Hour))
		c.SetWriteDeadline(time.Now().Add(time.Hour))
		c.SetDeadline(time.Time{})
		c.SetReadDeadline(time.Now().Add(time.Hour))
		read := make(chan error, 1)
		go func() {
			_, err := c.Read(make([]byte, 1))
			read <- err
		}()
		select {
		case err = <-read:
		case <-time.After(2 * time.Minute): // a hang guard, not a window
			t.Fatalf("polled %v: the read waited on past the passed deadline", polled)
		}
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("polled %v: read after a passed deadline, then later and cleared ones: %v; want a timeout", polled, err)
		}
		if _, err := c.Write([]byte("x")); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("polled %v: write after a passed deadline: %v; want a timeout", polled, err)
		}
	}
}

// TestPolledCancelRacesDriverDeadline plays, on Go's socket, a cancel's
// past deadline racing a driver that re-arms a read deadline of an hour
// before each read (go-sql-driver with readTimeout=1h): in every round the
// read ends with a timeout, whichever of the two came first.
func TestPolledCancelRacesDriverDeadline(t *testing.T) {
	addr, conns := quietServer(t)
	guard := time.After(2 * time.Minute) // a hang guard, not a window
	for round := range 200 {
		c, err := Dial(engine.WithPolledIO(context.Background()), "tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		<-conns
		var w engine.CallWatch
		ctx, cancel := context.WithCancel(context.Background())
		ended := make(chan error, 1)
		go func() {
			if err := w.Enter(ctx, c); err != nil {
				ended <- err
				return
			}
			defer w.Leave()
			buf := make([]byte, 1)
			for {
				c.SetReadDeadline(time.Now().Add(time.Hour))
				if _, err := c.Read(buf); err != nil {
					ended <- err
					return
				}
			}
		}()
		go cancel()
		select {
		case err = <-ended:
		case <-guard:
			t.Fatalf("round %d: the cancel did not end the read; the driver's deadline replaced it", round)
		}
		if !errors.Is(err, context.Canceled) && !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("round %d: the call ended with %v; want context.Canceled or a timeout", round, err)
		}
		w.Stop()
		c.Close()
	}
}

// TestStaleDeadlineTimer plays a deadline's timer that fired while a later
// SetDeadline replaced it (its callback waiting for the lock): it must not
// end the connection; the current timer must.
func TestStaleDeadlineTimer(t *testing.T) {
	addr, conns := quietServer(t)
	nc, err := Dial(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	srv := <-conns
	c := nc.(*Conn)
	c.SetDeadline(time.Now().Add(time.Hour))
	stale := c.timer
	c.SetDeadline(time.Now().Add(2 * time.Hour))
	c.mu.Lock()
	c.timerFiredLocked(stale)
	c.mu.Unlock()
	srv.Write([]byte("x"))
	if _, err := io.ReadFull(c, make([]byte, 1)); err != nil {
		t.Fatalf("a replaced deadline's timer ended the connection: %v", err)
	}
	c.mu.Lock()
	c.timerFiredLocked(c.timer)
	c.mu.Unlock()
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("the current deadline's timer: read gave %v; want a timeout", err)
	}
}
