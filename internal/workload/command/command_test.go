package command_test

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "benchlab/internal/all" // engines, and the suite through the one import line
	"benchlab/internal/cli"
	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
	"benchlab/internal/metric"
	"benchlab/internal/server/servertest"
	"benchlab/internal/spec/spectest"
	"benchlab/internal/store"
	"benchlab/internal/store/storetest"
	"benchlab/internal/workload"
	"benchlab/internal/workload/command"
)

// env is the test's environment for benchlab: the process's PATH (where
// fio and sh are), server logs in the test's own dir.
func env(t *testing.T, out, errb *bytes.Buffer) cli.Env {
	getenv, _ := servertest.Env(t)
	return cli.Env{Stdout: out, Stderr: errb, Getenv: func(k string) string {
		if k == "PATH" {
			return os.Getenv("PATH")
		}
		return getenv(k)
	}}
}

// run writes spec to a file and runs it, returning the exit code, the
// output and the store's path.
func run(t *testing.T, spec string) (int, string, string) {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "spec.toml")
	if err := os.WriteFile(file, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "r.db")
	var out, errb bytes.Buffer
	code := cli.Main(env(t, &out, &errb), []string{"run", file, "--store", db, "--workdir", filepath.Join(dir, "work")})
	return code, out.String() + errb.String(), db
}

// runOne runs spec, which must succeed with one measured result, and
// returns that result, the output and the store.
func runOne(t *testing.T, spec string) (store.Result, string, string) {
	t.Helper()
	code, out, db := run(t, spec)
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s", code, out)
	}
	rs := measured(t, db)
	if len(rs) != 1 {
		t.Fatalf("%d measured results, want 1\n%s", len(rs), out)
	}
	return rs[0], out, db
}

// measured returns the measured results of the store's runs.
func measured(t *testing.T, db string) []store.Result {
	t.Helper()
	return results(t, db, func(r store.Result) bool { return !r.Action && !r.Warm })
}

// results returns the results of the store's runs that keep says to keep.
func results(t *testing.T, db string, keep func(store.Result) bool) []store.Result {
	t.Helper()
	var out []store.Result
	for _, run := range storetest.Runs(t, db, true) {
		for _, r := range run.Results {
			if keep(r) {
				out = append(out, r)
			}
		}
	}
	return out
}

// TestFioOnSQLite runs fio as a step of an experiment on a SQLite target:
// a layout load, then 2 s of random 4 KiB reads in the cell's scratch dir.
// The stored result's headline is fio's IOPS (reads plus writes, as fio
// computed them), with fio's completion latency, a per-second series from
// fio's status reports, and fio's CPU as the client's.
func TestFioOnSQLite(t *testing.T) {
	r, _, _ := runOne(t, spectest.CommandHead("fio", spectest.Target("disk", "sqlite"), 1, "2s")+`[[workload.command.steps]]
name = "layout"
load = true
argv = ["fio", "--name=lay", "--directory={dir}", "--filename=data.bin", "--size=4m", "--rw=write", "--bs=1m"]
[[workload.command.steps]]
name = "randread"
parse = "fio"
argv = ["fio", "--name=rr", "--directory={dir}", "--filename=data.bin", "--size=4m", "--rw=randread", "--bs=4k", "--runtime={seconds}",
        "--time_based", "--ioengine=psync", "--numjobs={threads}", "--group_reporting"]
`)
	if r.Metric != command.IOPS.Name || r.Status != store.StatusOK {
		t.Fatalf("metric %q status %s, want iops ok", r.Metric, r.Status)
	}
	iops := r.Throughput()
	fioIOPS := r.Facts["fio_read_iops"] + r.Facts["fio_write_iops"]
	if iops <= 0 || math.Abs(iops-fioIOPS) > 1e-6*fioIOPS {
		t.Errorf("iops %v, want fio's own figure %v (> 0)", iops, fioIOPS)
	}
	if r.Facts["fio_read_bytes_per_s"] <= 0 || r.Latency.P99 <= 0 || r.Latency.P50 > r.Latency.P99 {
		t.Errorf("bandwidth %v B/s, clat p50 %v p99 %v: want a bandwidth and ordered percentiles",
			r.Facts["fio_read_bytes_per_s"], r.Latency.P50, r.Latency.P99)
	}
	// fio --status-interval=1 over 2 s: a report after each second and the
	// final one.
	var ios int64
	for _, iv := range r.Intervals {
		ios += iv.Events
	}
	if len(r.Intervals) < 2 || ios != r.Events {
		t.Errorf("series %+v: want >= 2 seconds whose IOs add up to the step's %d", r.Intervals, r.Events)
	}
	if r.Eff == nil || r.Eff.ClientCPU <= 0 {
		t.Errorf("efficiency %+v: want fio's CPU as the client's", r.Eff)
	}
}

// TestPgbenchOnPostgres runs pgbench against a PostgreSQL 15 that benchlab
// starts: pgbench -i as the load, then 3 s of TPC-B-like transactions with
// --progress=1, read with a regex. The headline is pgbench's own "tps ="
// figure (read back here from pgbench's output, which the step tees to a
// file), the series its progress lines, and the server's CPU per
// transaction is measured.
func TestPgbenchOnPostgres(t *testing.T) {
	pgbench := "/usr/lib/postgresql/15/bin/pgbench"
	if _, err := os.Stat(pgbench); err != nil {
		t.Skipf("no PostgreSQL 15 pgbench: %v", err)
	}
	tee := filepath.Join(t.TempDir(), "pgbench.out")
	code, out, db := run(t, spectest.CommandHead("pgbench", spectest.Target("pg15", "postgres"), 2, "3s")+fmt.Sprintf(`[[workload.command.steps]]
name = "init"
load = true
argv = ["%[1]s", "-i", "-s", "1", "-q"]
[[workload.command.steps]]
name = "tpcb"
parse = "regex"
regex = 'tps = ([0-9.]+) \(without initial connection time\)'
line_regex = 'progress: [0-9.]+ s, ([0-9.]+) tps'
unit = "tps"
argv = ["sh", "-c", "%[1]s -n -T {seconds} -c {threads} -j {threads} --progress=1 2>&1 | tee %[2]s"]
`, pgbench, tee))
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s", code, out)
	}
	text, err := os.ReadFile(tee)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^tps = (\S+) `).FindSubmatch(text)
	if m == nil {
		t.Fatalf("no tps line in pgbench's output:\n%s", text)
	}
	tps, _ := strconv.ParseFloat(string(m[1]), 64)
	rs := measured(t, db)
	if len(rs) != 1 {
		t.Fatalf("%d measured results, want 1", len(rs))
	}
	r := rs[0]
	if r.Metric != command.Higher.Name || r.Status != store.StatusOK || r.Threads != 2 {
		t.Fatalf("metric %q status %s threads %d, want %s ok 2", r.Metric, r.Status, r.Threads, command.Higher.Name)
	}
	if got := r.Throughput(); got != tps || tps <= 0 {
		t.Errorf("throughput %v, want pgbench's tps = %v", got, tps)
	}
	// --progress=1 over 3 s: three lines (the last may be missed when
	// pgbench ends right at it).
	if len(r.Intervals) < 2 || r.Intervals[0].Events <= 0 {
		t.Errorf("series %+v: want pgbench's progress lines", r.Intervals)
	}
	if r.Eff == nil || r.Eff.ServerCPU <= 0 || r.Eff.PerOp(r.Eff.ServerCPU, r.QPS(), r.Seconds) <= 0 {
		t.Fatalf("efficiency %+v: want the server's CPU per transaction", r.Eff)
	}
	if r.Eff.ClientCPU <= 0 {
		t.Errorf("client CPU %v: want pgbench's", r.Eff.ClientCPU)
	}
	t.Logf("tps %.1f, server %.0f us/transaction, pgbench %.0f us/transaction", tps,
		1e6*r.Eff.PerOp(r.Eff.ServerCPU, r.QPS(), r.Seconds), 1e6*r.Eff.PerOp(r.Eff.ClientCPU, r.QPS(), r.Seconds))
}

// sqliteHead starts the experiments of one SQLite target whose steps
// the tests give.
var sqliteHead = spectest.CommandHead("bad", spectest.Target("t", "sqlite"), 1, "1s")

// TestBadInput refuses bad steps before anything runs, exit 2, naming the
// field.
func TestBadInput(t *testing.T) {
	for _, c := range []struct{ steps, field, msg string }{
		{`[[workload.command.steps]]
name = "a"
argv = ["true"]
parse = "json"`, "workload.command.steps[0].parse", "want fio, regex or none"},
		{`[[workload.command.steps]]
name = "a"
argv = ["true"]
[[workload.command.steps]]
name = "b"
argv = ["true"]
parse = "regex"
regex = 'tps = [0-9.]+'`, "workload.command.steps[1].regex", "want exactly one"},
		{`[[workload.command.steps]]
name = "a"
argv = ["true"]
parse = "regex"
regex = 'tps = ([0-9.]+'`, "workload.command.steps[0].regex", "does not compile"},
		{`[[workload.command.steps]]
name = "a"
argv = ["true"]
parse = "regex"
regex = 'tps = ([0-9.]+)'
line_regex = '(a)(b)'`, "workload.command.steps[0].line_regex", "want exactly one"},
		{`[[workload.command.steps]]
name = "a"
argv = []`, "workload.command.steps[0].argv", "empty"},
		{`[[workload.command.steps]]
name = "a"
argv = ["no-such-program-benchlab"]`, "workload.command.steps[0].argv", "not found on PATH"},
		{`[[workload.command.steps]]
name = "a"
argv = ["fio", "--output-format=normal"]
parse = "fio"`, "workload.command.steps[0].argv", "--output-format=normal"},
		{`[[workload.command.steps]]
name = "a"
argv = ["true"]
load = true`, "workload.command.steps", "every step is a load"},
		// Pacing and counting are benchlab's workers': a program's step
		// has neither, so they are refused rather than ignored.
		{`rate = 100
[[workload.command.steps]]
name = "a"
argv = ["true"]`, "workload.rate", "runs its steps in outside programs"},
		{`events = 1000
[[workload.command.steps]]
name = "a"
argv = ["true"]`, "workload.events", "cannot count their operations"},
	} {
		code, out, _ := run(t, sqliteHead+c.steps)
		if code != cli.ExitUsage || !strings.Contains(out, c.field+":") || !strings.Contains(out, c.msg) {
			t.Errorf("exit %d, output:\n%s\nwant exit 2 naming %s (%q)", code, out, c.field, c.msg)
		}
	}
}

// TestKilledAtItsTime runs a program that ignores SIGTERM and outlives its
// step (1 s, no grace): its whole process group, a child in the background
// included, is killed with SIGKILL a second after SIGTERM, and the step
// fails saying so, quoting the program's stderr.
func TestKilledAtItsTime(t *testing.T) {
	const mark = "3600.4217"
	code, out, db := run(t, sqliteHead+`[workload.command]
grace = "0s"
kill_after = "1s"
[[workload.command.steps]]
name = "stuck"
argv = ["sh", "-c", "trap '' TERM; echo about to hang >&2; sleep `+mark+` & sleep `+mark+`"]
`)
	if code == cli.ExitOK {
		t.Fatalf("exit 0, want a failed step\n%s", out)
	}
	if pids := servertest.Procs(mark); len(pids) > 0 {
		t.Errorf("processes %v of the step's group outlived it", pids)
	}
	rs := measured(t, db)
	if len(rs) != 1 || rs[0].Status != store.StatusFailed || len(rs[0].ErrorSamples) == 0 {
		t.Fatalf("results %+v: want one failed step", rs)
	}
	e := rs[0].ErrorSamples[0]
	for _, want := range []string{"did not end within 1s", "SIGTERM", "SIGKILL 1s later", "about to hang"} {
		if !strings.Contains(e, want) {
			t.Errorf("error %q lacks %q", e, want)
		}
	}
}

// TestKeptWhenKilled runs a program that prints two progress lines, then
// ignores SIGTERM and hangs past its step (1 s, no grace): it is killed
// with its process group, and the failed step keeps the series its lines
// gave and its time until the kill.
func TestKeptWhenKilled(t *testing.T) {
	const mark = "3600.3391"
	code, out, db := run(t, sqliteHead+`[workload.command]
grace = "0s"
kill_after = "1s"
[[workload.command.steps]]
name = "hangs"
parse = "regex"
regex = 'tps = ([0-9.]+)'
line_regex = '^progress: ([0-9.]+) tps'
argv = ["sh", "-c", "trap '' TERM; echo progress: 5.5 tps >&2; echo progress: 7.25 tps >&2; sleep `+mark+` & sleep `+mark+`"]
`)
	if code == cli.ExitOK {
		t.Fatalf("exit 0, want a failed step\n%s", out)
	}
	if pids := servertest.Procs(mark); len(pids) > 0 {
		t.Errorf("processes %v of the step's group outlived it", pids)
	}
	rs := measured(t, db)
	if len(rs) != 1 || rs[0].Status != store.StatusFailed || len(rs[0].ErrorSamples) == 0 {
		t.Fatalf("results %+v: want one failed step", rs)
	}
	r := rs[0]
	if !strings.Contains(r.ErrorSamples[0], "did not end within 1s") {
		t.Errorf("error %q does not say the program overran", r.ErrorSamples[0])
	}
	var series []float64
	for _, iv := range r.Intervals {
		series = append(series, command.Higher.Series(metric.Counts{Seconds: iv.Seconds, Events: iv.Events}))
	}
	if len(series) != 2 || series[0] != 5.5 || series[1] != 7.25 {
		t.Errorf("series %v, want the lines printed before the kill, [5.5 7.25]", series)
	}
	if r.Seconds < 1 {
		t.Errorf("%.3f s kept; want the program's time until it was killed, past its 1 s", r.Seconds)
	}
}

// TestFailures fails a step whose program exits non-zero, and one whose
// regex finds nothing, each error quoting the last lines of stderr.
func TestFailures(t *testing.T) {
	code, out, db := run(t, sqliteHead+`[[workload.command.steps]]
name = "exits"
argv = ["sh", "-c", "echo first >&2; echo the reason >&2; exit 3"]
[[workload.command.steps]]
name = "silent"
parse = "regex"
regex = 'tps = ([0-9.]+)'
argv = ["sh", "-c", "echo no figure here; echo warning: nothing done >&2"]
`)
	if code == cli.ExitOK {
		t.Fatalf("exit 0, want failed steps\n%s", out)
	}
	rs := measured(t, db)
	if len(rs) != 2 {
		t.Fatalf("%d results, want 2", len(rs))
	}
	for i, want := range [][]string{{"exit status 3", "first\n  the reason"}, {"matched nothing", "warning: nothing done"}} {
		if rs[i].Status != store.StatusFailed || len(rs[i].ErrorSamples) == 0 {
			t.Errorf("%s: status %s, want failed", rs[i].Test, rs[i].Status)
			continue
		}
		for _, w := range want {
			if !strings.Contains(rs[i].ErrorSamples[0], w) {
				t.Errorf("%s: error %q lacks %q", rs[i].Test, rs[i].ErrorSamples[0], w)
			}
		}
	}
}

// TestInterrupt interrupts a run while a program and its background child
// run (a 30 s step): the run ends interrupted within the kill delay and
// leaves no process of the group behind.
func TestInterrupt(t *testing.T) {
	const mark = "3600.5873"
	dir := t.TempDir()
	file := filepath.Join(dir, "spec.toml")
	spec := sqliteHead + `[[workload.command.steps]]
name = "long"
seconds = "30s"
argv = ["sh", "-c", "sleep ` + mark + ` & sleep ` + mark + `"]
`
	if err := os.WriteFile(file, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	sigs := make(chan os.Signal, 2)
	done := make(chan int)
	var out, errb bytes.Buffer
	e := env(t, &out, &errb)
	e.Signals = sigs
	go func() {
		done <- cli.Main(e, []string{"run", file, "--store", filepath.Join(dir, "r.db"), "--workdir", filepath.Join(dir, "work")})
	}()
	deadline := time.Now().Add(10 * time.Second)
	for len(servertest.Procs(mark)) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the program did not start within 10 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	sigs <- os.Interrupt
	var code int
	select {
	case code = <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("run did not stop within 15 s of the interrupt")
	}
	if code != cli.ExitInterrupted {
		t.Errorf("exit %d, want %d\n%s%s", code, cli.ExitInterrupted, out.String(), errb.String())
	}
	if pids := servertest.Procs(mark); len(pids) > 0 {
		t.Errorf("processes %v of the step's group outlived the interrupt", pids)
	}
}

// TestMariaDBEnvironment runs the mariadb client against a MariaDB that
// benchlab starts, with no options but the ones from its environment:
// MYSQL_HOST and MYSQL_TCP_PORT, which the client reads itself, and
// MYSQL_USER and MYSQL_DATABASE passed on by the shell. The query answers
// 42 only on the server's port (BENCHLAB_PORT), in benchlab's database, as
// benchlab's user; the answer, read with a regex, is the headline, and a
// lower-is-better number is one operation per run.
func TestMariaDBEnvironment(t *testing.T) {
	if _, err := os.Stat("/usr/sbin/mariadbd"); err != nil {
		t.Skipf("no MariaDB server: %v", err)
	}
	r, _, _ := runOne(t, spectest.CommandHead("maria", spectest.Target("m", "mariadb"), 1, "1s")+`[[workload.command.steps]]
name = "query"
parse = "regex"
regex = 'answer=([0-9]+) at'
better = "lower"
argv = ["sh", "-c", "mariadb -u \"$MYSQL_USER\" -N -e \"SELECT CONCAT('answer=', IF(@@port = $BENCHLAB_PORT AND DATABASE() = 'sbtest' AND CURRENT_USER() LIKE 'benchlab@%', 42, 0), ' at')\" \"$MYSQL_DATABASE\""]
`)
	if r.Metric != command.Lower.Name || r.Throughput() != 42 || r.Events != 1 {
		t.Errorf("metric %s value %v over %d operations, want %s 42 over 1", r.Metric, r.Throughput(), r.Events, command.Lower.Name)
	}
	if r.Eff == nil || r.Eff.ServerCPU < 0 {
		t.Errorf("efficiency %+v: want the server measured", r.Eff)
	}
}

// TestPostgresDSNTarget runs psql against a PostgreSQL reached by a dsn
// (a server this test starts, which benchlab does not): psql connects with
// nothing but the PG* variables benchlab derives from the dsn (its
// password too: the server takes none without one), and its
// answer (42 only in the dsn's database, as its user) is the headline.
func TestPostgresDSNTarget(t *testing.T) {
	psql := "/usr/lib/postgresql/15/bin/psql"
	if _, err := os.Stat(psql); err != nil {
		t.Skipf("no PostgreSQL 15 psql: %v", err)
	}
	getenv, _ := servertest.Env(t)
	pg := enginetest.Open(t, engine.Target{Name: "existing", Engine: "postgres", Getenv: getenv})
	a := pg.(engine.Addresser).Address()
	target := spectest.Target("existing", "postgres") +
		fmt.Sprintf("dsn = \"postgres://%s:%s@%s:%d/%s?sslmode=disable\"\n", a.User, a.Password, a.Host, a.Port, a.Database)
	code, out, db := run(t, spectest.CommandHead("dsn", target, 1, "1s")+fmt.Sprintf(`[[workload.command.steps]]
name = "psql"
parse = "regex"
regex = '(?m)^answer ([0-9]+)$'
argv = ["%s", "-XAt", "-c", "SELECT 'answer ' || CASE WHEN current_database() = '%s' AND current_user = '%s' THEN 42 ELSE 0 END"]
`, psql, a.Database, a.User))
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s", code, out)
	}
	rs := measured(t, db)
	if len(rs) != 1 || rs[0].Throughput() != 42 {
		t.Fatalf("results %+v: want one whose value is 42", rs)
	}
}

// TestPlanSelects keeps every load whatever workload.tests selects (the
// measured steps need their data), makes loads actions that run once, and
// gives each measured step its metric and its own time.
func TestPlanSelects(t *testing.T) {
	o := &command.Options{Grace: workload.Duration{Duration: time.Second}, KillAfter: workload.Duration{Duration: time.Second},
		Steps: []command.Step{
			{Name: "init", Argv: []string{"true"}, Load: true},
			{Name: "tpcb", Argv: []string{"true"}, Parse: "regex", Regex: `tps = (\S+)`, Better: "lower"},
			{Name: "disk", Argv: []string{"true"}, Parse: "fio", Seconds: workload.Duration{Duration: 7 * time.Second}},
		}}
	s, _ := workload.Lookup("command")
	steps, err := s.Plan(workload.Params{Tests: []string{"tpcb"}, ReadTime: 3 * time.Second, Options: o, Getenv: os.Getenv})
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 2 || steps[0].Name != "init" || !steps[0].Load || steps[1].Name != "tpcb" ||
		steps[1].Metric.Name != command.Lower.Name || steps[1].Duration != 3*time.Second {
		t.Fatalf("steps %+v: want init (load) and tpcb (command_low, 3 s)", steps)
	}
	steps, err = s.Plan(workload.Params{ReadTime: 3 * time.Second, Options: o, Getenv: os.Getenv})
	if err != nil || len(steps) != 3 || steps[2].Metric.Name != command.IOPS.Name || steps[2].Duration != 7*time.Second {
		t.Fatalf("steps %+v %v: want disk last, iops for 7 s", steps, err)
	}
}

// TestLoadClientIsTheProgram measures a load's client as the program's
// process tree, as a measured step's: a shell that counts to 300,000 uses
// a good part of a second of CPU, which benchlab's own (waiting) does not.
func TestLoadClientIsTheProgram(t *testing.T) {
	code, out, db := run(t, sqliteHead+`[[workload.command.steps]]
name = "busy"
load = true
argv = ["sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done"]
[[workload.command.steps]]
name = "nothing"
argv = ["true"]
`)
	if code != cli.ExitOK {
		t.Fatalf("exit %d\n%s", code, out)
	}
	load := results(t, db, func(r store.Result) bool { return r.Action })
	if len(load) != 1 || load[0].Eff == nil || load[0].Eff.ClientCPU < 0.1 {
		t.Fatalf("load results %+v: want one whose client used >= 0.1 s of CPU", load)
	}
	t.Logf("the shell's CPU: %.2f s", load[0].Eff.ClientCPU)
}

// TestRegexSeries reads a regex step's headline and series from a program's
// output: the number as printed (the last match, stored exactly, as
// BENCHLAB_THREADS and BENCHLAB_SECONDS give it), one series point per
// progress line (on stderr, as pgbench prints them; lines of the two
// streams keep their order within each stream only), and no latency, for
// which the report shows no latency column rather than 0 ms or n/a.
func TestRegexSeries(t *testing.T) {
	r, out, _ := runOne(t, sqliteHead+`[[workload.command.steps]]
name = "printer"
parse = "regex"
regex = 'tps = ([0-9.]+)'
line_regex = '^progress: ([0-9.]+) tps'
unit = "tps"
argv = ["sh", "-c", "echo tps = 1.0; echo progress: 5.5 tps >&2; echo progress: 7.25 tps >&2; echo tps = 12.$BENCHLAB_THREADS$BENCHLAB_SECONDS"]
`)
	if r.Throughput() != 12.11 {
		t.Errorf("headline %v, want 12.11 (the last match; threads 1, seconds 1)", r.Throughput())
	}
	var series []float64
	for _, iv := range r.Intervals {
		series = append(series, command.Higher.Series(metric.Counts{Seconds: iv.Seconds, Events: iv.Events}))
	}
	if len(series) != 2 || series[0] != 5.5 || series[1] != 7.25 {
		t.Errorf("series %v, want [5.5 7.25]", series)
	}
	// A regex step stores no latency, so the report has no latency
	// table to fill with n/a (it shows the percentiles that were stored).
	if !strings.Contains(out, "Absolute throughput") || strings.Contains(out, "Latency per event") ||
		!strings.Contains(out, "Failed operations") {
		t.Errorf("the report of a step that stored no latency has a latency table, or lacks throughput or failed operations:\n%s", out)
	}
}
