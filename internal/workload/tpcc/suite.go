// Package tpcc is TPC-C (revision 5.11, clauses 1-2 and 4.3) as database
// benchmark harnesses run it: the nine tables loaded at a number of
// warehouses, and terminals that run the five transactions in the standard
// mix (45% New-Order, 43% Payment, 4% each Order-Status, Delivery and
// Stock-Level) back to back, without keying or think time. The headline is
// tpmC, New-Order transactions committed per minute. It is not an audited
// TPC-C: there is no think time, no 8-hour run, no checkpoints schedule.
package tpcc

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"benchlab/internal/analysis"
	"benchlab/internal/engine"
	"benchlab/internal/engine/docdb"
	"benchlab/internal/metric"
	"benchlab/internal/workload"
	"benchlab/internal/workload/tpcc/tpccdoc"
	"benchlab/internal/workload/tpcc/tpccgen"
)

func init() { workload.Register(Suite{}) }

// Suite is the TPC-C workload.
type Suite struct{}

// Name returns "tpcc".
func (Suite) Name() string { return "tpcc" }

// PreparesStatements says the workers prepare on the server unless
// workload.prepared is false.
func (Suite) PreparesStatements() {}

// NeedsAny says the suite runs on SQL engines and on document engines
// (package tpccdoc).
func (Suite) NeedsAny() []engine.Kind { return []engine.Kind{engine.KindSQL, engine.KindDoc} }

// CheckTarget refuses options a target's engine cannot run: multi-document
// transactions on FerretDB v1, which has none.
func (Suite) CheckTarget(p workload.Params, t engine.Target) error {
	if opts(p).Transactions && t.Engine == "ferretdb" {
		return workload.Bad("tpcc.transactions", true, "FerretDB v1 runs no multi-document transactions; set transactions = false")
	}
	return nil
}

// NotCompliant is what the report says of a run at a scale factor other
// than 1: the population and the keys drawn are smaller than clause
// 4.3.3.1's, so its tpmC is no TPC-C result.
const NotCompliant = "items, customers and new orders per district divided by it, not a TPC-C-compliant run"

// Summary describes the suite for `benchlab list`.
func (Suite) Summary() string {
	return "TPC-C: the five transactions in the standard mix, no think time; tpmC (workload.warehouses sets the scale)"
}

// TpmC is TPC-C's headline: New-Order transactions committed per minute
// (each terminal counts its committed New-Orders as the Tally's Rows).
var TpmC = metric.Register(metric.Metric{
	Name: "tpmc", Unit: "tpmC", Symbol: "tpmC", Legend: "tpmC, New-Order transactions committed per minute",
	Direction:  analysis.HigherIsBetter,
	Value:      func(c metric.Counts) float64 { return 60 * metric.PerSecond(c.Rows, c.Seconds) },
	Series:     func(c metric.Counts) float64 { return 60 * metric.PerSecond(c.Rows, c.Seconds) },
	SeriesUnit: "new orders per minute",
})

// Group is the report group of the tpcc test.
const Group = "tpcc"

// Tests lists the one measured test.
func (Suite) Tests() []workload.Test {
	return []workload.Test{{Name: "tpcc", Family: "tpcc", Group: Group,
		Summary: "New-Order 45%, Payment 43%, Order-Status, Delivery, Stock-Level 4% each; tpmC"}}
}

// Describe says what a run did, for the report's header.
func (Suite) Describe(p workload.Params) string {
	protocol := "prepared statements"
	if p.Unprepared {
		protocol = "text protocol"
	}
	tries := fmt.Sprintf("up to %d tries per transaction on conflicts", opts(p).tries())
	if opts(p).tries() == 1 {
		tries = "conflicts not retried"
	}
	isolation := "isolation the server's default, per target in the TPC-C table"
	if l := opts(p).Isolation; l != "" {
		isolation = "isolation " + levelOf(l).String() + " set on each terminal's session"
	}
	if f := opts(p).scale(); f > 1 {
		isolation += fmt.Sprintf("; scale factor %g: %s", f, NotCompliant)
	}
	return fmt.Sprintf("TPC-C, %d warehouse(s), terminals %v, %s measured each after a %s warm-up, no think time, "+
		"%s, %s (%s)", opts(p).Warehouses, p.Threads, p.WriteTime, p.Warmup, protocol, tries, isolation)
}

// Check validates the parameters this suite uses.
func (Suite) Check(p workload.Params) error {
	if w := opts(p).Warehouses; w < 1 || w > 100000 {
		return workload.Bad("tpcc.warehouses", w, "%d is not allowed; want 1 to 100000", w)
	}
	if n := opts(p).MaxTries; n < 0 || n > 1000 {
		return workload.Bad("tpcc.max_tries", n, "%d is not allowed; want 1 (no retry) to 1000 tries per transaction", n)
	}
	if err := tpccgen.CheckScaleFactor(opts(p).scale()); err != nil {
		return workload.Bad("tpcc.scalefactor", opts(p).ScaleFactor, "%v", err)
	}
	if err := tpccdoc.CheckReadPreference(opts(p).ReadPreference); err != nil {
		return workload.Bad("tpcc.read_preference", opts(p).ReadPreference, "%v", err)
	}
	if l := opts(p).Isolation; l != "" && levelOf(l) == IsolationUnknown {
		return workload.Bad("tpcc.isolation", l, "%q is not an isolation level; want rc, rr or ser (sysbench-tpcc's --trx_level), "+
			"read-committed, repeatable-read or serializable, or leave it out for the server's default", l)
	}
	_, err := workload.SelectTests(p.Tests, Suite{}.Tests())
	return err
}

// Plan returns the load, the cleanup of docs/method.md 1.9, the measured mix for
// write_time at each thread count (terminals), then the consistency check.
func (s Suite) Plan(p workload.Params) ([]workload.Step, error) {
	if err := s.Check(p); err != nil {
		return nil, err
	}
	wait := p.PostwriteWait
	if wait < 0 {
		items, perWarehouse := rowsOf(opts(p).population())
		wait = workload.PostwriteTarget(items + int64(opts(p).Warehouses)*perWarehouse)
	}
	return []workload.Step{
		loadStep(p),
		cleanupStep(wait),
		{
			Name: "tpcc", Family: "tpcc", Group: Group, Write: true, Metric: TpmC,
			Duration: p.WriteTime, Warmup: p.Warmup, Drain: drainTime,
			NewWorker: func(ctx context.Context, db engine.DB, id, n int, seed uint64) (workload.Worker, error) {
				if _, ok := db.(docdb.DB); ok {
					return tpccdoc.NewTerminal(ctx, db, opts(p).doc(), id, seed,
						map[string]float64{FactIsolation: float64(IsolationUnknown), FactPrepared: 0})
				}
				return newTerminal(ctx, db, opts(p), id, seed, p.Unprepared)
			},
		},
		checkStep(p),
	}, nil
}

// drainTime is how long transactions under way when the measured time ends
// may run on: they finish (uncounted) rather than have their statements
// cancelled.
const drainTime = 10 * time.Second

// tables are the nine TPC-C tables, in load order.
var tables = []string{"item", "warehouse", "stock", "district", "customer", "history", "oorder", "new_order", "order_line"}

// timestamp is the column type of timestamps per dialect: DATETIME in MySQL
// (whose TIMESTAMP has implicit defaults and a 2038 limit).
var timestamp = map[string]string{"sqlite": "TIMESTAMP", "postgres": "TIMESTAMP", "mysql": "DATETIME"}

// schema returns the CREATE statements for dialect d; a dialect the suite
// does not spell is an error.
func schema(d engine.Dialect) ([]string, error) {
	ts, err := engine.Spell("tpcc schema", d, timestamp)
	if err != nil {
		return nil, err
	}
	addr := func(p string) string {
		return fmt.Sprintf("%[1]s_street_1 VARCHAR(20) NOT NULL, %[1]s_street_2 VARCHAR(20) NOT NULL, "+
			"%[1]s_city VARCHAR(20) NOT NULL, %[1]s_state CHAR(2) NOT NULL, %[1]s_zip CHAR(9) NOT NULL", p)
	}
	dists := ""
	for i := 1; i <= 10; i++ {
		dists += fmt.Sprintf("s_dist_%02d CHAR(24) NOT NULL, ", i)
	}
	return []string{
		"CREATE TABLE item (i_id INT NOT NULL, i_im_id INT NOT NULL, i_name VARCHAR(24) NOT NULL, " +
			"i_price DECIMAL(5,2) NOT NULL, i_data VARCHAR(50) NOT NULL, PRIMARY KEY (i_id))",
		"CREATE TABLE warehouse (w_id INT NOT NULL, w_name VARCHAR(10) NOT NULL, " + addr("w") + ", " +
			"w_tax DECIMAL(4,4) NOT NULL, w_ytd DECIMAL(12,2) NOT NULL, PRIMARY KEY (w_id))",
		"CREATE TABLE stock (s_i_id INT NOT NULL, s_w_id INT NOT NULL, s_quantity INT NOT NULL, " + dists +
			"s_ytd INT NOT NULL, s_order_cnt INT NOT NULL, s_remote_cnt INT NOT NULL, s_data VARCHAR(50) NOT NULL, " +
			"PRIMARY KEY (s_w_id, s_i_id))",
		"CREATE TABLE district (d_id INT NOT NULL, d_w_id INT NOT NULL, d_name VARCHAR(10) NOT NULL, " + addr("d") + ", " +
			"d_tax DECIMAL(4,4) NOT NULL, d_ytd DECIMAL(12,2) NOT NULL, d_next_o_id INT NOT NULL, PRIMARY KEY (d_w_id, d_id))",
		"CREATE TABLE customer (c_id INT NOT NULL, c_d_id INT NOT NULL, c_w_id INT NOT NULL, c_first VARCHAR(16) NOT NULL, " +
			"c_middle CHAR(2) NOT NULL, c_last VARCHAR(16) NOT NULL, " + addr("c") + ", c_phone CHAR(16) NOT NULL, " +
			"c_since " + ts + " NOT NULL, c_credit CHAR(2) NOT NULL, c_credit_lim DECIMAL(12,2) NOT NULL, " +
			"c_discount DECIMAL(4,4) NOT NULL, c_balance DECIMAL(12,2) NOT NULL, c_ytd_payment DECIMAL(12,2) NOT NULL, " +
			"c_payment_cnt INT NOT NULL, c_delivery_cnt INT NOT NULL, c_data VARCHAR(500) NOT NULL, " +
			"PRIMARY KEY (c_w_id, c_d_id, c_id))",
		"CREATE INDEX idx_customer_name ON customer (c_w_id, c_d_id, c_last, c_first)",
		"CREATE TABLE history (h_c_id INT NOT NULL, h_c_d_id INT NOT NULL, h_c_w_id INT NOT NULL, h_d_id INT NOT NULL, " +
			"h_w_id INT NOT NULL, h_date " + ts + " NOT NULL, h_amount DECIMAL(6,2) NOT NULL, h_data VARCHAR(24) NOT NULL)",
		"CREATE TABLE oorder (o_id INT NOT NULL, o_d_id INT NOT NULL, o_w_id INT NOT NULL, o_c_id INT NOT NULL, " +
			"o_entry_d " + ts + " NOT NULL, o_carrier_id INT, o_ol_cnt INT NOT NULL, o_all_local INT NOT NULL, " +
			"PRIMARY KEY (o_w_id, o_d_id, o_id))",
		"CREATE INDEX idx_order ON oorder (o_w_id, o_d_id, o_c_id, o_id)",
		"CREATE TABLE new_order (no_o_id INT NOT NULL, no_d_id INT NOT NULL, no_w_id INT NOT NULL, " +
			"PRIMARY KEY (no_w_id, no_d_id, no_o_id))",
		"CREATE TABLE order_line (ol_o_id INT NOT NULL, ol_d_id INT NOT NULL, ol_w_id INT NOT NULL, ol_number INT NOT NULL, " +
			"ol_i_id INT NOT NULL, ol_supply_w_id INT NOT NULL, ol_delivery_d " + ts + ", ol_quantity INT NOT NULL, " +
			"ol_amount DECIMAL(6,2) NOT NULL, ol_dist_info CHAR(24) NOT NULL, PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number))",
	}, nil
}

// loadStep drops and creates the tables and loads them (clause 4.3.3).
func loadStep(p workload.Params) workload.Step {
	return workload.Step{
		Name: "prepare", Warm: true, Write: true,
		Action: func(ctx context.Context, db engine.DB, log io.Writer) (workload.Tally, error) {
			if _, ok := db.(docdb.DB); ok {
				return tpccdoc.Load(ctx, db, opts(p).doc(), p.Seed, log)
			}
			var t workload.Tally
			sqldb, conn, err := workload.ConnectSQL(ctx, db, "tpcc prepare")
			if err != nil {
				return t, err
			}
			defer conn.Close()
			for i := len(tables) - 1; i >= 0; i-- {
				if _, err := conn.Exec(ctx, "DROP TABLE IF EXISTS "+tables[i]); err != nil {
					return t, fmt.Errorf("prepare: drop %s: %w", tables[i], err)
				}
			}
			ddl, err := schema(sqldb.Dialect())
			if err != nil {
				return t, fmt.Errorf("prepare: %w", err)
			}
			for _, q := range ddl {
				if _, err := conn.Exec(ctx, q); err != nil {
					return t, fmt.Errorf("prepare: %s: %w", q[:min(len(q), 40)], err)
				}
				t.Statements++
			}
			start := time.Now()
			l := &loader{conn: conn, r: newRand(p.Seed), now: start.UTC().Format(timeFormat), t: &t, sc: opts(p).population()}
			if err := l.all(ctx, opts(p).Warehouses); err != nil {
				return t, fmt.Errorf("prepare: %w", err)
			}
			el := time.Since(start)
			sc := opts(p).population()
			fmt.Fprintf(log, "prepare: %d warehouse(s) at scale factor %g (%d items, %d customers per district), %d rows loaded in %s (%.0f rows/s)\n",
				opts(p).Warehouses, sc.Factor, sc.Items, sc.Customers, t.Rows, el.Round(time.Millisecond), float64(t.Rows)/el.Seconds())
			return t, nil
		},
	}
}

// timeFormat is how timestamps are sent: every engine parses it.
const timeFormat = "2006-01-02 15:04:05"

// cleanupStep is the postload cleanup of docs/method.md 1.9: the SQL
// engine's maintenance and the wait; a document engine has no maintenance
// to ask for (py-tpcc runs none), so it only waits, and both kinds of
// target start the measured mix as long after their load.
func cleanupStep(wait time.Duration) workload.Step {
	step := workload.CleanupStep("postload", slices.Clone(tables), wait)
	sqlAction := step.Action
	step.Action = func(ctx context.Context, db engine.DB, log io.Writer) (workload.Tally, error) {
		if _, ok := db.(docdb.DB); !ok {
			return sqlAction(ctx, db, log)
		}
		select {
		case <-time.After(wait):
			return workload.Tally{}, nil
		case <-ctx.Done():
			return workload.Tally{}, ctx.Err()
		}
	}
	return step
}
