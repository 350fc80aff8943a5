package insertbench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/workload"
)

// queueDepth is how far the inserter may run ahead of the deleter: the
// original client's statement queues hold 8 statements (docs/method.md 1.4).
const queueDepth = 8

// resyncEvery is how many deletes pass between reads of the real minimum id
// (iibench.py --resync_get_min, default 1000).
const resyncEvery = 1000

// maxEvery is how many point queries pass between reads of the newest id.
const maxEvery = 100

// client is what one client's roles share during a step: the tokens that
// keep its inserter and deleter within queueDepth statements of each other,
// and the delete frontier that bounds its point queries from below.
type client struct {
	room, ready chan struct{}
	frontier    atomic.Int64
}

func newClient() *client {
	c := &client{room: make(chan struct{}, queueDepth), ready: make(chan struct{}, queueDepth)}
	for i := 0; i < queueDepth; i++ {
		c.room <- struct{}{}
	}
	return c
}

// clients holds the per-client state of one step. The step's first role
// creates each client's state afresh (the runner creates workers role by
// role, before any starts), so a step planned once and run in several cells
// never carries state from one run into the next.
type clients struct {
	mu sync.Mutex
	m  map[int]*client
}

func (c *clients) fresh(id int) *client {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[int]*client{}
	}
	c.m[id] = newClient()
	return c.m[id]
}

func (c *clients) get(id int) (*client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cl, ok := c.m[id]
	if !ok {
		return nil, fmt.Errorf("insertbench: client %d has no state; its first role did not start", id)
	}
	return cl, nil
}

func sqlOf(db engine.DB) (engine.SQL, error) { return workload.SQLOf(db, "insertbench") }

// readID runs a min/max query; an empty table (NULL) gives 0, as iibench.py
// treats it.
func readID(ctx context.Context, c engine.Conn, sql string) (int64, error) {
	rows, err := c.Values(ctx, sql)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", sql, err)
	}
	if len(rows) == 0 || len(rows[0]) == 0 || rows[0][0] == "" {
		return 0, nil
	}
	v, err := strconv.ParseInt(rows[0][0], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not an id", sql, rows[0][0])
	}
	return v, nil
}

// inserter runs one client's multi-row INSERTs, sent as text as the original
// client sends them. With a deleter it waits for room in the queue first,
// and hands the deleter one delete per insert.
type inserter struct {
	conn   engine.Conn
	gen    *rowGen
	prefix string
	rpc    int
	cl     *client
	// then runs after the insert in the same operation (l.x: build the
	// indexes); rows is what the operation reports then (indexed rows).
	then []string
	rows int64
}

func (w *inserter) Wait(ctx context.Context) bool {
	if w.cl == nil {
		return true
	}
	select {
	case <-w.cl.room:
		return true
	case <-ctx.Done():
		return false
	}
}

func (w *inserter) Op(ctx context.Context) (workload.Tally, error) {
	sql := w.gen.insert(w.prefix, w.rpc, time.Now())
	n, err := w.conn.Exec(ctx, sql)
	if w.cl != nil {
		// The delete follows every insert attempt, as the original
		// statement maker queues both at once.
		w.cl.ready <- struct{}{}
	}
	t := workload.Tally{Statements: 1, Rows: n}
	if err != nil {
		return t, err
	}
	for _, s := range w.then {
		t.Statements++
		if _, err := w.conn.Exec(ctx, s); err != nil {
			return t, fmt.Errorf("%s: %w", s, err)
		}
	}
	if w.then != nil {
		t.Rows = w.rows
	}
	return t, nil
}

func (w *inserter) Close() error { return w.conn.Close() }

// deleter removes the oldest rows of one client's table, one DELETE per
// INSERT, so the table is a queue of constant size (docs/method.md 1.6).
type deleter struct {
	conn  engine.Conn
	del   engine.Stmt
	table string
	rpc   int64
	cl    *client
	min   int64
	n     int64
}

// Wait blocks until the inserter has done an insert this deleter has not yet
// followed, and reads the real minimum id on the first delete and every
// resyncEvery deletes, outside the timed operation.
func (w *deleter) Wait(ctx context.Context) bool {
	select {
	case <-w.cl.ready:
	case <-ctx.Done():
		return false
	}
	if w.n%resyncEvery == 0 {
		if m, err := readID(ctx, w.conn, MinSQL(w.table)); err == nil {
			w.min = m
			w.cl.frontier.Store(m)
		}
	}
	w.n++
	return true
}

func (w *deleter) Op(ctx context.Context) (workload.Tally, error) {
	n, err := w.del.Exec(ctx, w.min)
	w.min += w.rpc
	w.cl.frontier.Store(w.min)
	w.cl.room <- struct{}{}
	return workload.Tally{Statements: 1, Rows: n}, err
}

func (w *deleter) Close() error {
	w.del.Close()
	return w.conn.Close()
}

// querier runs one client's range or point queries back to back.
type querier struct {
	conn  engine.Conn
	r     *rand.Rand
	point bool
	// stmts are the three range queries, or the point query.
	stmts []engine.Stmt
	table string
	cl    *client
	max   int64
	n     int64
	args  []any
}

// Wait re-reads the newest id every maxEvery point queries, outside the
// timed operation (the original client does it in the query loop).
func (w *querier) Wait(ctx context.Context) bool {
	if w.point && w.n%maxEvery == 0 {
		if m, err := readID(ctx, w.conn, MaxSQL(w.table)); err == nil {
			w.max = m
		}
	}
	w.n++
	return true
}

func (w *querier) Op(ctx context.Context) (workload.Tally, error) {
	if w.point {
		lo, hi := w.cl.frontier.Load(), w.max
		w.args = w.args[:0]
		for i := 0; i < rowsPerQuery; i++ {
			id := lo
			if hi > lo {
				id = lo + w.r.Int64N(hi-lo)
			}
			w.args = append(w.args, id)
		}
		n, err := w.stmts[0].Query(ctx, w.args...)
		return workload.Tally{Statements: 1, Rows: n}, err
	}
	i := w.r.IntN(len(rangeQueries))
	n, err := w.stmts[i].Query(ctx, w.r.Int64N(rangeQueries[i].max))
	return workload.Tally{Statements: 1, Rows: n}, err
}

func (w *querier) Close() error {
	for _, s := range w.stmts {
		s.Close()
	}
	return w.conn.Close()
}
