package cli

import (
	"bytes"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// seedHistory runs a real experiment into storeFile: two SQLite targets,
// repeats runs of each, point-query and update-index at 1 thread for 1 s.
func seedHistory(tb testing.TB, dir, storeFile string, repeats int) {
	tb.Helper()
	sp := filepath.Join(dir, "spec.toml")
	body := fmt.Sprintf(`name = "history"
[[target]]
name = "wal"
engine = "sqlite"
settings = { journal_mode = "wal", synchronous = "normal" }
[[target]]
name = "delete"
engine = "sqlite"
settings = { journal_mode = "delete", synchronous = "full" }
[workload]
tests = ["point-query", "update-index"]
table_size = 1000
threads = [1]
read_time = "1s"
write_time = "1s"
warmup = "0s"
postwrite_wait = "0s"
repeats = %d
`, repeats)
	if err := os.WriteFile(sp, []byte(body), 0o644); err != nil {
		tb.Fatal(err)
	}
	var out, errb bytes.Buffer
	env := Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	if code := Main(env, []string{"run", sp, "--store", storeFile, "--yes"}); code != 0 {
		tb.Fatalf("seed run exit %d: %s", code, errb.String())
	}
}

// replicateHistory copies every stored experiment copies times, with its
// runs, results and 1-second series, under new ids, in one transaction, so
// a store holds (copies+1) times the history it had. The copies are made in
// SQL: running them would take hours.
func replicateHistory(tb testing.TB, storeFile string, copies int) {
	tb.Helper()
	db, err := sql.Open("sqlite3", "file:"+storeFile+"?_journal_mode=WAL")
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		tb.Fatal(err)
	}
	defer tx.Rollback()
	maxID := func(table, col string) int64 {
		var n sql.NullInt64
		if err := tx.QueryRow("SELECT max(" + col + ") FROM " + table).Scan(&n); err != nil {
			tb.Fatal(err)
		}
		return n.Int64
	}
	shift := map[string]int64{"experiments": maxID("experiments", "id"), "runs": maxID("runs", "id"),
		"results": maxID("results", "id")}
	// Which columns hold which table's ids.
	refs := map[string]map[string]string{
		"experiments": {"id": "experiments"},
		"runs":        {"id": "runs", "experiment_id": "experiments"},
		"results":     {"id": "results", "run_id": "runs"},
		"intervals":   {"result_id": "results"},
	}
	for _, table := range []string{"experiments", "runs", "results", "intervals"} {
		rows, err := tx.Query("SELECT name FROM pragma_table_info('" + table + "')")
		if err != nil {
			tb.Fatal(err)
		}
		var cols, sel []string
		for rows.Next() {
			var c string
			if err := rows.Scan(&c); err != nil {
				tb.Fatal(err)
			}
			cols = append(cols, c)
			if to, ok := refs[table][c]; ok {
				sel = append(sel, fmt.Sprintf("%s + n.k * %d", c, shift[to]))
			} else {
				sel = append(sel, c)
			}
		}
		rows.Close()
		q := fmt.Sprintf(`WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < %d)
			INSERT INTO %s (%s) SELECT %s FROM n, %s ORDER BY n.k`, copies, table, strings.Join(cols, ", "),
			strings.Join(sel, ", "), table)
		if _, err := tx.Exec(q); err != nil {
			tb.Fatalf("replicate %s: %v", table, err)
		}
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
}

// TestRunsPages lists a store of 62 runs: 50 by default, newest first, with
// a note naming the next page; --offset pages back; a bad flag is a usage
// error.
func TestRunsPages(t *testing.T) {
	dir := t.TempDir()
	storeFile := filepath.Join(dir, "r.db")
	seedHistory(t, dir, storeFile, 1)
	replicateHistory(t, storeFile, 30) // 31 experiments of 2 runs
	code, out, stderr := run(t, Env{}, "runs", "--store", storeFile)
	if code != 0 {
		t.Fatalf("runs exit %d: %s", code, stderr)
	}
	if n := strings.Count(out, "\n  run "); n != 50 {
		t.Errorf("default page lists %d runs, want 50", n)
	}
	if !strings.HasPrefix(out, "experiment 31 ") || !strings.Contains(out, "  run 61 ") || strings.Contains(out, "  run 12 ") {
		t.Errorf("default page is not the newest 50 runs (62 down to 13):\n%s", out)
	}
	if !strings.Contains(out, "(runs 1-50 of 62, newest first; --offset 50 for the next page") {
		t.Errorf("no paging note:\n%s", out)
	}
	code, out, _ = run(t, Env{}, "runs", "--store", storeFile, "--limit", "10", "--offset", "55")
	if code != 0 || strings.Count(out, "\n  run ") != 7 || !strings.Contains(out, "(runs 56-62 of 62") ||
		!strings.HasPrefix(out, "experiment 4 ") {
		t.Errorf("last page: exit %d\n%s", code, out)
	}
	code, out, _ = run(t, Env{}, "runs", "--store", storeFile, "--limit", "0")
	if code != 0 || strings.Count(out, "\n  run ") != 62 || strings.Contains(out, "(runs") {
		t.Errorf("--limit 0: exit %d, %d runs listed", code, strings.Count(out, "\n  run "))
	}
	for _, bad := range [][]string{{"--limit", "-1"}, {"--offset", "-3"}} {
		code, _, stderr = run(t, Env{}, append([]string{"runs", "--store", storeFile}, bad...)...)
		if code != 2 || !strings.Contains(unwrap(stderr), bad[0]) {
			t.Errorf("runs %v: exit %d, %q; want 2 naming the flag", bad, code, stderr)
		}
	}
}

// BenchmarkLongHistory fills a store with 10,000 runs (a real experiment of
// 10 runs, copied 999 times in SQL, as an imported store's are: none is
// learned into the noise history yet) and times report, compare and runs
// on it (target: report and compare under 2 s). The first report on the
// store learns the 999 copies (noise.Backfill): first_report_s times it,
// and first_compare_s a compare that is the first command on a second copy
// of the unlearned store; the others time the commands that follow.
// Reported as seconds per command.
func BenchmarkLongHistory(b *testing.B) {
	dir := b.TempDir()
	storeFile := filepath.Join(dir, "r.db")
	seedHistory(b, dir, storeFile, 5)
	fill := time.Now()
	replicateHistory(b, storeFile, 999)
	b.Logf("filled a store of 10,000 runs in %s", time.Since(fill).Round(time.Millisecond))
	compareFile := filepath.Join(dir, "c.db")
	copyFile(b, storeFile, compareFile)
	// timeCPU runs a command on file and returns its wall-clock and CPU
	// seconds (the process's, user and system: on a shared machine the
	// wall clock also counts the time other processes held the CPUs).
	timeCPU := func(file string, args ...string) (wall, cpu float64) {
		var out, errb bytes.Buffer
		env := Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
		start, cpu0 := time.Now(), processCPU()
		if code := Main(env, append(args, "--store", file)); code != 0 {
			b.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		return time.Since(start).Seconds(), processCPU() - cpu0
	}
	timeIt := func(file string, args ...string) float64 {
		wall, _ := timeCPU(file, args...)
		return wall
	}
	b.ResetTimer()
	firstReport, firstReportCPU := timeCPU(storeFile, "report")
	firstCompare, firstCompareCPU := timeCPU(compareFile, "compare")
	for range b.N {
		b.ReportMetric(timeIt(storeFile, "report"), "report_s")
		b.ReportMetric(timeIt(storeFile, "compare"), "compare_s")
		b.ReportMetric(timeIt(storeFile, "report", "--experiment", "1"), "report_oldest_s")
		b.ReportMetric(timeIt(storeFile, "runs"), "runs_s")
	}
	b.ReportMetric(firstReport, "first_report_s")
	b.ReportMetric(firstReportCPU, "first_report_cpu_s")
	b.ReportMetric(firstCompare, "first_compare_s")
	b.ReportMetric(firstCompareCPU, "first_compare_cpu_s")
}

// processCPU is the CPU time the process has used, user and system, in
// seconds.
func processCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// copyFile copies a closed SQLite store (no write-ahead log left) to dst.
func copyFile(tb testing.TB, src, dst string) {
	tb.Helper()
	if _, err := os.Stat(src + "-wal"); err == nil {
		tb.Fatalf("%s has a write-ahead log: close it before copying", src)
	}
	body, err := os.ReadFile(src)
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(dst, body, 0o644); err != nil {
		tb.Fatal(err)
	}
}
