package cli

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	"benchlab/internal/engine/sqlite"
	"benchlab/internal/spec"
	"benchlab/internal/store"
)

// TestRepeatSeeds: every repeat has its own seed, the
// same for both targets of the repeat, stored in the manifests; the loaded
// data follows it (the same rows for both targets of a repeat, other rows
// in the next repeat); rerun runs each repeat again with its seed and
// loads the same rows.
func TestRepeatSeeds(t *testing.T) {
	dir := t.TempDir()
	storeFile := filepath.Join(dir, "r.db")
	sp := writeFile(t, dir, "s.toml", `name = "seeds"
seed = 7
[[target]]
name = "a"
engine = "sqlite"
[[target]]
name = "b"
engine = "sqlite"
[target.settings]
synchronous = "off"
[workload]
tests = ["point-query"]
table_size = 1000
threads = [1]
read_time = "200ms"
warmup = "0s"
report_interval = "0s"
repeats = 3
`)
	work := filepath.Join(dir, "w1")
	if code, out, stderr := run(t, Env{}, "run", sp, "--store", storeFile, "--workdir", work, "--keep-data"); code != 0 {
		t.Fatalf("run exit %d\n%s\n%s", code, out, stderr)
	}
	st, err := store.Open(storeFile)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	seeds := func(exp int64) map[string]uint64 {
		runs, err := st.Runs(context.Background(), exp)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]uint64{}
		for _, r := range runs {
			m := store.ParseManifest(r.Manifest)
			if m.Seed != 7 || m.RepeatSeed != spec.RepeatSeed(7, r.Repeat) {
				t.Errorf("%s repeat %d: seed %d repeat seed %d, want 7 and %d", r.Target, r.Repeat, m.Seed, m.RepeatSeed,
					spec.RepeatSeed(7, r.Repeat))
			}
			out[fmt.Sprintf("%s-r%d", r.Target, r.Repeat)] = m.RepeatSeed
		}
		return out
	}
	first := seeds(1)
	if len(first) != 6 {
		t.Fatalf("%d runs, want 6", len(first))
	}
	for r := 1; r <= 3; r++ {
		a, b := first[fmt.Sprintf("a-r%d", r)], first[fmt.Sprintf("b-r%d", r)]
		if a != b {
			t.Errorf("repeat %d: seeds %d and %d differ between targets", r, a, b)
		}
		if r > 1 && a == first[fmt.Sprintf("a-r%d", r-1)] {
			t.Errorf("repeats %d and %d share seed %d", r-1, r, a)
		}
	}
	data := func(work, cell string) string {
		db, err := sql.Open("sqlite3", "file:"+filepath.Join(work, cell, sqlite.FileName)+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var sum int64
		var c string
		if err := db.QueryRow("SELECT sum(k), group_concat(c, '') FROM sbtest1").Scan(&sum, &c); err != nil {
			t.Fatalf("%s: %v", cell, err)
		}
		return fmt.Sprintf("%d/%x", sum, c[:64])
	}
	if data(work, "a-r1") != data(work, "b-r1") {
		t.Error("targets of repeat 1 loaded different rows; the comparison is no longer paired")
	}
	if data(work, "a-r1") == data(work, "a-r2") {
		t.Error("repeats 1 and 2 loaded the same rows")
	}
	if code, out, stderr := run(t, Env{}, "rerun", "--store", storeFile, "--experiment", "1", "--yes"); code != 0 {
		t.Fatalf("rerun exit %d\n%s\n%s", code, out, stderr)
	}
	again := seeds(2)
	for cell, s := range first {
		if again[cell] != s {
			t.Errorf("rerun %s: seed %d, want %d", cell, again[cell], s)
		}
	}
}
