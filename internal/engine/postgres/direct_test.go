package postgres_test

import (
	"benchlab/internal/spec"
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
	"benchlab/internal/server/servertest"
)

// TestDirectErrors runs short statements, which on the fast client path
// bypass pgconn's result reader (package fastpath), into the server's
// errors, on both client paths: each comes back as a
// *pgconn.PgError with its code, the connection stays in step for the next
// statement, several results of one text statement all count, and a FATAL
// error (the backend terminated) leaves a lost connection.
func TestDirectErrors(t *testing.T) {
	for _, client := range []engine.Client{engine.ClientFast, engine.ClientDriver} {
		t.Run(string(client), func(t *testing.T) { directErrors(t, client) })
	}
}

func directErrors(t *testing.T, client engine.Client) {
	getenv, _ := servertest.Env(t)
	ctx := context.Background()
	db := enginetest.Open(t, engine.Target{Name: "direct", Engine: "postgres", Client: client, Getenv: getenv})
	info, err := db.Info(ctx)
	if err != nil || info.Client != string(client) {
		t.Fatalf("Info: client %q, %v; want %s", info.Client, err, client)
	}
	// A sweep's bare number is checked in the setting's unit.
	if u := info.SettingUnits["shared_buffers"]; u != "8kB" {
		t.Errorf("Info: shared_buffers unit %q, want 8kB (units %v)", u, info.SettingUnits)
	}
	if c := spec.CheckSetting("shared_buffers", "1", info.Settings, info.SettingUnits); c.Outcome != spec.SettingDiffers {
		t.Errorf("shared_buffers = 1 (8kB) against %s: %s, want differs", info.Settings["shared_buffers"], c)
	}
	conn := enginetest.Connect(t, db)
	if _, err := conn.Exec(ctx, "CREATE TABLE d (id INT PRIMARY KEY, v INT)"); err != nil {
		t.Fatal(err)
	}
	stmt := func(sql string, text bool) engine.Stmt {
		t.Helper()
		st, err := engine.PrepareOrText(ctx, conn, sql, engine.Short, text)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	for _, text := range []bool{false, true} {
		ins := stmt("INSERT INTO d (id, v) VALUES ($1, $2)", text)
		sel := stmt("SELECT v FROM d WHERE id >= $1", text)
		id := 1
		if text {
			id = 2
		}
		if n, err := ins.Exec(ctx, id, 10); err != nil || n != 1 {
			t.Fatalf("text %v: insert: %d rows, %v", text, n, err)
		}
		_, err := ins.Exec(ctx, id, 11)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "23505" {
			t.Fatalf("text %v: duplicate insert: %v, want a unique violation (23505)", text, err)
		}
		if errors.Is(err, engine.ErrConnLost) {
			t.Errorf("text %v: a unique violation marked as a lost connection: %v", text, err)
		}
		if rows, err := sel.Values(ctx, id); err != nil || len(rows) != 1 || rows[0][0] != "10" {
			t.Fatalf("text %v: select after the error: %q, %v; want [[10]]", text, rows, err)
		}
	}
	upd := stmt("UPDATE d SET v = v + 1", false)
	if n, err := upd.Exec(ctx); err != nil || n != 2 {
		t.Fatalf("update: %d rows changed, %v; want 2", n, err)
	}
	multi := stmt("SELECT 1 UNION ALL SELECT 2; UPDATE d SET v = v + 1; SELECT 3", true)
	if n, err := multi.Query(ctx); err != nil || n != 3 {
		t.Fatalf("three results as one text statement: %d rows, %v; want 3", n, err)
	}
	if n, err := multi.Exec(ctx); err != nil || n != 2+2+1 {
		t.Fatalf("three results as one text statement: %d rows changed, %v; want 5 (as pgconn counts them)", n, err)
	}
	kill := stmt("SELECT pg_terminate_backend(pg_backend_pid())", true)
	if _, err := kill.Query(ctx); err == nil || !errors.Is(err, engine.ErrConnLost) {
		t.Fatalf("terminated backend: %v; want a lost connection", err)
	}
	if _, err := stmt("SELECT 1", true).Query(ctx); !errors.Is(err, engine.ErrConnLost) {
		t.Fatalf("statement on the closed connection: %v; want a lost connection", err)
	}
}
