package connect_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "benchlab/internal/all" // engines, and the suite through the one import line
	"benchlab/internal/cli"
	"benchlab/internal/store"
	"benchlab/internal/store/storetest"
	"benchlab/internal/workload"
	"benchlab/internal/workload/connect"
)

const spec = `name = "connect"
[[target]]
name = "wal"
engine = "sqlite"
[target.settings]
journal_mode = "wal"
[[target]]
name = "delete"
engine = "sqlite"
[target.settings]
journal_mode = "delete"
[workload]
suite = "connect"
threads = [1, 2]
read_time = "700ms"
warmup = "100ms"
report_interval = "0s"
[workload.connect]
query = "SELECT 1"
`

// TestRunOnSQLite runs the suite end to end through the command line on two
// SQLite targets and checks what it stores and reports: one result per
// thread count in its own metric, whose value is the mean latency of an
// open-query-close in ms, compared lower-is-better.
func TestRunOnSQLite(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.toml")
	if err := os.WriteFile(file, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "r.db")
	var out, errb bytes.Buffer
	if code := cli.Main(cli.Env{Stdout: &out, Stderr: &errb}, []string{"run", file, "--store", db}); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	for _, want := range []string{"connection cost", "connect compares mean",
		"Relative latency: ms(target) / ms(wal)", "lower is better: + (green) <= 0.95 better"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	// The tables of relative and absolute values are titled after the
	// metric, a latency.
	if !strings.Contains(out.String(), "Absolute latency") || strings.Contains(out.String(), "throughput") {
		t.Errorf("report's tables are not titled after latency:\n%s", out.String())
	}
	// compare judges the same latency: its verdicts table and legend name
	// latency in every format, and nothing calls it throughput.
	for _, format := range []string{"text", "markdown", "html"} {
		var cout, cerr bytes.Buffer
		if code := cli.Main(cli.Env{Stdout: &cout, Stderr: &cerr}, []string{"compare", "--store", db, "--format", format}); code != 0 {
			t.Fatalf("compare --format %s: exit %d\n%s\n%s", format, code, cout.String(), cerr.String())
		}
		text := cout.String()
		if format == "html" {
			// The page's charts of connections per second are rightly
			// throughput; its tables end where the charts begin.
			text, _, _ = strings.Cut(text, "<h2>Charts</h2>")
		}
		// Legends wrap at 120 columns in text: words are compared.
		words := strings.Join(strings.Fields(cout.String()), " ")
		for _, want := range []string{"Verdicts cell by cell (latency)", "t-test on log latency", "Relative latency: ms(target) / ms(wal)"} {
			if !strings.Contains(words, want) {
				t.Errorf("compare --format %s lacks %q", format, want)
			}
		}
		if strings.Contains(strings.ToLower(text), "throughput") {
			t.Errorf("compare --format %s calls the latency throughput:\n%s", format, text)
		}
		// The chart against threads plots the headline, the latency.
		if format == "html" && (!strings.Contains(cout.String(), "Latency against threads: connect") ||
			!strings.Contains(cout.String(), "ms (median over repeats)")) {
			t.Errorf("compare --format html: the chart against threads is not titled after latency in ms")
		}
	}
	runs := storetest.Runs(t, db, false)
	if len(runs) != 2 {
		t.Fatalf("%d runs, want 2", len(runs))
	}
	for _, run := range runs {
		measured := 0
		for _, r := range run.Results {
			if r.Action || r.Warm {
				continue
			}
			measured++
			if r.Metric != connect.ConnectMS.Name || r.Status != store.StatusOK || r.Events == 0 || r.Errors != 0 {
				t.Errorf("%s %s@%d: metric %q status %s, %d connections, %d errors", run.Target, r.Test, r.Threads,
					r.Metric, r.Status, r.Events, r.Errors)
			}
			if got, want := r.Throughput(), float64(r.Latency.Mean)/1e6; got != want || got <= 0 {
				t.Errorf("%s: connect_ms %v, want the mean latency %v ms", run.Target, got, want)
			}
			if r.Statements != r.Events {
				t.Errorf("%s: %d statements for %d connections, want one query each", run.Target, r.Statements, r.Events)
			}
		}
		if measured != 2 {
			t.Errorf("%s: %d measured results, want 2 (threads 1 and 2)", run.Target, measured)
		}
	}
}

// TestCheck names the field of a bad option and of an unknown test.
func TestCheck(t *testing.T) {
	s, _ := workload.Lookup("connect")
	for _, c := range []struct {
		p     workload.Params
		field string
	}{
		{workload.Params{Options: &connect.Options{Query: " "}}, "connect.query"},
		{workload.Params{Tests: []string{"reconnect"}}, "tests"},
	} {
		err := s.Check(c.p)
		fe, ok := err.(*workload.FieldError)
		if !ok || fe.Field != c.field {
			t.Errorf("got %v, want a field error on %s", err, c.field)
		}
	}
}
