package cli

import (
	"bytes"
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"benchlab/internal/disktest"
	"benchlab/internal/spec/spectest"
	"benchlab/internal/store"
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

// TestStoreFailsMidRun fills the disk of the SQLite store while a
// measured step runs (the step is a command that fills it): the step's
// result and the run's end are kept in a journal under the state dir, the
// run exits 1 naming it, and the next run stores them first, says so and
// removes the journal.
func TestStoreFailsMidRun(t *testing.T) {
	state, tmp := t.TempDir(), t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv("TMPDIR", tmp) // the run's work dir
	disk := disktest.Small(t, "size=2m")
	db := filepath.Join(disk, "r.db")
	sp := writeFile(t, t.TempDir(), "s.toml", spectest.CommandHead("full-store", spectest.Target("a", "sqlite"), 1, "1s")+`[[workload.command.steps]]
name = "fill"
parse = "none"
argv = ["sh", "-c", "dd if=/dev/zero of=`+disk+`/fill bs=64k 2>/dev/null; true"]
`)
	code, out, stderr := run(t, Env{Getenv: os.Getenv}, "run", sp, "--store", db)
	all := unwrap(out + stderr)
	if code != ExitFailure || !strings.Contains(all, filepath.Join(state, "benchlab", "pending")) || !strings.Contains(all, "full") {
		t.Fatalf("exit %d, want %d naming the journal under %s and the full disk\n%s\n%s", code, ExitFailure, state, out, stderr)
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("the failed run left %d entries in its temp dir, first %s", len(left), left[0].Name())
	}
	if err := os.Remove(filepath.Join(disk, "fill")); err != nil {
		t.Fatal(err)
	}
	// The next run stores the journal first, and says so.
	code, out, stderr = run(t, Env{Getenv: os.Getenv}, append(quickRun, "--store", db)...)
	if code != 0 || !strings.Contains(unwrap(stderr), "stored 2 result(s)") {
		t.Errorf("run after the disk has room: exit %d, want 0 saying it stored the journal\n%s\n%s", code, out, stderr)
	}
	runs := storetest.Runs(t, db, false)
	if len(runs) != 2 {
		t.Fatalf("%d runs stored, want 2", len(runs))
	}
	r := runs[0]
	var fill *store.Result
	for i := range r.Results {
		if r.Results[i].Test == "fill" {
			fill = &r.Results[i]
		}
	}
	if r.Status != store.StatusFailed || fill == nil || fill.Status != store.StatusOK || fill.Seconds <= 0 {
		t.Errorf("stored run %s (%s), results %+v; want failed, with the fill step's result ok", r.Status, r.Error, r.Results)
	}
	if left, _ := filepath.Glob(filepath.Join(state, "benchlab", "pending", "*")); len(left) > 0 {
		t.Errorf("journals left after the replay: %v", left)
	}
}
