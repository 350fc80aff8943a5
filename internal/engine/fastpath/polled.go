package fastpath

import (
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// polledConn is Go's own socket (the runner's polled IO, engine.WithPolledIO)
// with the one rule benchlab's blocking sockets keep (Conn.SetDeadline): a
// deadline that has passed ends the connection for good. A cancel ends a
// call in progress by putting the socket's deadline in the past
// (engine.CallWatch); go-sql-driver, when a DSN sets readTimeout or
// writeTimeout, sets a deadline of its own before every read and write of
// the call, and on Go's socket that later deadline would replace the past
// one, so the cancel would wait up to the DSN's timeout (an hour, if the
// DSN says so). Here any deadline set after a passed one is ignored, and
// every read and write after it fails at once with a timeout: the cancel
// holds whatever the driver does, and the connection is lost, as with the
// blocking sockets.
type polledConn struct {
	net.Conn
	// expired is read on every Read and Write without the lock, and set
	// under it.
	expired atomic.Bool
	mu      sync.Mutex
}

// newPolledConn wraps c, a socket Go's poller serves.
func newPolledConn(c net.Conn) *polledConn { return &polledConn{Conn: c} }

// note marks the connection ended when err is a passed deadline's.
func (c *polledConn) note(err error) {
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		c.mu.Lock()
		c.expired.Store(true)
		c.mu.Unlock()
	}
}

// Read reads from the socket; after a passed deadline it fails at once.
func (c *polledConn) Read(b []byte) (int, error) {
	if c.expired.Load() {
		return 0, timeoutError{}
	}
	n, err := c.Conn.Read(b)
	c.note(err)
	return n, err
}

// Write writes to the socket; after a passed deadline it fails at once.
func (c *polledConn) Write(b []byte) (int, error) {
	if c.expired.Load() {
		return 0, timeoutError{}
	}
	n, err := c.Conn.Write(b)
	c.note(err)
	return n, err
}

// set applies one of the socket's deadline setters unless a deadline has
// passed; a time already past marks the connection ended. The lock orders
// a cancel's past deadline and a driver's later one: whichever comes
// second, the past one holds.
func (c *polledConn) set(t time.Time, apply func(time.Time) error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.expired.Load() {
		return nil
	}
	if !t.IsZero() && !t.After(time.Now()) {
		c.expired.Store(true)
	}
	return apply(t)
}

// SetDeadline sets both directions' deadline (see polledConn).
func (c *polledConn) SetDeadline(t time.Time) error { return c.set(t, c.Conn.SetDeadline) }

// SetReadDeadline sets the read deadline (see polledConn).
func (c *polledConn) SetReadDeadline(t time.Time) error { return c.set(t, c.Conn.SetReadDeadline) }

// SetWriteDeadline sets the write deadline (see polledConn).
func (c *polledConn) SetWriteDeadline(t time.Time) error { return c.set(t, c.Conn.SetWriteDeadline) }

// timeoutError is returned after a deadline passed, by both kinds of
// socket.
type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout (fastpath deadline)" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }
func (timeoutError) Unwrap() error   { return os.ErrDeadlineExceeded }
