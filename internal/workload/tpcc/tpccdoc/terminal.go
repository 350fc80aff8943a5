package tpccdoc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"benchlab/internal/engine"
	"benchlab/internal/engine/docdb"
	"benchlab/internal/workload"
	g "benchlab/internal/workload/tpcc/tpccgen"
)

// Facts of a document terminal's step result, beside the SQL suite's:
// FactDocument is 1, the others say which of py-tpcc's options ran (1 on,
// 0 off).
const (
	FactDocument      = "tpcc_document"
	FactDenormalized  = "tpcc_denormalized"
	FactTransactions  = "tpcc_transactions"
	FactFindAndModify = "tpcc_find_and_modify"
	// FactScaleFactor is py-tpcc's scale factor (1: the full population).
	FactScaleFactor = "tpcc_scalefactor"
)

// Terminal is one TPC-C terminal on a client of its own: a home warehouse
// and a district of its own for Stock-Level, as the SQL terminals.
type Terminal struct {
	client   *mongo.Client
	db       *mongo.Database
	cfg      Config
	r        *g.Rand
	w        int
	district int
	facts    map[string]float64
}

// NewTerminal connects terminal id. Transactions on a server without
// them is an error naming the option.
func NewTerminal(ctx context.Context, db engine.DB, cfg Config, id int, seed uint64, facts map[string]float64) (*Terminal, error) {
	d, err := docdb.Of(db, "tpcc terminal")
	if err != nil {
		return nil, err
	}
	if cfg.Transactions && !d.Transactions() {
		return nil, errors.New("tpcc.transactions: the server runs no multi-document transactions " +
			"(they need a replica set or a sharded cluster, and FerretDB v1 has none); set transactions = false")
	}
	client, err := d.Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("tpcc terminal: connect: %w", err)
	}
	f := map[string]float64{FactDocument: 1, FactDenormalized: b2f(cfg.Denormalize), FactTransactions: b2f(cfg.Transactions),
		FactFindAndModify: b2f(cfg.FindAndModify), FactScaleFactor: cfg.Scale.Factor}
	for k, v := range facts {
		f[k] = v
	}
	return &Terminal{client: client, db: database(d, client, cfg), cfg: cfg, r: g.NewRand(seed),
		w: id%cfg.Warehouses + 1, district: id/cfg.Warehouses%g.DistrictsPerWarehouse + 1, facts: f}, nil
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Facts are the options the terminal ran with, kept with the step's result.
func (t *Terminal) Facts() map[string]float64 { return t.facts }

// Kinds names the transactions, in the order of Tally.Kind.
func (t *Terminal) Kinds() []string { return g.Kinds }

// Close disconnects the terminal's client.
func (t *Terminal) Close() error { return t.client.Disconnect(context.Background()) }

// errConflict is a counter another terminal moved between a read and the
// write that depended on it (findAndModify off, no transactions): the
// transaction runs again.
var errConflict = errors.New("conflict: another terminal changed the row between the read and the write")

// errRollback is New-Order's business rollback (an unused item).
var errRollback = errors.New("rollback")

// errNoDoc is a document the population guarantees but was not found.
var errNoDoc = errors.New("tpcc: no document where the population has one")

// conflicted reports whether err is worth another try: a counter that
// moved, or a transaction the server aborted as transient.
func conflicted(err error) bool {
	if errors.Is(err, errConflict) {
		return true
	}
	var le mongo.LabeledError
	return errors.As(err, &le) && le.HasErrorLabel("TransientTransactionError")
}

// Op runs one transaction of the mix (tpccgen.Pick), run again with the
// same inputs after a conflict up to MaxTries in all; the tries after the
// first are the Tally's Retries. A committed New-Order is the Tally's row.
func (t *Terminal) Op(ctx context.Context) (workload.Tally, error) {
	kind := t.r.Pick()
	body := []func(x *tx) error{t.newOrder, t.payment, t.orderStatus, t.delivery, t.stockLevel}[kind]
	inputs := t.r.State()
	total := workload.Tally{Kind: kind}
	run := ctx
	if !t.cfg.Transactions {
		// Without transactions a transaction cut short stays half written
		// (a district's order number taken, its order missing) and breaks
		// the consistency conditions: it finishes even after the step's
		// end, within finishBound.
		c, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishBound)
		defer cancel()
		run = c
	}
	for try := 1; ; try++ {
		x := &tx{ctx: run}
		err := t.run(x, body)
		total.Statements += x.n
		if err == nil || errors.Is(err, errRollback) {
			if err == nil && kind == g.NewOrder {
				total.Rows = 1
			}
			return total, nil
		}
		if !conflicted(err) || try >= t.cfg.MaxTries || ctx.Err() != nil {
			if conflicted(err) {
				err = fmt.Errorf("conflict after %d tries: %w", try, err)
			}
			return total, err
		}
		total.Retries++
		t.r.Restore(inputs)
	}
}

// finishBound bounds a transaction that runs on after its step ended.
const finishBound = 50 * time.Second

// tx counts a transaction's calls to the server and carries its context
// (a session's, in a multi-document transaction).
type tx struct {
	ctx context.Context
	n   int
}

// run runs body alone or, with Transactions, in a multi-document
// transaction it commits, or aborts on body's error.
func (t *Terminal) run(x *tx, body func(x *tx) error) error {
	if !t.cfg.Transactions {
		return body(x)
	}
	sess, err := t.client.StartSession()
	if err != nil {
		return fmt.Errorf("start session: %w", err)
	}
	defer sess.EndSession(context.WithoutCancel(x.ctx))
	if err := sess.StartTransaction(); err != nil {
		return fmt.Errorf("start transaction: %w", err)
	}
	outer := x.ctx
	x.ctx = mongo.NewSessionContext(outer, sess)
	if err := body(x); err != nil {
		sess.AbortTransaction(context.WithoutCancel(x.ctx))
		return err
	}
	x.n++
	if err := sess.CommitTransaction(x.ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// otherWarehouse is a warehouse other than the terminal's, uniformly.
func (t *Terminal) otherWarehouse() int {
	o := t.r.Between(1, t.cfg.Warehouses-1)
	if o >= t.w {
		o++
	}
	return o
}

// line is one order line's inputs.
type line struct{ item, supply, qty int }

// newOrderInputs draws New-Order's inputs as the SQL terminal does:
// district, customer, lines (1% of orders end with an unused item),
// sorted by supplying warehouse and item.
func (t *Terminal) newOrderInputs() (d, c int, lines []line, allLocal int) {
	d = t.r.Between(1, g.DistrictsPerWarehouse)
	c = t.r.NURand(1023, g.CID, 1, t.cfg.Scale.Customers)
	lines = make([]line, t.r.Between(5, 15))
	allLocal = 1
	for i := range lines {
		lines[i] = line{item: t.r.NURand(8191, g.CItem, 1, t.cfg.Scale.Items), supply: t.w, qty: t.r.Between(1, 10)}
		if t.cfg.Warehouses > 1 && t.r.Between(1, 100) == 1 {
			lines[i].supply, allLocal = t.otherWarehouse(), 0
		}
	}
	if t.r.Between(1, 100) == 1 {
		lines[len(lines)-1].item = t.cfg.Scale.Items + 1
	}
	slices.SortStableFunc(lines, func(a, b line) int {
		if a.supply != b.supply {
			return a.supply - b.supply
		}
		return a.item - b.item
	})
	return d, c, lines, allLocal
}
