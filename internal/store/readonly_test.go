package store_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
	"benchlab/internal/server"
	"benchlab/internal/store"
)

// TestOpenReadOnly: a store opened read-only reads what was stored and
// refuses every write, on both backends; the SQLite file stays as it was.
func TestOpenReadOnly(t *testing.T) {
	file := filepath.Join(t.TempDir(), "r.db")
	rw, err := store.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	sample(t, rw)
	rw.Close()
	before, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	check := func(t *testing.T, path string) {
		ro, err := store.OpenReadOnly(path)
		if err != nil {
			t.Fatal(err)
		}
		defer ro.Close()
		ctx := context.Background()
		es, err := ro.Experiments(ctx)
		if err != nil || len(es) != 1 || es[0].Name != "lab" {
			t.Fatalf("experiments %+v, %v", es, err)
		}
		if err := ro.CreateExperiment(ctx, &store.Experiment{Name: "x", Base: "a", Targets: []string{"a"}}); err == nil ||
			!strings.Contains(strings.ToLower(err.Error()), "read") {
			t.Errorf("a write through a read-only store: %v, want a read-only error", err)
		}
	}
	t.Run("sqlite", func(t *testing.T) {
		check(t, file)
		if after, _ := os.ReadFile(file); string(after) != string(before) {
			t.Error("the file changed")
		}
	})
	t.Run("postgres", func(t *testing.T) {
		db := enginetest.Open(t, engine.Target{Name: "ro", Engine: "postgres",
			Getenv: func(k string) string { return map[string]string{"BENCHLAB_SERVER_LOGS": t.TempDir()}[k] }})
		in := db.(interface{ Instance() *server.Instance }).Instance()
		dsn := fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/sbtest?sslmode=disable", in.Password(), in.Port)
		pg, err := store.Open(dsn)
		if err != nil {
			t.Fatal(err)
		}
		sample(t, pg)
		pg.Close()
		check(t, dsn)
	})
}
