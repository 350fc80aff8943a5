package sysbench

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
	"benchlab/internal/workload"
)

// TestTransactionTablesPerStatement checks that a transaction's groups of
// statements draw their tables separately, as oltp_common.lua's execute_*
// functions do, instead of the whole transaction using one table. Table 1 is
// full and tables 2-4 are empty, so a read-only event at range 10 returns
// about 10 rows per group that hit table 1 (the sum query always returns one
// row): with one table per transaction only ~1 or ~41 rows are possible, with
// a table per group the counts in between show up.
func TestTransactionTablesPerStatement(t *testing.T) {
	ctx := context.Background()
	db := enginetest.Open(t, engine.Target{Name: "t", Engine: "sqlite"})
	p := workload.Params{Tables: 4, TableSize: 2000, Threads: []int{1}, Seed: 11}
	if _, err := loadStep(p).Action(ctx, db, io.Discard); err != nil {
		t.Fatal(err)
	}
	conn, err := db.(engine.SQL).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	// Writes first, on full tables: one write-only event changes rows of
	// up to three tables (index update, non-index update, delete+insert).
	digest := func() []string {
		var out []string
		for n := 1; n <= p.Tables; n++ {
			rows, err := conn.Values(ctx, fmt.Sprintf("SELECT id, k, c FROM %s ORDER BY id", TableName(n)))
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for _, r := range rows {
				b.WriteString(strings.Join(r, ","))
				b.WriteByte(';')
			}
			out = append(out, b.String())
		}
		return out
	}
	d := defByName(t, "write-only")
	w, err := newWorker(ctx, d, p, db, 0, 5)
	if err != nil {
		t.Fatal(err)
	}
	multi := 0
	const events = 20
	for i := 0; i < events; i++ {
		before := digest()
		if _, err := w.Op(ctx); err != nil {
			t.Fatal(err)
		}
		after := digest()
		changed := 0
		for n := range before {
			if before[n] != after[n] {
				changed++
			}
		}
		if changed > 1 {
			multi++
		}
	}
	w.Close()
	// With 4 tables, three independent draws hit one table with probability
	// 1/16: expect ~19 of 20 events to change two or more tables.
	if multi < events/2 {
		t.Errorf("%d of %d write-only transactions changed more than one table; want most", multi, events)
	}
	// The delete and the insert of one id stay on one table: every table
	// still has all its rows.
	for n := 1; n <= p.Tables; n++ {
		if got, err := conn.Query(ctx, "SELECT id FROM "+TableName(n)); err != nil || got != p.TableSize {
			t.Errorf("%s has %d rows after write-only events (%v); want %d", TableName(n), got, err, p.TableSize)
		}
	}

	for n := 2; n <= p.Tables; n++ {
		if _, err := conn.Exec(ctx, "DELETE FROM "+TableName(n)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"read-only_range=10", "read-write_range=10"} {
		d := defByName(t, name)
		w, err := newWorker(ctx, d, p, db, 0, 9)
		if err != nil {
			t.Fatal(err)
		}
		mixed := 0
		const events = 200
		for i := 0; i < events; i++ {
			tl, err := w.Op(ctx)
			if err != nil {
				t.Fatal(err)
			}
			// read-write's writes change 0-4 rows more.
			if tl.Rows >= 8 && tl.Rows <= 33 {
				mixed++
			}
		}
		w.Close()
		// A table per group: the four groups that return rows hit table 1
		// all or none with probability (1/4)^4 + (3/4)^4 = 0.32, so about
		// two thirds of the events are mixed; one table per transaction
		// leaves none.
		if mixed < events/4 {
			t.Errorf("%s: %d of %d transactions read from table 1 in some groups and not others; want many",
				name, mixed, events)
		}
	}
}

func defByName(t *testing.T, name string) *def {
	t.Helper()
	for _, d := range defs() {
		if d.name == name {
			return &d
		}
	}
	t.Fatalf("no test %q", name)
	return nil
}
