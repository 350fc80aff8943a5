package report

import (
	"bytes"
	"strings"
	"testing"

	"benchlab/internal/analysis"
	"benchlab/internal/store"
)

// TestEngineStatTables builds the engine counter tables from stored facts
// of two targets of 10,000 operations each: the absolute table has a column
// per counter that grew somewhere, sorted by name and named within its
// source, with the growth per operation; the relative one only those whose
// per-op figure differs from the base's by more than 10% (blks_read 0.5 ->
// 2, wal_bytes 100 -> 120, buffers_backend 0 -> 0.1), not xact_commit (1 ->
// 1.05). A counter that never grew has no column. A note says how precise
// PostgreSQL's counters are, none MariaDB's. JSON export carries the facts.
func TestEngineStatTables(t *testing.T) {
	d := effData(true)
	lite, srv := &d.Results[1][1], &d.Results[2][1]
	stat := store.EngineStatFact
	lite.Facts = map[string]float64{stat("pg_stat_database.xact_commit"): 10000, stat("pg_stat_database.blks_read"): 5000,
		stat("pg_stat_wal.wal_bytes"): 1e6, stat("pg_stat_bgwriter.buffers_clean"): 0, stat("pg_stat_bgwriter.buffers_backend"): 0}
	srv.Facts = map[string]float64{stat("pg_stat_database.xact_commit"): 10500, stat("pg_stat_database.blks_read"): 20000,
		stat("pg_stat_wal.wal_bytes"): 1.2e6, stat("pg_stat_bgwriter.buffers_clean"): 0, stat("pg_stat_bgwriter.buffers_backend"): 1000}
	r := Build(d)
	abs, rel := findTable(r, "Engine counters per operation"), findTable(r, "Relative engine counters")
	if abs == nil || rel == nil {
		t.Fatalf("engine counter tables missing: %d tables", len(r.Tables))
	}
	if got := strings.Join(abs.Columns, ","); got != "buffers_backend/op,blks_read/op,xact_commit/op,wal_bytes/op" {
		t.Errorf("columns %s", got)
	}
	if got := strings.Join(rel.Columns, ","); got != "buffers_backend/op,blks_read/op,wal_bytes/op" {
		t.Errorf("relative columns %s", got)
	}
	for _, c := range []struct {
		table       *Table
		target, col string
		want        float64
	}{{abs, "lite", "xact_commit/op", 1}, {abs, "srv", "xact_commit/op", 1.05}, {abs, "lite", "blks_read/op", 0.5},
		{abs, "srv", "blks_read/op", 2}, {abs, "srv", "wal_bytes/op", 120}, {abs, "lite", "buffers_backend/op", 0},
		{abs, "srv", "buffers_backend/op", 0.1}, {rel, "srv", "blks_read/op", 4}, {rel, "srv", "wal_bytes/op", 1.2}} {
		if cell := cellOf(c.table, c.target, c.col); cell.Missing || cell.Kind == Text ||
			cell.Value < c.want*0.999-1e-9 || cell.Value > c.want*1.001+1e-9 {
			t.Errorf("%s: %s %s = %+v, want %v", c.table.Title, c.target, c.col, cell, c.want)
		}
	}
	if cell := cellOf(rel, "srv", "blks_read/op"); cell.Band != analysis.Worse {
		t.Errorf("4 times the base's blocks read per op is not marked worse: %+v", cell)
	}
	notes := strings.Join(r.Notes, "\n")
	if !strings.Contains(notes, "engine counters: PostgreSQL's backends publish their counts") ||
		strings.Contains(notes, "MariaDB's status counters") {
		t.Errorf("want the note on PostgreSQL's counters' precision, none on MariaDB's:\n%s", notes)
	}

	var b bytes.Buffer
	if err := WriteJSON(&b, d); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"engine.pg_stat_wal.wal_bytes": 1200000`) {
		t.Errorf("JSON export lacks the engine counters:\n%s", b.String())
	}
}

// TestEngineStatsUnread: a step whose counters could not be read has no
// table and a note naming the target and the step; counters that grew
// nowhere make no table either.
func TestEngineStatsUnread(t *testing.T) {
	d := effData(true)
	d.Results[2][1].Facts = map[string]float64{store.FactEngineStatsUnread: 1}
	d.Results[1][1].Facts = map[string]float64{store.EngineStatFact("status.Innodb_log_waits"): 0}
	r := Build(d)
	if findTable(r, "Engine counters") != nil || findTable(r, "Relative engine counters") != nil {
		t.Error("engine counter tables without any counter that grew")
	}
	want := "engine counters: not read on srv for point-query @1"
	if !strings.Contains(strings.Join(r.Notes, "\n"), want) {
		t.Errorf("notes lack %q:\n%s", want, strings.Join(r.Notes, "\n"))
	}
}
