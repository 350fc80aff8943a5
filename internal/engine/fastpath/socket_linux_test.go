//go:build linux

package fastpath

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"benchlab/internal/engine"
)

// echoServer answers every line it reads on loopback with the same bytes.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(c, c) }()
		}
	}()
	return ln.Addr().String()
}

func TestRoundTripAndClose(t *testing.T) {
	c, err := Dial(context.Background(), "tcp", echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.(*Conn); !ok {
		t.Fatalf("Dial returned %T, want a blocking *Conn", c)
	}
	buf := make([]byte, 5)
	for i := 0; i < 100; i++ {
		if _, err := c.Write([]byte("hello")); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "hello" {
			t.Fatalf("round trip %d: %q %v", i, buf, err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(buf); !errors.Is(err, net.ErrClosed) {
		t.Errorf("read after close: %v", err)
	}
}

// TestDeadlineEndsBlockedRead checks that a deadline set while a read is
// blocked ends it with a timeout error, as drivers expect when a query's
// context is cancelled.
func TestDeadlineEndsBlockedRead(t *testing.T) {
	c, err := Dial(context.Background(), "tcp", echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	errc := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 1)) // nothing was sent: blocks
		errc <- err
	}()
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	c.SetDeadline(time.Now().Add(200 * time.Millisecond))
	select {
	case err := <-errc:
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("err = %v, want a timeout", err)
		}
		if el := time.Since(start); el < 150*time.Millisecond {
			t.Errorf("read ended after %s, before the deadline", el)
		}
	case <-time.After(time.Minute): // a hang guard, not a window
		t.Fatal("deadline did not end the blocked read")
	}
	// A deadline cleared before it passes leaves the conn usable: its
	// timer is dropped, and one that fires all the same is stale.
	c2, _ := Dial(context.Background(), "tcp", echoServer(t))
	defer c2.Close()
	bc := c2.(*Conn)
	bc.SetDeadline(time.Now().Add(time.Hour))
	armed := bc.timer
	bc.SetDeadline(time.Time{})
	bc.mu.Lock()
	cleared := bc.timer == nil
	bc.timerFiredLocked(armed)
	bc.mu.Unlock()
	if !cleared {
		t.Error("a cleared deadline kept its timer")
	}
	if _, err := c2.Write([]byte("x")); err != nil {
		t.Errorf("write after a cleared deadline: %v", err)
	}
}

// pollerFds returns the fds registered with this process's epoll instances
// (Go's network poller), from /proc/self/fdinfo.
func pollerFds(t *testing.T) map[int]bool {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	out := map[int]bool{}
	for _, e := range ents {
		if link, _ := os.Readlink("/proc/self/fd/" + e.Name()); link != "anon_inode:[eventpoll]" {
			continue
		}
		info, err := os.ReadFile("/proc/self/fdinfo/" + e.Name())
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(info), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "tfd:" {
				n, _ := strconv.Atoi(f[1])
				out[n] = true
			}
		}
	}
	return out
}

// TestNotInPoller checks that the blocking socket is not registered with Go's
// network poller, whose thread every answer would otherwise wake.
func TestNotInPoller(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0") // makes sure the poller exists
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if len(pollerFds(t)) == 0 {
		t.Fatal("the listener is not in the poller: cannot check")
	}
	c, err := Dial(context.Background(), "tcp", echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	bc := c.(*Conn)
	if fds := pollerFds(t); fds[bc.fd] {
		t.Errorf("fd %d of the blocking conn is registered with the poller (%v)", bc.fd, fds)
	}
}

// TestLargeWrite checks that a write larger than the socket buffers, which
// the non-blocking send cannot take at once, completes.
func TestLargeWrite(t *testing.T) {
	c, err := Dial(context.Background(), "tcp", echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	big := make([]byte, 16<<20)
	for i := range big {
		big[i] = byte(i * 7)
	}
	got := make(chan []byte, 1)
	go func() {
		b := make([]byte, len(big))
		io.ReadFull(c, b)
		got <- b
	}()
	if n, err := c.Write(big); err != nil || n != len(big) {
		t.Fatalf("write: %d of %d, %v", n, len(big), err)
	}
	select {
	case b := <-got:
		if !bytes.Equal(b, big) {
			t.Error("the echo differs from what was written")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("echo of 16 MiB not read back")
	}
}

// TestPolledIO checks that a context marked by engine.WithPolledIO gets Go's
// own (poller) conn.
func TestPolledIO(t *testing.T) {
	c, err := Dial(engine.WithPolledIO(context.Background()), "tcp", echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, ok := c.(*Conn); ok {
		t.Error("a polled context got a blocking conn")
	}
	if _, err := c.Write([]byte("hi")); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 2)
	if _, err := io.ReadFull(c, b); err != nil || string(b) != "hi" {
		t.Errorf("round trip: %q %v", b, err)
	}
}

// TestWritePassesScheduler checks that a Write passes through the Go
// scheduler once yieldEvery has gone by since the connection's last pass,
// and not before: the first Write right after Dial does not, one after a
// longer pause does, and the Write straight after it does not again.
func TestWritePassesScheduler(t *testing.T) {
	nc, err := Dial(context.Background(), "tcp", echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c := nc.(*Conn)
	buf := make([]byte, 2)
	roundTrip := func() {
		t.Helper()
		if _, err := c.Write([]byte("hi")); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			t.Fatal(err)
		}
	}
	start := nanotime()
	roundTrip()
	if c.yields != 0 && nanotime()-start < yieldEvery {
		t.Fatalf("a Write right after Dial yielded (%d)", c.yields)
	}
	time.Sleep(time.Duration(yieldEvery) + time.Millisecond)
	before := c.yields
	// The pass below happens after start, so another pass needs
	// yieldEvery to go by after start, however slow the round trips are.
	start = nanotime()
	roundTrip()
	if c.yields != before+1 {
		t.Fatalf("after %v without a pass, a Write yielded %d times, want 1", time.Duration(yieldEvery), c.yields-before)
	}
	roundTrip()
	if c.yields != before+1 && nanotime()-start < yieldEvery {
		t.Fatalf("the Write straight after a pass yielded again (%d)", c.yields-before)
	}
}

// TestLongReadWaitsInSlices checks that a Read whose answer comes after
// several wait slices returns the answer, not an error, having passed
// through the scheduler at the end of each slice, and that it does not
// spin: no slice is shorter than 1 ms. The server answers once the reader
// has ended two slices, an event, not a time, so a busy machine that
// stretches the slices changes nothing.
func TestLongReadWaitsInSlices(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	conns := make(chan *Conn, 1)
	go func() {
		s, err := ln.Accept()
		if err != nil {
			return
		}
		defer s.Close()
		buf := make([]byte, 1)
		if _, err := io.ReadFull(s, buf); err != nil {
			return
		}
		c := <-conns
		for c.slices.Load() < 2 {
			time.Sleep(time.Millisecond) // a poll, not a window
		}
		s.Write(buf)
	}()
	nc, err := Dial(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c := nc.(*Conn)
	conns <- c
	start := nanotime()
	if _, err := c.Write([]byte{'s'}); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 1)
	if _, err := io.ReadFull(c, got); err != nil || got[0] != 's' {
		t.Fatalf("answer %q, %v; want \"s\"", got, err)
	}
	took := time.Duration(nanotime() - start)
	if n := c.slices.Load(); n < 2 || n > int64(took/time.Millisecond)+1 {
		t.Errorf("a read of %v ended %d wait slices, want 2 or more and at most one a millisecond", took, n)
	}
}

// TestWorkerPassesKeepsWritesFromYielding checks that a connection dialed
// for a worker that passes through the scheduler itself
// (engine.WithWorkerPasses) never yields in its Writes.
func TestWorkerPassesKeepsWritesFromYielding(t *testing.T) {
	nc, err := Dial(engine.WithWorkerPasses(context.Background()), "tcp", echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c := nc.(*Conn)
	buf := make([]byte, 2)
	for i := 0; i < 2; i++ {
		time.Sleep(time.Duration(yieldEvery) + time.Millisecond)
		if _, err := c.Write([]byte("hi")); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			t.Fatal(err)
		}
	}
	if c.yields != 0 {
		t.Errorf("a worker-passing connection yielded %d times in its Writes, want 0", c.yields)
	}
}
