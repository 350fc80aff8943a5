package cli

import (
	"bytes"
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"benchlab/internal/store/storetest"
)

// quickRun is a one-second point-query run on SQLite.
var quickRun = []string{"run", "--engine", "sqlite", "--tests", "point-query", "--table-size", "1000",
	"--time", "1", "--warmup", "0s", "--report-interval", "0s"}

// TestStoreAnyName runs into a store whose name holds '#', '?', '%' and
// a space: the results are in that file (and no other is made), and the
// report reads them back.
func TestStoreAnyName(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "res #1?x=%41.db")
	if code, out, stderr := run(t, Env{}, append(quickRun, "--store", db)...); code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, stderr)
	}
	es, _ := os.ReadDir(dir)
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{filepath.Base(db)}) {
		t.Errorf("files %q, want only %q", names, filepath.Base(db))
	}
	if r := storetest.OneRun(t, db, false); r.Status != "ok" || len(r.Results) == 0 {
		t.Errorf("stored run %+v", r.Run)
	}
	if code, out, stderr := run(t, Env{}, "report", "--store", db); code != 0 || !strings.Contains(out, "point-query") {
		t.Errorf("report: exit %d\n%s\n%s", code, out, stderr)
	}
}

// TestStoreRefused: another program's SQLite database, or a corrupt
// store, given as --store is refused with exit 2 and a message naming
// the file, before anything runs, and left as it was.
func TestStoreRefused(t *testing.T) {
	dir := t.TempDir()
	foreign := filepath.Join(dir, "app.db")
	db, err := sql.Open("sqlite3", foreign)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE accounts (id INTEGER PRIMARY KEY, owner TEXT)`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	corrupt := filepath.Join(dir, "r.db")
	if code, out, stderr := run(t, Env{}, append(quickRun, "--store", corrupt)...); code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, stderr)
	}
	b, err := os.ReadFile(corrupt)
	if err != nil || len(b) < 8*4096 {
		t.Fatalf("store of %d bytes (%v), want over 8 pages", len(b), err)
	}
	copy(b[len(b)-4*4096:len(b)-3*4096], bytes.Repeat([]byte{0x5A}, 4096))
	if err := os.WriteFile(corrupt, b, 0o644); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		path string
		args []string
		want string
	}{
		{foreign, quickRun, "not a benchlab results store"},
		{foreign, []string{"report"}, "not a benchlab results store"},
		{corrupt, quickRun, "corrupt"},
		{corrupt, []string{"runs"}, "corrupt"},
	} {
		before, _ := os.ReadFile(c.path)
		code, out, stderr := run(t, Env{}, append(slices.Clone(c.args), "--store", c.path)...)
		if msg := unwrap(stderr); code != ExitUsage || !strings.Contains(msg, c.want) || !strings.Contains(msg, c.path) {
			t.Errorf("%s %v: exit %d, stderr %q; want %d naming the file and %q", c.args[0], c.path, code, stderr, ExitUsage, c.want)
		}
		if strings.Contains(out, "== run") {
			t.Errorf("%s %v: ran before refusing the store:\n%s", c.args[0], c.path, out)
		}
		if after, _ := os.ReadFile(c.path); !bytes.Equal(before, after) {
			t.Errorf("%s %v: the file was changed", c.args[0], c.path)
		}
	}
}
