// Package blockconn provides a net.Conn whose reads and writes are plain
// blocking system calls on the socket, for database clients that do one
// request and wait for its answer (a point query is a ~20 us round trip).
//
// Go's own net.Conn is non-blocking underneath: a read that finds no data
// parks the goroutine and wakes it through the network poller, which on a
// 2-core loopback benchmark costs the client several microseconds of CPU and
// latency per query more than the blocking reads of libpq or libmysqlclient
// (that is, than sysbench). With blockconn a waiting worker holds its OS
// thread, as a C client's thread does, and the runtime hands the processor
// to other goroutines while it waits.
//
// Deadlines are emulated: when a deadline passes, the socket is shut down,
// which ends a read or write in progress with a timeout error and leaves the
// connection unusable, as a cancelled query does in the drivers.
package blockconn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
)

// Dial connects like net.Dialer.DialContext and returns a blocking conn.
// Its signature matches pgconn's DialFunc.
func Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	type filer interface{ File() (*os.File, error) }
	fc, ok := c.(filer)
	if !ok {
		return c, nil // not a socket we can take over; keep Go's conn
	}
	f, err := fc.File() // a dup of the socket, in blocking mode
	local, remote := c.LocalAddr(), c.RemoteAddr()
	c.Close()
	if err != nil {
		return nil, fmt.Errorf("blockconn: %w", err)
	}
	return &Conn{f: f, fd: int(f.Fd()), local: local, remote: remote}, nil
}

// Conn is a blocking socket connection.
type Conn struct {
	f             *os.File // owns fd
	fd            int
	local, remote net.Addr

	mu       sync.Mutex
	timer    *time.Timer
	expired  bool
	closed   bool
	shutdown bool
}

// timeoutError is returned after a deadline passed.
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout (blockconn deadline)" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }
func (timeoutError) Unwrap() error   { return os.ErrDeadlineExceeded }

func (c *Conn) failed() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.expired {
		return timeoutError{}
	}
	if c.closed {
		return net.ErrClosed
	}
	return nil
}

// Read reads with one blocking system call.
func (c *Conn) Read(b []byte) (int, error) {
	if err := c.failed(); err != nil {
		return 0, err
	}
	for {
		n, err := syscall.Read(c.fd, b)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if ferr := c.failed(); ferr != nil {
			return max(n, 0), ferr
		}
		if err != nil {
			return 0, &net.OpError{Op: "read", Net: "tcp", Source: c.local, Addr: c.remote, Err: err}
		}
		if n == 0 && len(b) > 0 {
			return 0, io.EOF
		}
		return n, nil
	}
}

// Write writes all of b with blocking system calls.
func (c *Conn) Write(b []byte) (int, error) {
	if err := c.failed(); err != nil {
		return 0, err
	}
	done := 0
	for done < len(b) {
		n, err := syscall.Write(c.fd, b[done:])
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if ferr := c.failed(); ferr != nil {
			return done, ferr
		}
		if err != nil {
			return done, &net.OpError{Op: "write", Net: "tcp", Source: c.local, Addr: c.remote, Err: err}
		}
		done += n
	}
	return done, nil
}

// Close closes the socket.
func (c *Conn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	if c.timer != nil {
		c.timer.Stop()
	}
	if !c.shutdown {
		// Wake a reader blocked in another goroutine before the fd goes away.
		syscall.Shutdown(c.fd, syscall.SHUT_RDWR)
		c.shutdown = true
	}
	c.mu.Unlock()
	return c.f.Close()
}

// LocalAddr returns the local address.
func (c *Conn) LocalAddr() net.Addr { return c.local }

// RemoteAddr returns the peer's address.
func (c *Conn) RemoteAddr() net.Addr { return c.remote }

// SetDeadline arms (or, with the zero time, disarms) the deadline for both
// directions. Once it passes the connection is shut down for good.
func (c *Conn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return net.ErrClosed
	}
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
	if t.IsZero() || c.expired {
		return nil
	}
	d := time.Until(t)
	if d <= 0 {
		c.expireLocked()
		return nil
	}
	c.timer = time.AfterFunc(d, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if !c.closed && c.timer != nil {
			c.expireLocked()
		}
	})
	return nil
}

func (c *Conn) expireLocked() {
	c.expired = true
	if !c.shutdown {
		syscall.Shutdown(c.fd, syscall.SHUT_RDWR)
		c.shutdown = true
	}
}

// SetReadDeadline sets the deadline of both directions (they share one).
func (c *Conn) SetReadDeadline(t time.Time) error { return c.SetDeadline(t) }

// SetWriteDeadline sets the deadline of both directions (they share one).
func (c *Conn) SetWriteDeadline(t time.Time) error { return c.SetDeadline(t) }
