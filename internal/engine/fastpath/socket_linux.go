//go:build linux

// The fast path's blocking sockets: Dial returns a net.Conn whose reads and
// writes are plain blocking system calls on the socket, for database clients that do one
// request and wait for its answer (a point query is a ~20 us round trip).
//
// Go's own net.Conn is non-blocking underneath: a read that finds no data
// parks the goroutine and wakes it through the network poller, which on a
// 2-core loopback benchmark costs the client several microseconds of CPU and
// latency per query more than the blocking reads of libpq or libmysqlclient
// (that is, than sysbench). With these sockets a waiting worker holds its OS
// thread, as a C client's thread does, and the runtime hands the processor
// to other goroutines while it waits.
//
// A goroutine that only makes blocking system calls never passes through
// the Go scheduler, and Go's monitor takes its processor by force after
// 10 ms; so a Conn passes through it itself, after a request every 8 ms
// (unless its worker does so, engine.WithWorkerPasses) and whenever a read
// has waited a slice with nothing to read (waitSlice).
//
// Deadlines are emulated: when a deadline passes, the socket is shut down,
// which ends a read or write in progress with a timeout error and leaves the
// connection unusable, as a cancelled query does in the drivers.

package fastpath

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"benchlab/internal/engine"
)

// Supported is true: the fast path runs on Linux.
const Supported = true

// Dial connects like net.Dialer.DialContext and returns a blocking Conn, or
// Go's own conn (whose passed deadline holds, polledConn) when ctx carries
// engine.WithPolledIO (the runner sets it
// when workers outnumber both the processors and eight per CPU: a thread
// blocked in a read holds a processor, and with many more workers than
// CPUs the poller's shared threads cost less, 64 threads on 2 CPUs here;
// see the runner's ioPlan).
// Its signature matches pgconn's DialFunc.
func Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	if engine.PolledIO(ctx) {
		return newPolledConn(c), nil
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return c, nil // not a socket we can take over; keep Go's conn
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("fastpath: %w", err)
	}
	// A dup of the socket that Go's network poller never sees. (os.File
	// from conn.File() registers its fd with the poller, whose thread was
	// then woken by every answer: one more context switch per query.)
	fd := -1
	derr := raw.Control(func(s uintptr) {
		r, _, e := syscall.Syscall(syscall.SYS_FCNTL, s, syscall.F_DUPFD_CLOEXEC, 0)
		if e != 0 {
			err = e
			return
		}
		fd = int(r)
	})
	local, remote := c.LocalAddr(), c.RemoteAddr()
	c.Close()
	if err = cmp.Or(derr, err); err == nil {
		err = syscall.SetNonblock(fd, false)
	}
	if err == nil {
		tv := syscall.NsecToTimeval(int64(waitSlice))
		err = syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv)
	}
	if err != nil {
		if fd >= 0 {
			syscall.Close(fd)
		}
		return nil, fmt.Errorf("fastpath: take over the socket: %w", err)
	}
	return &Conn{fd: fd, local: local, remote: remote, yielded: nanotime(), workerPasses: engine.WorkerPasses(ctx)}, nil
}

// Conn is a blocking socket connection.
type Conn struct {
	fd            int // owned: closed by Close
	local, remote net.Addr

	// yielded is when a Write last passed through the Go scheduler
	// (nanotime), yields how many times it has; Writes come from
	// one goroutine at a time, as a request and its answer do.
	yielded int64
	yields  int
	// workerPasses: the worker passes through the scheduler between its
	// operations itself (engine.WithWorkerPasses), so Writes do not.
	workerPasses bool
	// slices counts the wait slices Reads have ended with nothing to read
	// (waitSlice), atomically so that a test can wait on it (one add per
	// slice of 3 ms or more).
	slices atomic.Int64

	// ended is read on every Read and Write without the lock: 0 while the
	// connection is usable, else endedExpired or endedClosed (set under mu).
	ended atomic.Uint32

	mu       sync.Mutex
	timer    *time.Timer
	expired  bool
	closed   bool
	shutdown bool
}

// Values of Conn.ended; an expired deadline is reported before a close.
const (
	endedClosed  = 1
	endedExpired = 2
)

func (c *Conn) failed() error {
	switch c.ended.Load() {
	case 0:
		return nil
	case endedClosed:
		return net.ErrClosed
	default:
		return timeoutError{}
	}
}

// Read reads with blocking system calls, each waiting at most waitSlice.
func (c *Conn) Read(b []byte) (int, error) {
	if err := c.failed(); err != nil {
		return 0, err
	}
	for {
		n, err := recv(c.fd, b)
		if err == syscall.EINTR {
			continue
		}
		if err == syscall.EAGAIN {
			// A wait slice ended with nothing to read: pass through the
			// scheduler, then wait again.
			if ferr := c.failed(); ferr != nil {
				return 0, ferr
			}
			c.slices.Add(1)
			runtime.Gosched()
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

// Write writes all of b. It first tries a send that cannot block, made as a
// raw system call that the Go scheduler does not see, so the worker keeps its
// processor (the kernel often switches to the woken server right after the
// send: through the scheduler's syscall path that cost the 2-thread point
// query 10% of its rate here); what does not fit in the socket buffer is
// written with ordinary blocking calls.
func (c *Conn) Write(b []byte) (int, error) {
	if err := c.failed(); err != nil {
		return 0, err
	}
	done := 0
	for done < len(b) {
		n, err := sendNoWait(c.fd, b[done:])
		if err == syscall.EAGAIN {
			n, err = syscall.Write(c.fd, b[done:])
		}
		if err == syscall.EINTR {
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
	c.passScheduler()
	return done, nil
}

// yieldEvery is how long a connection's Writes go without passing through
// the Go scheduler. A goroutine that only makes blocking system calls never
// does, and Go's monitor then takes its processor by force once 10 ms have
// passed (a processor's goroutine in a system call counts as running), and
// stays awake, waking every 20 us, for the next millisecond or more. The
// runner passes through the scheduler between operations, but an operation
// of many statements can outlast 10 ms: a TPC-C transaction at 8 threads
// takes about 9 ms on average here. Just after a request is sent is the
// moment to pass, as the worker is about to wait for the answer anyway.
const yieldEvery = int64(8 * time.Millisecond)

// waitSlice is the longest one blocking read waits (SO_RCVTIMEO): a read
// with nothing to read by then passes through the Go scheduler and waits
// again, so that a wait longer than Go's 10 ms (a statement waiting for a
// row lock) does not make the monitor take the worker's processor, hand it
// to another thread and then wake every 20 us for a millisecond or more.
// Measured on PostgreSQL 15's TPC-C, text protocol, 3 alternating pairs of
// 5 s windows of runs one after the other, 8 threads: the monitor's sleeps
// 16-18k a window before, about 3k after; context switches per New-Order
// 78-84 before, 71-72 after; client CPU per New-Order 1.16/0.87/1.12 ms
// before, 0.95/0.76/0.87 after. At 16 threads: sleeps 29-32k before,
// 3.7-5.5k after; CPU per New-Order 0.91/1.10/0.89 before, 0.81/1.00/0.75
// after, with 11-25% more New-Orders a second. Answers to short statements
// come long before a slice ends, and cost nothing more. The kernel counts
// the slice in its timer ticks and rounds it up: on this VM's 250 Hz kernel
// a slice of 1 to 4 ms lasts 8 ms, one of 5 to 8 ms 12 ms.
const waitSlice = 3 * time.Millisecond

// passScheduler yields the processor when yieldEvery has passed since the
// last time. Measured on PostgreSQL 15's TPC-C at 8 threads, text protocol,
// 3 alternating pairs of 5 s windows of runs one after the other: the
// monitor's sleeps went from 28.8-30.4k to 15.1-16.6k a window, context
// switches per New-Order from 81-87 to 75-78, client CPU per New-Order from
// 0.69/0.74/0.90 to 0.64/0.76/0.81 ms; the yields' thread hand-offs added
// 1.6 futex calls per New-Order. The clock read costs 36-46 ns per request.
func (c *Conn) passScheduler() {
	if c.workerPasses {
		return
	}
	if now := nanotime(); now-c.yielded >= yieldEvery {
		c.yielded = now
		c.yields++
		runtime.Gosched()
	}
}

// clockBase is the origin of nanotime's readings.
var clockBase = time.Now()

// nanotime reads the monotonic clock: time.Since on a time that has a
// monotonic reading reads only that clock, one vDSO call where time.Now
// makes two, with no link into the runtime.
func nanotime() int64 { return int64(time.Since(clockBase)) }

// Close closes the socket.
func (c *Conn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.ended.CompareAndSwap(0, endedClosed)
	if c.timer != nil {
		c.timer.Stop()
	}
	if !c.shutdown {
		// Wake a reader blocked in another goroutine before the fd goes away.
		syscall.Shutdown(c.fd, syscall.SHUT_RDWR)
		c.shutdown = true
	}
	c.mu.Unlock()
	return syscall.Close(c.fd)
}

// LocalAddr returns the local address.
func (c *Conn) LocalAddr() net.Addr { return c.local }

// RemoteAddr returns the peer's address.
func (c *Conn) RemoteAddr() net.Addr { return c.remote }

// SetDeadline arms (or, with the zero time, disarms) the deadline for both
// directions. Once it passes the connection is shut down for good: no
// later deadline, cleared or not, revives it, so a cancel's past deadline
// (engine.CallWatch) holds whatever a driver sets after it.
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
	var tm *time.Timer // read by the callback under mu, set before it is free
	tm = time.AfterFunc(d, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.timerFiredLocked(tm)
	})
	c.timer = tm
	return nil
}

// timerFiredLocked expires the connection when tm is still its deadline's
// timer: one that fired while a later SetDeadline replaced or cleared it
// (its callback waiting for mu meanwhile) is stale and does nothing.
func (c *Conn) timerFiredLocked(tm *time.Timer) {
	if !c.closed && c.timer == tm {
		c.expireLocked()
	}
}

func (c *Conn) expireLocked() {
	c.expired = true
	c.ended.Store(endedExpired)
	if !c.shutdown {
		syscall.Shutdown(c.fd, syscall.SHUT_RDWR)
		c.shutdown = true
	}
}

// SetReadDeadline sets the deadline of both directions (they share one).
func (c *Conn) SetReadDeadline(t time.Time) error { return c.SetDeadline(t) }

// SetWriteDeadline sets the deadline of both directions (they share one).
func (c *Conn) SetWriteDeadline(t time.Time) error { return c.SetDeadline(t) }

// recv reads from the socket with recvfrom(2), as libpq and libmysqlclient
// do, rather than read(2): the same wait and the same bytes, without the
// file layer's steps around the socket's (vfs_read, sock_read_iter and the
// file position lock took 80 ns of each PostgreSQL point query at 8 threads
// in a perf profile here, 2% of benchlab's kernel time per query).
func recv(fd int, b []byte) (int, error) {
	var p unsafe.Pointer
	if len(b) > 0 {
		p = unsafe.Pointer(&b[0])
	}
	r, _, e := syscall.Syscall6(syscall.SYS_RECVFROM, uintptr(fd), uintptr(p), uintptr(len(b)), 0, 0, 0)
	if e != 0 {
		return -1, e
	}
	return int(r), nil
}

// sendNoWait sends what the socket buffer takes without waiting (EAGAIN when
// it takes nothing) and without SIGPIPE, as one raw system call.
func sendNoWait(fd int, b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	r, _, e := syscall.RawSyscall6(syscall.SYS_SENDTO, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)),
		syscall.MSG_DONTWAIT|syscall.MSG_NOSIGNAL, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}
