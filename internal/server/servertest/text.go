package servertest

import (
	"context"
	"fmt"
	"testing"

	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
)

// TextStatements checks a managed server's text statements
// (engine.PrepareOrText with prepared statements off) against the same
// statements prepared: arguments with quotes, backslashes and double quotes,
// a negative number after a minus sign (which must not become a comment),
// NULL and large integers go in and come back as they went, and the rows
// changed and counted agree.
func TextStatements(t *testing.T, engineName string) {
	t.Helper()
	getenv, _ := Env(t)
	ctx := context.Background()
	db := enginetest.Open(t, engine.Target{Name: "text", Engine: engineName, Getenv: getenv})
	sqldb := db.(engine.SQL)
	conn, err := sqldb.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, ok := conn.(engine.TextPreparer); !ok {
		t.Errorf("%s connections make no text statements of their own (engine.TextPreparer)", engineName)
	}
	d := sqldb.Dialect()
	if _, err := conn.Exec(ctx, "CREATE TABLE textstmt (id INT PRIMARY KEY, s VARCHAR(100), v BIGINT)"); err != nil {
		t.Fatal(err)
	}
	stmt := func(sql string, text bool) engine.Stmt {
		t.Helper()
		st, err := engine.PrepareOrText(ctx, conn, d.Bind(sql), engine.Short, text)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	strs := []any{"it's", `back\slash`, `quo"te`, "", nil, "two''quotes", "new\nline"}
	for i, s := range strs {
		// Odd rows go in as text, even ones prepared.
		ins := stmt("INSERT INTO textstmt (id, s, v) VALUES (?, ?, ?)", i%2 == 1)
		if n, err := ins.Exec(ctx, i, s, int64(1)<<40+int64(i)); err != nil || n != 1 {
			t.Fatalf("insert %d (%q): %d rows, %v", i, s, n, err)
		}
	}
	// v - (-5) must add 5: "v - -5" is a comment in SQL unless spaced.
	upd := stmt("UPDATE textstmt SET v = v -? WHERE id >= ?", true)
	if n, err := upd.Exec(ctx, -5, 0); err != nil || n != int64(len(strs)) {
		t.Fatalf("update: %d rows, %v; want %d", n, err, len(strs))
	}
	sel := map[bool]engine.Stmt{true: stmt("SELECT s, v FROM textstmt WHERE id = ? AND s IS NOT DISTINCT FROM ?", true)}
	if d.Name == engine.MySQL.Name {
		sel[true] = stmt("SELECT s, v FROM textstmt WHERE id = ? AND s <=> ?", true)
		sel[false] = stmt("SELECT s, v FROM textstmt WHERE id = ? AND s <=> ?", false)
	} else {
		sel[false] = stmt("SELECT s, v FROM textstmt WHERE id = ? AND s IS NOT DISTINCT FROM ?", false)
	}
	for i, s := range strs {
		for _, text := range []bool{true, false} {
			rows, err := sel[text].Values(ctx, i, s)
			if err != nil {
				t.Fatalf("select %d (text %v): %v", i, text, err)
			}
			want := fmt.Sprint(s)
			if s == nil {
				want = ""
			}
			if len(rows) != 1 || rows[0][0] != want || rows[0][1] != fmt.Sprint(int64(1)<<40+int64(i)+5) {
				t.Errorf("row %d (text %v): %q; want [%q %d]", i, text, rows, want, int64(1)<<40+int64(i)+5)
			}
			if n, err := sel[text].Query(ctx, i, s); err != nil || n != 1 {
				t.Errorf("count row %d (text %v): %d, %v; want 1", i, text, n, err)
			}
		}
	}
	// Transaction control as text, and a rolled-back change.
	begin, rollback := stmt(d.BeginWrite, true), stmt("ROLLBACK", true)
	del := stmt("DELETE FROM textstmt WHERE id < ?", true)
	if _, err := begin.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := del.Exec(ctx, 3); err != nil || n != 3 {
		t.Fatalf("delete: %d rows, %v; want 3", n, err)
	}
	if _, err := rollback.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	all := stmt("SELECT id FROM textstmt", true)
	if n, err := all.Query(ctx); err != nil || n != int64(len(strs)) {
		t.Errorf("after rollback: %d rows, %v; want %d", n, err, len(strs))
	}
}
