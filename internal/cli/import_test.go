package cli_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "benchlab/internal/all"
	"benchlab/internal/cli"
	"benchlab/internal/engine"
	"benchlab/internal/engine/postgres"
	"benchlab/internal/server"
	"benchlab/internal/server/servertest"
	"benchlab/internal/store"
)

// main runs a command line in-process: its exit code and outputs.
func main(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := cli.Main(cli.Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}, args)
	return code, out.String(), errb.String()
}

// need skips a test without a program, and fails it in CI, which installs
// every one.
func need(t *testing.T, prog string) {
	t.Helper()
	if _, err := exec.LookPath(prog); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s not found; CI installs it", prog)
		}
		t.Skipf("%s not installed", prog)
	}
}

// sysbenchRuns runs sysbench 1.0.20's oltp_point_select for real, 2 s with
// a report every second, n times against a PostgreSQL 15 server the test
// starts, and returns the output files and the server's URL (it runs until
// the test ends).
func sysbenchRuns(t *testing.T, dir string, n int) ([]string, string) {
	t.Helper()
	need(t, "sysbench")
	if _, err := server.FindBinaries(postgres.Flavor, ""); err != nil {
		t.Skipf("no PostgreSQL install: %v", err)
	}
	drv, _ := engine.Lookup("postgres")
	getenv, _ := servertest.Env(t)
	ctx := context.Background()
	db, err := drv.Open(ctx, engine.Target{Name: "pg", Engine: "postgres", Getenv: getenv}, filepath.Join(dir, "pg"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	in := db.(interface{ Instance() *server.Instance }).Instance()
	port := in.Port
	common := []string{"oltp_point_select", "--db-driver=pgsql", "--pgsql-host=127.0.0.1", "--pgsql-port=" + strconv.Itoa(port),
		"--pgsql-user=postgres", "--pgsql-password=" + in.Password(), "--pgsql-db=" + postgres.Database, "--tables=1", "--table-size=1000"}
	if out, err := exec.Command("sysbench", append(common, "prepare")...).CombinedOutput(); err != nil {
		t.Fatalf("sysbench prepare: %v\n%s", err, out)
	}
	var files []string
	for i := range n {
		out, err := exec.Command("sysbench", append(common, "--time=2", "--report-interval=1", "--threads=1", "run")...).CombinedOutput()
		if err != nil {
			t.Fatalf("sysbench run: %v\n%s", err, out)
		}
		f := filepath.Join(dir, fmt.Sprintf("point-query.%d.txt", i+1))
		if err := os.WriteFile(f, out, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files, fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/postgres?sslmode=disable", in.Password(), port)
}

// dbbenchRuns runs Debian's db_bench (RocksDB 7.8.3) n times on a fresh
// database each: fillseq, then readrandom for 1 s with interval reports.
func dbbenchRuns(t *testing.T, dir string, n int) []string {
	t.Helper()
	need(t, "db_bench")
	var files []string
	for i := range n {
		db := filepath.Join(dir, fmt.Sprintf("db%d", i))
		out, err := exec.Command("db_bench", "--db="+db, "--benchmarks=fillseq,readrandom", "--num=5000", "--duration=1",
			"--threads=1", "--histogram=1", "--stats_interval_seconds=1", "--compression_type=none").CombinedOutput()
		if err != nil {
			t.Fatalf("db_bench: %v\n%s", err, out)
		}
		f := filepath.Join(dir, fmt.Sprintf("dbb.%d.log", i+1))
		if err := os.WriteFile(f, out, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		os.RemoveAll(db)
	}
	return files
}

// storedRuns returns the experiment's runs by file and their results.
func storedRuns(t *testing.T, storeFile string) (map[string]store.Run, map[string][]store.Result) {
	t.Helper()
	st, err := store.Open(storeFile)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	byFile, results := map[string]store.Run{}, map[string][]store.Result{}
	for _, r := range runs {
		src := store.ParseManifest(r.Manifest).Import
		if src == nil {
			t.Fatalf("run %d has no import source in its manifest:\n%s", r.ID, r.Manifest)
		}
		byFile[src.File] = r
		if results[src.File], err = st.Results(context.Background(), r.ID, true); err != nil {
			t.Fatal(err)
		}
	}
	return byFile, results
}

func fileSHA(t *testing.T, f string) string {
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// number is the first submatch of re in s, as a float.
func number(t *testing.T, re, s string) float64 {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("no %s in:\n%s", re, s)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestImportSysbench imports four real sysbench runs as two targets of two
// repeats each, checks the stored figures against the files, then reads
// the experiment back through report, compare, the JSON export, runs and
// rerun.
func TestImportSysbench(t *testing.T) {
	dir := t.TempDir()
	files, pgStore := sysbenchRuns(t, dir, 4)
	storeFile := filepath.Join(dir, "r.db")
	before := time.Now()
	code, out, errOut := main("import", "--tool", "sysbench", "--target", "pg15="+files[0]+","+files[1],
		"--target", "pg15b="+filepath.Join(dir, "point-query.[34].txt"), "--engine", "postgres", "--store", storeFile)
	if code != 0 {
		t.Fatalf("import: exit %d\n%s\n%s", code, out, errOut)
	}
	byFile, results := storedRuns(t, storeFile)
	if len(byFile) != 4 {
		t.Fatalf("%d runs stored, want 4", len(byFile))
	}
	for i, f := range files {
		text, _ := os.ReadFile(f)
		run, rs := byFile[f], results[f]
		src := store.ParseManifest(run.Manifest).Import
		wantTarget := map[bool]string{true: "pg15", false: "pg15b"}[i < 2]
		if run.Target != wantTarget || run.Engine != "postgres" || run.Repeat != i%2+1 || run.Status != store.StatusOK {
			t.Errorf("%s: run %+v; want target %s repeat %d", f, run, wantTarget, i%2+1)
		}
		if src.Tool != "sysbench" || src.SHA256 != fileSHA(t, f) || !strings.HasPrefix(src.ToolVersion, "sysbench 1.0.20") ||
			src.Imported.Before(before.Truncate(time.Second)) || src.Imported.After(time.Now()) {
			t.Errorf("%s: import source %+v", f, src)
		}
		if len(rs) != 1 {
			t.Fatalf("%s: %d results, want 1", f, len(rs))
		}
		r := rs[0]
		qps := number(t, `queries:\s+\d+\s+\((\S+) per sec`, string(text))
		queries := number(t, `queries:\s+(\d+)`, string(text))
		p95 := number(t, `95th percentile:\s+(\S+)`, string(text))
		if r.Test != "point-query" || r.Group != "point queries" || r.Threads != 1 || r.Metric != "qps" {
			t.Errorf("%s: %s (%s) at %d threads, metric %s", f, r.Test, r.Group, r.Threads, r.Metric)
		}
		if math.Abs(r.Throughput()-qps) > 0.005 || float64(r.Statements) != queries {
			t.Errorf("%s: stored %.2f qps of %d queries; the file says %.2f of %.0f", f, r.Throughput(), r.Statements, qps, queries)
		}
		if math.Abs(r.Latency.P95.Seconds()*1000-p95) > 1e-9 || r.Latency.P50 != 0 || r.Eff != nil {
			t.Errorf("%s: latency %+v, efficiency %+v; want p95 %.2f ms only and no efficiency", f, r.Latency, r.Eff, p95)
		}
		if n := strings.Count(string(text), "] thds: 1 tps: "); len(r.Intervals) != n || n == 0 {
			t.Errorf("%s: %d intervals stored, the file has %d", f, len(r.Intervals), n)
		}
	}

	code, out, errOut = main("report", "--store", storeFile, "--color", "never")
	if code != 0 {
		t.Fatalf("report: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, w := range []string{"imported from sysbench output", "target pg15: postgres; sysbench 1.0.20", "Relative throughput: QPS(target) / QPS(pg15)",
		"point-query", files[0], "as the imported tool printed them", "n/a"} {
		if !strings.Contains(out, w) {
			t.Errorf("report lacks %q:\n%s", w, out)
		}
	}
	for _, bad := range []string{"host:", "0 cores", "ran for", "cpu/o"} {
		if strings.Contains(out, bad) {
			t.Errorf("report of imported runs has %q (a figure the files do not have):\n%s", bad, out)
		}
	}
	code, out, errOut = main("compare", "--store", storeFile, "--color", "never")
	if code != 0 || !strings.Contains(out, "verdicts over 1 cells") {
		t.Errorf("compare: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, _ = main("report", "--store", storeFile, "--format", "json")
	var doc struct {
		Results []struct {
			Test       string   `json:"test"`
			QPS        float64  `json:"qps"`
			ServerCPUS *float64 `json:"server_cpu_s"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &doc); code != 0 || err != nil || len(doc.Results) != 4 || doc.Results[0].QPS <= 0 ||
		doc.Results[0].ServerCPUS != nil {
		t.Errorf("json export: exit %d, %v, %+v\n%.600s", code, err, doc, out)
	}
	code, out, _ = main("runs", "--store", storeFile)
	if code != 0 || strings.Count(out, "imported from") != 4 {
		t.Errorf("runs: exit %d; want 4 runs shown as imported:\n%s", code, out)
	}
	code, out, errOut = main("rerun", "--store", storeFile)
	if code != cli.ExitUsage || !strings.Contains(errOut, "imported from sysbench output") || !strings.Contains(errOut, "not run by benchlab") {
		t.Errorf("rerun of an imported experiment: exit %d\n%s\n%s; want exit 2 saying it was imported", code, out, errOut)
	}

	// A lab's shared PostgreSQL store (on the same server) keeps the
	// same import.
	code, out, errOut = main("import", "--tool", "sysbench", "--target", "pg15="+files[0]+","+files[1],
		"--target", "pg15b="+files[2]+","+files[3], "--engine", "postgres", "--store", pgStore)
	if code != 0 {
		t.Fatalf("import into PostgreSQL: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = main("compare", "--store", pgStore, "--color", "never")
	if code != 0 || !strings.Contains(out, "verdicts over 1 cells") {
		t.Errorf("compare from PostgreSQL: exit %d\n%s\n%s", code, out, errOut)
	}
	pg, err := store.Open(pgStore)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	runs, err := pg.Runs(context.Background(), 0)
	if err != nil || len(runs) != 4 || store.ParseManifest(runs[3].Manifest).Import.SHA256 != fileSHA(t, files[3]) {
		t.Errorf("runs in PostgreSQL: %v, %d, want 4 with the files' sha256", err, len(runs))
	}
	if rs, err := pg.Results(context.Background(), runs[0].ID, true); err != nil || len(rs) != 1 ||
		rs[0].Throughput() != results[files[0]][0].Throughput() || len(rs[0].Intervals) != len(results[files[0]][0].Intervals) {
		t.Errorf("results in PostgreSQL: %v, %+v; want those of the SQLite store", err, rs)
	}
}

// TestImportDBBench imports six real db_bench runs as a sequence of three
// targets of two repeats: one cell per benchmark, db_bench's ops/sec and
// histogram as stored, compare judges both cells of both targets and
// locates changes along the sequence.
func TestImportDBBench(t *testing.T) {
	dir := t.TempDir()
	files := dbbenchRuns(t, dir, 6)
	storeFile := filepath.Join(dir, "r.db")
	code, out, errOut := main("import", "--tool", "dbbench", "--target", "a="+files[0]+","+files[1],
		"--target", "b="+files[2]+","+files[3], "--target", "c="+files[4]+","+files[5], "--sequence",
		"--store", storeFile, "--experiment-name", "dbb")
	if code != 0 {
		t.Fatalf("import: exit %d\n%s\n%s", code, out, errOut)
	}
	// The import teaches the noise model what it stored, so a report on
	// the store only reads.
	st, err := store.Open(storeFile)
	if err != nil {
		t.Fatal(err)
	}
	unlearned, err := st.Unlearned(context.Background())
	st.Close()
	if err != nil || len(unlearned) != 0 {
		t.Errorf("after import the noise model has not learned experiments %v (%v)", unlearned, err)
	}
	byFile, results := storedRuns(t, storeFile)
	for _, f := range files {
		text, _ := os.ReadFile(f)
		run, rs := byFile[f], results[f]
		if run.Engine != "db_bench" || run.Version != "7.8.3" || len(rs) != 2 {
			t.Fatalf("%s: run %s %s with %d results; want db_bench 7.8.3 with fillseq and readrandom", f, run.Engine, run.Version, len(rs))
		}
		for _, r := range rs {
			line := `(?m)^` + r.Test + `\s+:\s+\S+ micros/op `
			ops := number(t, line+`(\d+) ops/sec`, string(text))
			n := number(t, line+`\d+ ops/sec \S+ seconds (\d+) operations`, string(text))
			if math.Abs(r.Throughput()-ops) > 0.01 || float64(r.Events) != n || r.Threads != 1 || r.Latency.P99 <= 0 {
				t.Errorf("%s %s: stored %.2f ops/s, %d operations, %d threads, %+v; the file says %.0f, %.0f", f, r.Test,
					r.Throughput(), r.Events, r.Threads, r.Latency, ops, n)
			}
		}
	}
	code, out, errOut = main("compare", "--store", storeFile, "--color", "never")
	if code != 0 || !strings.Contains(out, "verdicts over 4 cells") || !strings.Contains(out, "readrandom") ||
		!strings.Contains(out, "Changes across the sequence") || !strings.Contains(out, "noise model of none: the runs name no host") {
		t.Errorf("compare: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestImportBadInput refuses bad flags and files with exit 2, naming the
// flag, or the file and line, and what was expected.
func TestImportBadInput(t *testing.T) {
	dir := t.TempDir()
	td := func(name string) string { return filepath.Join("..", "importer", "testdata", name) }
	empty := filepath.Join(dir, "empty.txt")
	notes := filepath.Join(dir, "notes.txt")
	os.WriteFile(empty, nil, 0o644)
	os.WriteFile(notes, []byte("pg15 was faster\n"), 0o644)
	ps, rw := td("sysbench-point-select.txt"), td("sysbench-read-write-p99.txt")
	// A real failed run: sysbench against a port nothing listens on.
	need(t, "sysbench")
	failed := filepath.Join(dir, "failed.txt")
	b, _ := exec.Command("sysbench", "oltp_point_select", "--db-driver=pgsql", "--pgsql-host=127.0.0.1", "--pgsql-port=1",
		"--pgsql-user=postgres", "--time=1", "run").CombinedOutput()
	os.WriteFile(failed, b, 0o644)
	storeFile := filepath.Join(dir, "r.db")
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"unknown tool", []string{"--tool", "hammerdb", "--target", "a=" + ps}, []string{"--tool", `"hammerdb"`, "want sysbench, dbbench, pgbench or fio"}},
		{"no tool", []string{"--target", "a=" + ps}, []string{"--tool: missing"}},
		{"no target", []string{"--tool", "sysbench", ps}, []string{"--target: missing"}},
		{"bad target", []string{"--tool", "sysbench", "--target", "a b=" + ps}, []string{"--target", "NAME=FILE"}},
		{"empty file", []string{"--tool", "sysbench", "--target", "a=" + empty}, []string{empty, "empty"}},
		{"missing file", []string{"--tool", "sysbench", "--target", "a=" + filepath.Join(dir, "nope.txt")}, []string{"nope.txt", "no such file"}},
		{"truncated sysbench", []string{"--tool", "sysbench", "--target", "a=" + td("sysbench-truncated.txt")},
			[]string{"sysbench-truncated.txt line 17", "truncated"}},
		{"truncated db_bench", []string{"--tool", "dbbench", "--target", "a=" + td("dbbench-truncated.txt")},
			[]string{"dbbench-truncated.txt line 48", "cut short"}},
		{"other format", []string{"--tool", "sysbench", "--target", "a=" + td("dbbench-intervals.txt")},
			[]string{"dbbench-intervals.txt line 1", "db_bench output", "--tool dbbench"}},
		{"no result", []string{"--tool", "sysbench", "--target", "a=" + notes}, []string{"notes.txt line 1", "no sysbench result"}},
		{"threads", []string{"--tool", "sysbench", "--threads", "8", "--target", "a=" + ps}, []string{"line 4", "--threads says 8"}},
		{"cells differ", []string{"--tool", "sysbench", "--target", "a=" + ps, "--target", "b=" + rw},
			[]string{"at 2 threads, which no file of target", "same tests at the same thread counts"}},
		{"failed run", []string{"--tool", "sysbench", "--target", "a=" + failed}, []string{"failed.txt line", "sysbench failed (FATAL: Connection"}},
		{"pattern without match", []string{"--tool", "sysbench", "--target", "a=" + filepath.Join(dir, "x*.txt")}, []string{"matches no file"}},
		{"same file twice", []string{"--tool", "sysbench", "--target", "a=" + ps + "," + ps}, []string{"the same bytes as"}},
		{"bad base", []string{"--tool", "sysbench", "--target", "a=" + ps, "--base", "z"}, []string{"--base", `"z"`, "want one of a"}},
		{"test for db_bench", []string{"--tool", "dbbench", "--test", "x", "--target", "a=" + td("dbbench-intervals.txt")}, []string{"--test"}},
		{"files with several targets", []string{"--tool", "sysbench", "--target", "a=" + ps, "--target", "b=" + rw, ps}, []string{"argument"}},
	} {
		code, out, errOut := main(append(append([]string{"import"}, c.args...), "--store", storeFile)...)
		if code != cli.ExitUsage {
			t.Errorf("%s: exit %d, want 2\n%s\n%s", c.name, code, out, errOut)
			continue
		}
		errOut = strings.ReplaceAll(errOut, "\n  ", " ") // lines wrapped at 120 columns
		for _, w := range c.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%s: %q lacks %q", c.name, errOut, w)
			}
		}
	}
	if _, err := os.Stat(storeFile); err == nil {
		st, _ := store.Open(storeFile)
		defer st.Close()
		if es, _ := st.Experiments(context.Background()); len(es) > 0 {
			t.Errorf("bad imports stored %d experiments, want none", len(es))
		}
	}
}
