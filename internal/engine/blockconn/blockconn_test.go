package blockconn

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
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
	case <-time.After(3 * time.Second):
		t.Fatal("deadline did not end the blocked read")
	}
	// A cleared deadline before it passes leaves the conn usable.
	c2, _ := Dial(context.Background(), "tcp", echoServer(t))
	defer c2.Close()
	c2.SetDeadline(time.Now().Add(50 * time.Millisecond))
	c2.SetDeadline(time.Time{})
	time.Sleep(100 * time.Millisecond)
	if _, err := c2.Write([]byte("x")); err != nil {
		t.Errorf("write after a cleared deadline: %v", err)
	}
}
