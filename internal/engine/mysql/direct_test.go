package mysql_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"

	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
	"benchlab/internal/server/servertest"
)

// TestDirectMatchesDriver runs the same statements on one connection
// through the direct path (Short statements) and through the driver (Long
// ones) against a managed MariaDB: rows counted (one, a hundred, none,
// rows with NULL columns, the result sets of a procedure's CALL), rows
// changed, and a duplicate key that must come
// back as the driver's *mysql.MySQLError 1062 and leave the connection
// usable. The direct point query allocates at most once per call, where the
// driver allocates five times: the direct path is the one taken.
func TestDirectMatchesDriver(t *testing.T) {
	getenv, _ := servertest.Env(t)
	ctx := context.Background()
	conn := enginetest.Connect(t, enginetest.Open(t, engine.Target{Name: "direct", Engine: "mariadb", Getenv: getenv}))
	if _, err := conn.Exec(ctx, "CREATE TABLE d (id INT PRIMARY KEY, s VARCHAR(20) NULL, f DOUBLE NULL, b VARBINARY(10) NULL)"); err != nil {
		t.Fatal(err)
	}
	both := func(sql string) map[string]engine.Stmt {
		t.Helper()
		out := map[string]engine.Stmt{}
		for name, cost := range map[string]engine.Cost{"direct": engine.Short, "driver": engine.Long} {
			st, err := conn.Prepare(ctx, sql, cost)
			if err != nil {
				t.Fatalf("%s prepare %q: %v", name, sql, err)
			}
			t.Cleanup(func() { st.Close() })
			out[name] = st
		}
		return out
	}
	ins := both("INSERT INTO d (id, s, f, b) VALUES (?, ?, ?, ?)")
	for i := 1; i <= 100; i++ {
		path := []string{"direct", "driver"}[i%2]
		var s, f, b any = "row", float64(i) / 4, []byte{byte(i), 0, 255}
		if i%10 == 0 {
			s, f, b = nil, nil, nil
		}
		if n, err := ins[path].Exec(ctx, int64(i), s, f, b); err != nil || n != 1 {
			t.Fatalf("%s insert %d: %d rows, %v", path, i, n, err)
		}
	}
	for _, c := range []struct {
		sql  string
		args []any
		want int64
	}{
		{"SELECT s, f, b FROM d WHERE id = ?", []any{int64(7)}, 1},
		{"SELECT s, f, b FROM d WHERE id = ?", []any{int64(30)}, 1}, // NULL columns
		{"SELECT id, s FROM d WHERE id BETWEEN ? AND ?", []any{int64(1), int64(100)}, 100},
		{"SELECT id FROM d WHERE id = ?", []any{int64(1000)}, 0},
		{"SELECT id FROM d WHERE s IS NULL AND id > ? AND f IS NULL AND b IS NULL", []any{0}, 10},
		{"SELECT id FROM d WHERE s = ? AND f > ? AND id < ?", []any{"row", 1.0, int32(50)}, 41},
		{"SELECT COUNT(*) FROM d", nil, 1},
	} {
		st := both(c.sql)
		for _, path := range []string{"direct", "driver", "direct"} {
			if n, err := st[path].Query(ctx, c.args...); err != nil || n != c.want {
				t.Errorf("%s %q %v: %d rows, %v; want %d", path, c.sql, c.args, n, err, c.want)
			}
		}
	}
	// A prepared CALL answers with a result set for each SELECT of the
	// procedure and a closing OK, each announcing the next: both paths
	// count the rows of every set, and the connection stays in step (the
	// point query after each call gets its own answer).
	if _, err := conn.Exec(ctx, "CREATE PROCEDURE two(IN k INT) BEGIN SELECT id FROM d WHERE id <= k; SELECT id, s FROM d WHERE id > 95; END"); err != nil {
		t.Fatal(err)
	}
	call, after := both("CALL two(?)"), both("SELECT s, f FROM d WHERE id = ?")
	for _, path := range []string{"direct", "driver", "direct"} {
		if n, err := call[path].Query(ctx, int64(3)); err != nil || n != 8 {
			t.Errorf("%s CALL: %d rows, %v; want 3 + 5", path, n, err)
		}
		if n, err := after[path].Query(ctx, int64(99)); err != nil || n != 1 {
			t.Errorf("%s point query after a CALL: %d rows, %v; want 1", path, n, err)
		}
	}
	upd := both("UPDATE d SET s = ? WHERE id <= ?")
	for i, path := range []string{"direct", "driver", "direct"} {
		if n, err := upd[path].Exec(ctx, "u"+string(rune('a'+i)), int64(25)); err != nil || n != 25 {
			t.Errorf("%s update: %d rows, %v; want 25", path, n, err)
		}
	}
	var me *gomysql.MySQLError
	if _, err := ins["direct"].Exec(ctx, int64(5), "dup", 1.0, nil); !errors.As(err, &me) || me.Number != 1062 {
		t.Errorf("direct duplicate key: %v (%T), want a *mysql.MySQLError 1062", err, err)
	}
	point := both("SELECT s FROM d WHERE id = ?")
	if n, err := point["direct"].Query(ctx, int64(5)); err != nil || n != 1 {
		t.Errorf("direct query after a server error: %d, %v; want 1 row", n, err)
	}
	allocs := testing.AllocsPerRun(200, func() { point["direct"].Query(ctx, int64(5)) })
	driverAllocs := testing.AllocsPerRun(200, func() { point["driver"].Query(ctx, int64(5)) })
	t.Logf("allocations per point query: direct %.1f, driver %.1f", allocs, driverAllocs)
	if allocs > 1 || driverAllocs <= allocs {
		t.Errorf("allocations per point query: direct %.1f, driver %.1f; want the direct path at most 1 and below the driver", allocs, driverAllocs)
	}
}

// TestDirectTextMatchesDriver runs the same text statements (COM_QUERY)
// through the direct path (Short) and the driver (Long) on one connection
// against a managed MariaDB: rows as text (integers, strings, empty
// strings, NULL as "", decimals, bytes 0x00 and 0xFF), counted rows, the
// result sets of a CALL, rows changed, and a duplicate key that must come
// back as the driver's *mysql.MySQLError 1062 and leave the connection in
// step. The direct text point query read as values allocates at most 4
// times (the driver: 12), so the direct path is the one taken.
func TestDirectTextMatchesDriver(t *testing.T) {
	getenv, _ := servertest.Env(t)
	ctx := context.Background()
	conn := enginetest.Connect(t, enginetest.Open(t, engine.Target{Name: "text", Engine: "mariadb", Getenv: getenv}))
	if _, err := conn.Exec(ctx, "CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(20) NULL, d DECIMAL(8,2) NULL, b VARBINARY(10) NULL)"); err != nil {
		t.Fatal(err)
	}
	tp, ok := conn.(engine.TextPreparer)
	if !ok {
		t.Fatalf("%T has no text statements", conn)
	}
	both := func(sql string) map[string]engine.Stmt {
		return map[string]engine.Stmt{"direct": tp.PrepareText(sql, engine.Short), "driver": tp.PrepareText(sql, engine.Long)}
	}
	ins := both("INSERT INTO t (id, s, d, b) VALUES (?, ?, ?, 0x00FF41)")
	for i := 1; i <= 60; i++ {
		path := []string{"direct", "driver"}[i%2]
		s := "row"
		if i%7 == 0 {
			s = ""
		}
		if n, err := ins[path].Exec(ctx, int64(i), s, float64(i)/4); err != nil || n != 1 {
			t.Fatalf("%s insert %d: %d rows, %v", path, i, n, err)
		}
	}
	if _, err := conn.Exec(ctx, "UPDATE t SET s = NULL, d = NULL, b = NULL WHERE id % 10 = 0"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sql  string
		args []any
		rows int
	}{
		{"SELECT id, s, d, b FROM t WHERE id = ?", []any{int64(7)}, 1},  // an empty string
		{"SELECT id, s, d, b FROM t WHERE id = ?", []any{int64(30)}, 1}, // NULLs
		{"SELECT id, s, d, b FROM t WHERE id BETWEEN ? AND ? ORDER BY id", []any{int64(1), int64(60)}, 60},
		{"SELECT id FROM t WHERE id = ?", []any{int64(1000)}, 0},
		{"SELECT COUNT(*), SUM(d), MAX(s) FROM t WHERE id > ?", []any{int64(0)}, 1},
	} {
		st := both(c.sql)
		want, err := st["driver"].Values(ctx, c.args...)
		if err != nil || len(want) != c.rows {
			t.Fatalf("driver %q: %d rows, %v; want %d", c.sql, len(want), err, c.rows)
		}
		for _, path := range []string{"direct", "driver", "direct"} {
			got, err := st[path].Values(ctx, c.args...)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("%s %q: %q, %v; want the driver's %q", path, c.sql, got, err, want)
			}
			if n, err := st[path].Query(ctx, c.args...); err != nil || n != int64(c.rows) {
				t.Errorf("%s %q counted %d rows, %v; want %d", path, c.sql, n, err, c.rows)
			}
		}
	}
	if _, err := conn.Exec(ctx, "CREATE PROCEDURE two(IN k INT) BEGIN SELECT id FROM t WHERE id <= k; SELECT id, s FROM t WHERE id > 55; END"); err != nil {
		t.Fatal(err)
	}
	call, after := both("CALL two(?)"), both("SELECT s FROM t WHERE id = ?")
	for _, path := range []string{"direct", "driver", "direct"} {
		if got, err := call[path].Values(ctx, int64(3)); err != nil || len(got) != 8 || got[0][0] != "1" || got[6][1] != "row" || got[7][1] != "" {
			t.Errorf("%s CALL: %q, %v; want 3 + 5 rows, 1 first, then 59 row and 60 NULL last", path, got, err)
		}
		if got, err := after[path].Values(ctx, int64(59)); err != nil || len(got) != 1 || got[0][0] != "row" {
			t.Errorf("%s point query after a CALL: %q, %v; want [[row]]", path, got, err)
		}
	}
	upd := both("UPDATE t SET s = ? WHERE id <= ?")
	for i, path := range []string{"direct", "driver", "direct"} {
		if n, err := upd[path].Exec(ctx, "u"+string(rune('a'+i)), int64(25)); err != nil || n != 25 {
			t.Errorf("%s update: %d rows, %v; want 25", path, n, err)
		}
	}
	var me *gomysql.MySQLError
	if _, err := ins["direct"].Exec(ctx, int64(5), "dup", 1.0); !errors.As(err, &me) || me.Number != 1062 {
		t.Errorf("direct duplicate key: %v (%T), want a *mysql.MySQLError 1062", err, err)
	}
	point := both("SELECT s FROM t WHERE id = ?")
	if got, err := point["direct"].Values(ctx, int64(40)); err != nil || len(got) != 1 || got[0][0] != "" {
		t.Errorf("direct query after a server error: %q, %v; want one row with NULL as \"\"", got, err)
	}
	allocs := testing.AllocsPerRun(200, func() { point["direct"].Values(ctx, int64(5)) })
	driverAllocs := testing.AllocsPerRun(200, func() { point["driver"].Values(ctx, int64(5)) })
	t.Logf("allocations per text point query read as values: direct %.1f, driver %.1f", allocs, driverAllocs)
	if allocs > 4 || driverAllocs <= allocs {
		t.Errorf("allocations per text point query: direct %.1f, driver %.1f; want the direct path at most 4 and below the driver", allocs, driverAllocs)
	}
}
