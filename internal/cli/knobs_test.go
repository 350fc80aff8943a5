package cli

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"benchlab/internal/store"
)

// buildFrom parses run's flags from args and builds the spec.
func buildFrom(t *testing.T, args ...string) (*runFlags, error) {
	t.Helper()
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	f := newRunFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return f, nil
}

// TestConnectionFlags checks the targets sysbench's connection flags build:
// the engine they imply and the DSN, and that bad combinations exit 2.
func TestConnectionFlags(t *testing.T) {
	cases := []struct {
		args         []string
		engine, want string
	}{
		{[]string{"--pgsql-host", "db.example", "--pgsql-port", "6543", "--pgsql-user", "bob", "--pgsql-password", "pw", "--pgsql-db", "bench"},
			"postgres", "postgres://bob:pw@db.example:6543/bench?sslmode=disable"},
		{[]string{"--pgsql-host", "::1"}, "postgres", "postgres://sbtest@[::1]:5432/sbtest?sslmode=disable"},
		{[]string{"--mysql-host", "10.0.0.2", "--mysql-password", "pw"}, "mysql", "sbtest:pw@tcp(10.0.0.2:3306)/sbtest"},
		{[]string{"--engine", "mariadb", "--mysql-port", "3307"}, "mariadb", "sbtest@tcp(localhost:3307)/sbtest"},
		{[]string{"--dsn", "postgres://u@h:1/d"}, "postgres", "postgres://u@h:1/d"},
		{[]string{"--dsn", "u:p@tcp(h:3306)/d", "--engine", "mariadb"}, "mariadb", "u:p@tcp(h:3306)/d"},
		// PostgreSQL's keyword form names a postgres target by itself.
		{[]string{"--dsn", "host=h port=1 user=u password=pw dbname=d"}, "postgres", "host=h port=1 user=u password=pw dbname=d"},
	}
	for _, c := range cases {
		f, _ := buildFrom(t, c.args...)
		s, err := f.buildSpec()
		if err != nil {
			t.Errorf("%v: %v", c.args, err)
			continue
		}
		if len(s.Targets) != 1 || s.Targets[0].Engine != c.engine || s.Targets[0].DSN != c.want {
			t.Errorf("%v: target %+v, want engine %s dsn %s", c.args, s.Targets, c.engine, c.want)
		}
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"--pgsql-host", "a", "--mysql-host", "b"}, "not both"},
		{[]string{"--dsn", "postgres://u@h/d", "--pgsql-port", "1"}, "not both"},
		{[]string{"--dsn", "hostfoo user=bar", "--engine", "postgres"}, "neither a postgres:// URL"},
		{[]string{"--dsn", "host=foo user=bar password='secret", "--engine", "postgres"}, "no closing quote"},
		{[]string{"--dsn", "postgres:///d", "--engine", "postgres"}, "names no host"},
		{[]string{"--dsn", "u:secret@tcp(h:0)/d", "--engine", "mysql"}, "port \"0\""},
		{[]string{"--pgsql-port", "70000"}, "port \"70000\""},
	} {
		code, _, stderr := run(t, Env{}, append([]string{"run", "--store", filepath.Join(t.TempDir(), "r.db")}, bad.args...)...)
		if code != ExitUsage || !strings.Contains(unwrap(stderr), bad.want) || strings.Contains(unwrap(stderr), "secret") {
			t.Errorf("%v: exit %d %q, want %d naming %q (and no password)", bad.args, code, stderr, ExitUsage, bad.want)
		}
	}
}

// TestSysbenchKnobs runs SQLite point queries with sysbench's knobs and
// reads what they did back from the store: --rate holds the rate, --events
// ends the test at that count long before its time, --percentile names the
// live lines' percentile, --warmup-time and --rand-type reach the stored
// spec.
func TestSysbenchKnobs(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	base := []string{"run", "--engine", "sqlite", "--tests", "point-query", "--table-size", "2000", "--store", db}
	code, out, stderr := run(t, Env{}, append(base, "--rate", "400", "--time", "3", "--warmup-time", "0",
		"--percentile", "99", "--report-interval", "1", "--rand-type", "special")...)
	if code != ExitOK {
		t.Fatalf("--rate: exit %d\n%s\n%s", code, out, stderr)
	}
	if !regexp.MustCompile(`point-query thds: 1 tps: \d+\.\d+ qps: \d+\.\d+ lat \(ms,99%\)`).MatchString(out) {
		t.Errorf("live lines do not show the 99th percentile:\n%s", out)
	}
	res := measured(t, db, 1)
	// Never ahead of the schedule; how far behind a busy machine leaves it
	// is the runner's fake-time tests' to check.
	if r := res.QPS(); r <= 0 || r > 400*1.01+1/res.Seconds || res.Role.TargetRate != 400 {
		t.Errorf("--rate 400: measured %.1f ops/s, target stored %v; want at most 400", r, res.Role.TargetRate)
	}
	code, out, stderr = run(t, Env{}, append(base, "--events", "3000", "--time", "60", "--warmup", "0", "--report-interval", "0")...)
	if code != ExitOK {
		t.Fatalf("--events: exit %d\n%s\n%s", code, out, stderr)
	}
	res = measured(t, db, 2)
	if res.Events != 3000 || res.Seconds >= 60 {
		t.Errorf("--events 3000 --time 60: %d events in %.1f s, want 3000 before the 60 s", res.Events, res.Seconds)
	}
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	exp, _ := st.Experiment(context.Background(), 1)
	for _, w := range []string{`k_rand_type = "special"`, `warmup = "0s"`, "rate = 400.0", "percentile = 99.0"} {
		if !strings.Contains(exp.Spec, w) {
			t.Errorf("stored spec lacks %q:\n%s", w, exp.Spec)
		}
	}
}

// runResults returns every result of experiment id's one run.
func runResults(t *testing.T, db string, id int64) []store.Result {
	t.Helper()
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(context.Background(), id)
	if err != nil || len(runs) != 1 {
		t.Fatalf("experiment %d: runs %v %v", id, runs, err)
	}
	res, err := st.Results(context.Background(), runs[0].ID, false)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// measured returns the one measured result of experiment id.
func measured(t *testing.T, db string, id int64) store.Result {
	t.Helper()
	res := runResults(t, db, id)
	for _, r := range res {
		if !r.Action && !r.Warm {
			return r
		}
	}
	t.Fatalf("experiment %d: no measured result", id)
	return store.Result{}
}

// TestSetTargetField: --set with a key that is a field of the target
// (basedir, dsn, ...) rather than an engine setting exits 2 before anything
// runs, naming --set, the key and what to use instead; an engine setting
// passes to the plan.
func TestSetTargetField(t *testing.T) {
	for _, c := range []struct{ set, instead string }{
		{"basedir=/usr/lib/postgresql/15", "give basedir = ... in a spec file's [[target]]"},
		{"Version=15", "give version = ... in a spec file's [[target]]"},
		{"dsn=postgres://u@h/db", "use --dsn"},
		{"engine=mariadb", "use --engine"},
		{"cpus=0", "give cpus = ... in a spec file's [[target]]"},
	} {
		code, _, stderr := run(t, Env{}, "run", "--engine", "postgres", "--set", c.set, "--dry-run")
		key, _, _ := strings.Cut(c.set, "=")
		if msg := unwrap(stderr); code != ExitUsage || !strings.Contains(msg, "flag --set: "+key+" is a field of the target") ||
			!strings.Contains(msg, c.instead) {
			t.Errorf("--set %s: exit %d, stderr %q; want %d naming --set, %s and %q", c.set, code, stderr, ExitUsage, key, c.instead)
		}
	}
	if code, _, stderr := run(t, Env{}, "run", "--engine", "postgres", "--set", "work_mem=64kB", "--dry-run"); code != 0 {
		t.Errorf("--set work_mem=64kB: exit %d, %s", code, stderr)
	}
}
