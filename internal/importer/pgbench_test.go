package importer_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"benchlab/internal/importer"
)

// The pgbench files are real runs of pgbench 15.18 against PostgreSQL 15
// (scale 1): TPC-B for 3 s at 2 clients with --progress=1, a mix of
// tpcb-like@1 and select-only@3 for 2 s, and 200 transactions of one
// client (-t). The fio file is fio 3.33, 4 KiB random reads with psync,
// two jobs for 3 s with --status-interval=1.

func TestPGBench(t *testing.T) {
	out, err := importer.Parse(importer.PGBench, "tpcb.1.txt", read(t, "pgbench-tpcb.1.txt"), importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if out.EngineVersion != "15.18" || !strings.HasPrefix(out.Version, "pgbench (15.18") || len(out.Results) != 1 {
		t.Fatalf("engine %q, version %q, %d results", out.EngineVersion, out.Version, len(out.Results))
	}
	r := out.Results[0]
	if r.Test != "tpcb" || r.Threads != 2 || r.Events != 1426 || r.Errors != 0 || r.Metric != importer.TPS.Name {
		t.Errorf("result %+v", r)
	}
	if got := r.Throughput(); math.Abs(got-475.699939) > 1e-6 {
		t.Errorf("throughput %v, want pgbench's tps 475.699939", got)
	}
	if r.Latency.Mean != 4198*time.Microsecond || r.Facts[importer.FactLatencyStddev] != 6.623 ||
		r.Facts[importer.FactConnectMS] != 10.138 || r.Facts[importer.FactWorkerThreads] != 1 || r.Facts[importer.FactScale] != 1 {
		t.Errorf("latency %v, facts %v", r.Latency, r.Facts)
	}
	if r.Latency.P95 != 0 || r.Latency.Max != 0 {
		t.Errorf("latency %+v: pgbench printed no percentile or max, none may be filled in", r.Latency)
	}
	want := []int64{626, 344, 454}
	if len(r.Intervals) != len(want) {
		t.Fatalf("%d intervals, want %d", len(r.Intervals), len(want))
	}
	for i, iv := range r.Intervals {
		if iv.Events != want[i] || iv.Seconds != 1 {
			t.Errorf("interval %d: %+v, want %d transactions in 1 s", i, iv, want[i])
		}
	}

	out, err = importer.Parse(importer.PGBench, "mixed.txt", read(t, "pgbench-mixed.txt"), importer.Options{Test: "mix", Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Results) != 3 || out.Results[0].Role.Secondary || out.Results[0].Events != 2673 {
		t.Fatalf("results %+v, want the total and one per script", out.Results)
	}
	for i, s := range []struct {
		name  string
		tx    int64
		tps   float64
		share float64
	}{{"builtin: TPC-B (sort of)", 666, 333.328162, 24.9}, {"builtin: select only", 2007, 1004.488919, 75.1}} {
		r := out.Results[i+1]
		if r.Role.Name != s.name || !r.Role.Secondary || r.Events != s.tx || math.Abs(r.Throughput()-s.tps) > 1e-6 ||
			r.Facts[importer.FactScriptShare] != s.share || r.Test != "mix" {
			t.Errorf("script %d: %+v, want %+v", i+1, r, s)
		}
	}

	out, err = importer.Parse(importer.PGBench, "tx.txt", read(t, "pgbench-transactions.txt"), importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := out.Results[0]; r.Events != 200 || r.Threads != 1 || math.Abs(r.Throughput()-226.486202) > 1e-6 {
		t.Errorf("a -t run: %+v", r)
	}
}

func TestPGBenchRefuses(t *testing.T) {
	whole := string(read(t, "pgbench-tpcb.1.txt"))
	cut := whole[:strings.Index(whole, "latency average")]
	for _, tc := range []struct {
		name, data string
		opt        importer.Options
		tool, want string
	}{
		{"cut before the summary", cut, importer.Options{}, importer.PGBench, "the run was cut short or the file truncated"},
		{"threads disagree", whole, importer.Options{Threads: 4}, importer.PGBench, "pgbench ran 2 clients and --threads says 4"},
		{"not pgbench", string(read(t, "sysbench-point-select.txt")), importer.Options{}, importer.PGBench, "this is sysbench output"},
		{"pgbench as sysbench", whole, importer.Options{}, importer.Sysbench, "this is pgbench output, not sysbench's; import it with --tool pgbench"},
		{"a progress line going back", strings.Replace(whole, "progress: 3.0 s", "progress: 1.5 s", 1), importer.Options{},
			importer.PGBench, "does not follow"},
	} {
		_, err := importer.Parse(tc.tool, "f.txt", []byte(tc.data), tc.opt)
		var ie *importer.Error
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an importer.Error with %q", tc.name, err, tc.want)
		}
	}
}

func TestFIO(t *testing.T) {
	out, err := importer.Parse(importer.FIO, "randread.json", read(t, "fio-randread-2jobs.json"), importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Version != "fio-3.33" || len(out.Results) != 3 {
		t.Fatalf("version %q, %d results, want the jobs summed and one per job", out.Version, len(out.Results))
	}
	sum := out.Results[0]
	if sum.Test != "randread" || sum.Threads != 2 || sum.Metric != "iops" || sum.Role.Secondary || sum.Events <= 0 {
		t.Errorf("summed result %+v", sum)
	}
	jobs := out.Results[1:]
	var iops float64
	var ios int64
	for i, j := range jobs {
		if !j.Role.Secondary || j.Role.Name != []string{"randread#1", "randread#2"}[i] || j.Threads != 2 {
			t.Errorf("job %d: role %+v threads %d", i+1, j.Role, j.Threads)
		}
		iops += j.Throughput()
		ios += j.Events
	}
	if math.Abs(sum.Throughput()-iops) > 1e-6*iops || sum.Events != ios {
		t.Errorf("summed %v IOPS over %d IOs, the jobs' %v over %d", sum.Throughput(), sum.Events, iops, ios)
	}
	if sum.Latency.P99 <= 0 || sum.Latency.Max < sum.Latency.P99 || len(sum.Intervals) < 2 {
		t.Errorf("latency %+v, %d intervals", sum.Latency, len(sum.Intervals))
	}
	for _, tc := range []struct{ data, want string }{
		{"fio: some text, no json", "no fio JSON document"},
		{`{"fio version": "fio-3.33", "jobs": []}`, "lists no job"},
	} {
		_, err := importer.Parse(importer.FIO, "f.json", []byte(tc.data), importer.Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.data, err, tc.want)
		}
	}
}
