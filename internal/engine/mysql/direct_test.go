package mysql_test

import (
	"context"
	"errors"
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
