package tpcc

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/workload"
	"benchlab/internal/workload/tpcc/tpccdoc"
	"benchlab/internal/workload/tpcc/tpccgen"
)

// terminal is one TPC-C terminal: a connection, a home warehouse and a
// district of its own for Stock-Level (clause 2.8.1.1); its operations are
// transactions drawn from the standard mix.
type terminal struct {
	conn          engine.Conn
	r             *rnd
	w, warehouses int
	// sc is the population per warehouse at the run's scale factor: the
	// ranges customers, items and last names are drawn from.
	sc        tpccgen.Scale
	district  int
	forUpdate string
	maxTries  int
	// facts are the session's isolation level and protocol (Facts).
	facts           map[string]float64
	begin, beginRO  engine.Stmt
	commit, rollbck engine.Stmt
	st              stmts
	all             []engine.Stmt // every statement prepared, for Close
}

// stmts are a terminal's prepared statements.
type stmts struct {
	noCustomer, noWarehouse, noDistrict, noDistrictNext, noOrder, noNewOrder,
	noItem, noUpdateStock, noLine engine.Stmt
	noStock [districtsPerWarehouse]engine.Stmt

	payWarehouseYTD, payWarehouse, payDistrictYTD, payDistrict, byName, payCustomer, payCustomerData,
	payBalance, payBalanceData, payHistory engine.Stmt

	osCustomer, osLastOrder, osLines engine.Stmt

	dlOldest, dlDelete, dlOrderCustomer, dlCarrier, dlLineDate, dlLineSum, dlCustomer engine.Stmt

	slNextOrder, slLowStock engine.Stmt
}

func newTerminal(ctx context.Context, db engine.DB, o *Options, id int, seed uint64, unprepared bool) (*terminal, error) {
	sqldb, conn, err := workload.ConnectSQL(ctx, db, "tpcc terminal")
	if err != nil {
		return nil, err
	}
	d := sqldb.Dialect()
	warehouses := o.Warehouses
	t := &terminal{conn: conn, r: newRand(seed), w: id%warehouses + 1, warehouses: warehouses, sc: o.population(),
		district: id/warehouses%districtsPerWarehouse + 1, forUpdate: d.ForUpdate(), maxTries: o.tries()}
	if err := setIsolation(ctx, conn, d, o.Isolation); err != nil {
		t.Close()
		return nil, fmt.Errorf("tpcc: %w", err)
	}
	level, err := isolationOf(ctx, conn, d)
	if err != nil {
		t.Close()
		return nil, fmt.Errorf("tpcc: %w", err)
	}
	if want := levelOf(o.Isolation); o.Isolation != "" && level != want {
		t.Close()
		return nil, fmt.Errorf("tpcc: the session runs at %s after setting isolation %s", level, want)
	}
	t.facts = map[string]float64{FactIsolation: float64(level), FactPrepared: 1, tpccdoc.FactScaleFactor: t.sc.Factor}
	if unprepared {
		t.facts[FactPrepared] = 0
	}
	if err := t.prepare(ctx, d, unprepared); err != nil {
		t.Close()
		return nil, fmt.Errorf("tpcc: %w", err)
	}
	return t, nil
}

// Facts are the session's isolation level and protocol, kept with the
// step's result.
func (t *terminal) Facts() map[string]float64 { return t.facts }

// prepare prepares every statement, or with unprepared makes each one sent
// as text (sysbench's --db-ps-mode=disable).
func (t *terminal) prepare(ctx context.Context, d engine.Dialect, unprepared bool) error {
	var err error
	p := func(dst *engine.Stmt, sql string) {
		if err == nil {
			*dst, err = engine.PrepareOrText(ctx, t.conn, d.Bind(sql), engine.Short, unprepared)
			if err != nil {
				err = fmt.Errorf("prepare %q: %w", sql, err)
				return
			}
			t.all = append(t.all, *dst)
		}
	}
	fu := t.forUpdate
	p(&t.begin, d.BeginWrite)
	p(&t.beginRO, d.BeginRead)
	p(&t.commit, "COMMIT")
	p(&t.rollbck, "ROLLBACK")
	s := &t.st
	// New-Order (clause 2.4.2).
	p(&s.noCustomer, "SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?")
	p(&s.noWarehouse, "SELECT w_tax FROM warehouse WHERE w_id = ?")
	p(&s.noDistrict, "SELECT d_next_o_id, d_tax FROM district WHERE d_w_id = ? AND d_id = ?"+fu)
	p(&s.noDistrictNext, "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = ? AND d_id = ?")
	p(&s.noOrder, "INSERT INTO oorder (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) "+
		"VALUES (?, ?, ?, ?, ?, NULL, ?, ?)")
	p(&s.noNewOrder, "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)")
	p(&s.noItem, "SELECT i_price, i_name, i_data FROM item WHERE i_id = ?")
	for i := range s.noStock {
		p(&s.noStock[i], fmt.Sprintf("SELECT s_quantity, s_data, s_dist_%02d FROM stock WHERE s_i_id = ? AND s_w_id = ?%s", i+1, fu))
	}
	p(&s.noUpdateStock, "UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1, "+
		"s_remote_cnt = s_remote_cnt + ? WHERE s_i_id = ? AND s_w_id = ?")
	p(&s.noLine, "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, "+
		"ol_quantity, ol_amount, ol_dist_info) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)")
	// Payment (clause 2.5.2).
	p(&s.payWarehouseYTD, "UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?")
	p(&s.payWarehouse, "SELECT w_street_1, w_street_2, w_city, w_state, w_zip, w_name FROM warehouse WHERE w_id = ?")
	p(&s.payDistrictYTD, "UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?")
	p(&s.payDistrict, "SELECT d_street_1, d_street_2, d_city, d_state, d_zip, d_name FROM district WHERE d_w_id = ? AND d_id = ?")
	p(&s.byName, "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first")
	p(&s.payCustomer, "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, "+
		"c_credit, c_credit_lim, c_discount, c_balance, c_since FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"+fu)
	p(&s.payCustomerData, "SELECT c_data FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?")
	p(&s.payBalance, "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, "+
		"c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?")
	p(&s.payBalanceData, "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, "+
		"c_payment_cnt = c_payment_cnt + 1, c_data = ? WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?")
	p(&s.payHistory, "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) "+
		"VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
	// Order-Status (clause 2.6.2).
	p(&s.osCustomer, "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?")
	p(&s.osLastOrder, "SELECT o_id, o_carrier_id, o_entry_d FROM oorder WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? "+
		"ORDER BY o_id DESC LIMIT 1")
	p(&s.osLines, "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line "+
		"WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?")
	// Delivery (clause 2.7.4).
	p(&s.dlOldest, "SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id LIMIT 1"+fu)
	p(&s.dlDelete, "DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?")
	p(&s.dlOrderCustomer, "SELECT o_c_id FROM oorder WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?")
	p(&s.dlCarrier, "UPDATE oorder SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?")
	p(&s.dlLineDate, "UPDATE order_line SET ol_delivery_d = ? WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?")
	p(&s.dlLineSum, "SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?")
	p(&s.dlCustomer, "UPDATE customer SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1 "+
		"WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?")
	// Stock-Level (clause 2.8.2).
	p(&s.slNextOrder, "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?")
	p(&s.slLowStock, "SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock WHERE ol_w_id = ? AND ol_d_id = ? "+
		"AND ol_o_id < ? AND ol_o_id >= ? AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?")
	return err
}

// Close releases the statements and the connection.
func (t *terminal) Close() error {
	for _, s := range t.all {
		s.Close()
	}
	return t.conn.Close()
}

// Op runs one transaction drawn from the mix: New-Order 45%, Payment 43%,
// Order-Status, Delivery and Stock-Level 4% each (clause 5.2.3's minimums
// for the last four). A committed New-Order counts as the Tally's one row.
// A transaction that fails on a conflict (serialization failure, deadlock,
// lock wait timeout) is rolled back and run again with the same inputs, up
// to max_tries times in all, as pgbench's --max-tries does; the tries after
// the first are the Tally's Retries, and one that still fails is an error.
func (t *terminal) Op(ctx context.Context) (workload.Tally, error) {
	kind, write, body := t.r.Pick(), true, t.newOrder
	switch kind {
	case tpccgen.Payment:
		body = t.payment
	case tpccgen.OrderStatus:
		write, body = false, t.orderStatus
	case tpccgen.Delivery:
		body = t.delivery
	case tpccgen.StockLevel:
		write, body = false, t.stockLevel
	}
	inputs := t.r.State()
	total := workload.Tally{Kind: kind}
	for try := 1; ; try++ {
		tl, err := t.txn(ctx, write, body)
		total.Statements += tl.Statements
		if err == nil {
			total.Rows = tl.Rows
			return total, nil
		}
		c := engine.ConflictOf(err)
		if c == engine.NoConflict || try >= t.maxTries || ctx.Err() != nil {
			if c != engine.NoConflict {
				err = fmt.Errorf("%s after %d tries: %w", c, try, err)
			}
			return total, err
		}
		total.Retries++
		t.r.Restore(inputs)
	}
}

// Kinds names the transactions, in the order of Tally.Kind, so the runner
// keeps each one's count and latency.
func (t *terminal) Kinds() []string { return Kinds }

// tx counts a transaction's statements.
type tx struct {
	ctx context.Context
	t   workload.Tally
}

func (x *tx) exec(st engine.Stmt, args ...any) (int64, error) {
	x.t.Statements++
	return st.Exec(x.ctx, args...)
}

func (x *tx) values(st engine.Stmt, args ...any) ([][]string, error) {
	x.t.Statements++
	return st.Values(x.ctx, args...)
}

// errRollback is New-Order's business rollback: an unused item number
// (clause 2.4.2.3), which is not an error.
var errRollback = errors.New("rollback")

// txn runs body between BEGIN and COMMIT, rolling back on its error.
func (t *terminal) txn(ctx context.Context, write bool, body func(x *tx) error) (workload.Tally, error) {
	x := &tx{ctx: ctx}
	begin := t.beginRO
	if write {
		begin = t.begin
	}
	if _, err := x.exec(begin); err != nil {
		return x.t, fmt.Errorf("begin: %w", err)
	}
	if err := body(x); err != nil {
		x.exec(t.rollbck)
		x.t.Rows = 0
		if errors.Is(err, errRollback) {
			return x.t, nil
		}
		return x.t, err
	}
	if _, err := x.exec(t.commit); err != nil {
		t.rollbck.Exec(context.WithoutCancel(ctx))
		x.t.Rows = 0 // a New-Order that did not commit is no New-Order
		return x.t, fmt.Errorf("commit: %w", err)
	}
	return x.t, nil
}

// errNoRow reports a row the population guarantees but did not find.
var errNoRow = errors.New("tpcc: no row where the population has one")

// one returns the first row of a result that must have one.
func one(rows [][]string, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, errNoRow
	}
	return rows[0], nil
}

func atoi(s string) int {
	v, _ := strconv.Atoi(s)
	return v
}

// cents parses a decimal amount into hundredths.
func cents(s string) int {
	v, _ := strconv.ParseFloat(s, 64)
	return int(math.Round(v * 100))
}

func now() string { return time.Now().UTC().Format(timeFormat) }
