package runner

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
	_ "benchlab/internal/engine/postgres" // the server TestStepProfilePostgres profiles
	"benchlab/internal/profile"
	"benchlab/internal/store"
	"benchlab/internal/workload"
	"benchlab/internal/workload/connect"
)

// spinner is a worker whose every operation spins for about 200 us.
type spinner struct{}

var spinSink uint64

func (spinner) Op(context.Context) (workload.Tally, error) {
	x := uint64(1)
	for end := time.Now().Add(200 * time.Microsecond); time.Now().Before(end); {
		for range 1000 {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	spinSink += x
	return workload.Tally{Statements: 1}, nil
}

func (spinner) Close() error { return nil }

var spinStep = workload.Step{Name: "spin", Warmup: 300 * time.Millisecond, Duration: 1500 * time.Millisecond,
	NewWorker: func(context.Context, engine.DB, int, int, uint64) (workload.Worker, error) { return spinner{}, nil }}

// TestStepProfile profiles an in-process step with perf: the headline
// result holds folded stacks of benchlab's own process, no more samples
// than the measured part's CPU time allows (the warm-up's are dropped),
// and perf and its temp dir are gone when the step returns.
func TestStepProfile(t *testing.T) {
	if _, err := exec.LookPath("perf"); err != nil {
		t.Skip("perf not installed")
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	res, err := Measure(context.Background(), nil, spinStep, 1, 1, Options{ProfileHz: 199})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Profile
	if p == nil || p.Hz != 199 {
		t.Fatalf("profile %+v, want one at 199 Hz", p)
	}
	if p.Note != "" || p.Samples == 0 {
		t.Fatalf("no profile taken: %d samples, note %q", p.Samples, p.Note)
	}
	st, err := profile.Parse(p.Folded)
	if err != nil {
		t.Fatal(err)
	}
	if st.Samples() != p.Samples {
		t.Errorf("folded stacks hold %d samples, the profile says %d", st.Samples(), p.Samples)
	}
	comm := filepath.Base(os.Args[0])
	if len(comm) > 15 {
		comm = comm[:15]
	}
	for k := range st {
		if !strings.HasPrefix(k, comm+";") {
			t.Errorf("stack %q is not of this process (%s)", k, comm)
		}
	}
	// One worker on at most 2 CPUs' worth of benchlab threads: samples/hz
	// cannot exceed twice the measured seconds, plus a few at the edges.
	if cpu := float64(p.Samples) / float64(p.Hz); cpu > 2*res.Seconds+0.1 {
		t.Errorf("%d samples at %d Hz = %.2f s of CPU in a %.2f s measured part", p.Samples, p.Hz, cpu, res.Seconds)
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("%d files left in TMPDIR, e.g. %s", len(left), left[0].Name())
	}
	if kids := perfChildren(t); len(kids) > 0 {
		t.Errorf("perf processes left: %v", kids)
	}
	t.Logf("%d samples in %.2f s; %d stacks", p.Samples, res.Seconds, len(st))
}

// TestStepProfileNoPerf: without perf the step runs and its result says
// why it has no profile.
func TestStepProfileNoPerf(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	st := spinStep
	st.Warmup, st.Duration = 0, 200*time.Millisecond
	res, err := Measure(context.Background(), nil, st, 1, 1, Options{ProfileHz: 99})
	if err != nil {
		t.Fatal(err)
	}
	if res.Statements == 0 {
		t.Error("the step did not run")
	}
	if p := res.Profile; p == nil || p.Samples != 0 || len(p.Folded) != 0 || !strings.Contains(p.Note, "perf is not installed") {
		t.Errorf("profile %+v, want none and the reason", p)
	}
}

// TestStepProfileInterrupted: a profiled step cancelled midway (Ctrl-C)
// returns interrupted with the profile of what it measured, and leaves no
// perf process and no temp file.
func TestStepProfileInterrupted(t *testing.T) {
	if _, err := exec.LookPath("perf"); err != nil {
		t.Skip("perf not installed")
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	st := spinStep
	st.Duration = time.Minute
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(1500*time.Millisecond, cancel)
	res, err := Measure(ctx, nil, st, 1, 1, Options{ProfileHz: 99})
	if err == nil || res.Status != store.StatusInterrupted {
		t.Fatalf("err %v, status %s; want interrupted", err, res.Status)
	}
	if res.Profile == nil || (res.Profile.Samples == 0 && res.Profile.Note == "") {
		t.Errorf("profile %+v: want stacks or a reason", res.Profile)
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("%d files left in TMPDIR, e.g. %s", len(left), left[0].Name())
	}
	if kids := perfChildren(t); len(kids) > 0 {
		t.Errorf("perf processes left: %v", kids)
	}
}

// perfChildren lists this process's children named perf.
func perfChildren(t *testing.T) []string {
	t.Helper()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []string
	me := " " + strconv.Itoa(os.Getpid()) + " "
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 || !strings.HasPrefix(s[strings.IndexByte(s, '(')+1:], "perf)") {
			continue
		}
		// After "comm) " come the state and the parent's PID.
		if f := strings.Fields(s[i+1:]); len(f) > 1 && " "+f[1]+" " == me {
			out = append(out, p)
		}
	}
	return out
}

// sumQuery is a worker whose every operation makes the server add up
// 20,000 numbers on its connection.
type sumQuery struct{ c engine.Conn }

func (w sumQuery) Op(ctx context.Context) (workload.Tally, error) {
	_, err := w.c.Query(ctx, "SELECT sum(i) FROM generate_series(1, 20000) AS i")
	return workload.Tally{Statements: 1}, err
}

func (w sumQuery) Close() error { return w.c.Close() }

// TestStepProfilePostgres profiles a real PostgreSQL server: the backend
// serving the worker's connection, forked before the step, is sampled
// (stacks rooted at "postgres", most of them under PostgresMain), and
// benchlab's own frames are not.
func TestStepProfilePostgres(t *testing.T) {
	if _, err := exec.LookPath("perf"); err != nil {
		t.Skip("perf not installed")
	}
	db := enginetest.Open(t, engine.Target{Name: "prof", Engine: "postgres"})
	st := workload.Step{Name: "sum", Warmup: 300 * time.Millisecond, Duration: 1500 * time.Millisecond,
		NewWorker: func(ctx context.Context, db engine.DB, _, _ int, _ uint64) (workload.Worker, error) {
			c, err := db.(engine.SQL).Connect(ctx)
			return sumQuery{c}, err
		}}
	res, err := Measure(context.Background(), db, st, 1, 1, Options{ProfileHz: 199})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Profile
	if p == nil || p.Samples == 0 {
		t.Fatalf("no profile: %+v", p)
	}
	stacks, err := profile.Parse(p.Folded)
	if err != nil {
		t.Fatal(err)
	}
	var backend int64
	for k, n := range stacks {
		if !strings.HasPrefix(k, "postgres;") {
			t.Errorf("stack %q is not the server's", k)
		}
		if strings.Contains(k, ";PostgresMain;") {
			backend += n
		}
	}
	if backend*2 < stacks.Samples() {
		t.Errorf("%d of %d samples under PostgresMain; want most (the backend)", backend, stacks.Samples())
	}
	t.Logf("%d operations, %d samples, %d under PostgresMain", res.Statements, stacks.Samples(), backend)
}

// TestProfileConnectPostgres profiles the connect suite on a managed
// PostgreSQL: every operation forks a backend that lives for about one
// connection, shorter than a sample period, so only a profile of the
// server's cgroup sees them. The profile covers at least 80% of the CPU
// time /proc counted for the server (per operation, as the report
// computes coverage), and backend frames (PostgresMain, under which a
// backend runs its session) hold samples.
func TestProfileConnectPostgres(t *testing.T) {
	if _, err := exec.LookPath("perf"); err != nil {
		t.Fatal("perf not installed (scripts/install-deps.sh installs linux-perf)")
	}
	if os.Geteuid() != 0 {
		t.Skip("profiling a server's cgroup needs root; tests run as root")
	}
	db := enginetest.Open(t, engine.Target{Name: "conn", Engine: "postgres"})
	if _, err := db.(cgrouped).PerfCgroups(); err != nil {
		t.Fatalf("the managed server has no cgroup perf can filter by: %v", err)
	}
	steps, err := connect.Suite{}.Plan(workload.Params{ReadTime: 3 * time.Second, Warmup: 500 * time.Millisecond,
		Threads: []int{2}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Measure(context.Background(), db, steps[0], 2, 1, Options{ProfileHz: 199})
	if err != nil {
		t.Fatal(err)
	}
	p, eff := res.Profile, res.Eff
	if p == nil || p.Samples == 0 || eff == nil || eff.ServerCPU <= 0 || res.Statements == 0 {
		t.Fatalf("profile %+v, efficiency %+v, %d statements: want samples and the server's CPU", p, eff, res.Statements)
	}
	profiled := float64(p.Samples) / float64(p.Hz) / float64(res.Statements)
	proc := eff.PerOp(eff.ServerCPU, res.QPS(), res.Seconds)
	cov := 100 * profiled / proc
	stacks, err := profile.Parse(p.Folded)
	if err != nil {
		t.Fatal(err)
	}
	var backend int64
	for k, n := range stacks {
		if strings.Contains(k, ";PostgresMain;") || strings.HasSuffix(k, ";PostgresMain") {
			backend += n
		}
	}
	t.Logf("%d connections, %d samples (%d under PostgresMain); profiled %.0f us/op, /proc %.0f us/op: coverage %.0f%%",
		res.Statements, p.Samples, backend, 1e6*profiled, 1e6*proc, cov)
	if cov < 80 {
		t.Errorf("coverage %.0f%%: the profile saw %.0f us/op of the %.0f us/op /proc counted; want >= 80%%",
			cov, 1e6*profiled, 1e6*proc)
	}
	if backend == 0 {
		t.Errorf("no sample under PostgresMain among %d: no backend stacks", p.Samples)
	}
	// The backends wait for their client between statements: the off-CPU
	// recording holds their waits.
	off, err := profile.Parse(p.OffCPU)
	if err != nil || off.Samples() == 0 {
		t.Errorf("off-CPU stacks %q, %v: want the server's waits", p.OffCPU, err)
	}
	t.Logf("off CPU %.0f us/op", float64(off.Samples())/float64(res.Statements))
}

// TestCgroupMemoryFacts measures a step on PostgreSQL under a 128 MB
// memory limit: the headline result holds the cgroup's figures (the
// limit, a peak within it, limit hits, page cache and swap), and a step on
// a server without a limit holds none.
func TestCgroupMemoryFacts(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("memory cgroups need root; tests run as root")
	}
	st := workload.Step{Name: "sum", Duration: 500 * time.Millisecond,
		NewWorker: func(ctx context.Context, db engine.DB, _, _ int, _ uint64) (workload.Worker, error) {
			c, err := db.(engine.SQL).Connect(ctx)
			return sumQuery{c}, err
		}}
	for _, limit := range []string{"128MB", ""} {
		db := enginetest.Open(t, engine.Target{Name: "mem", Engine: "postgres", Memory: limit})
		res, err := Measure(context.Background(), db, st, 1, 1, Options{})
		if err != nil {
			t.Fatal(err)
		}
		f := res.Facts
		_, has := f[store.FactServerMemoryLimit]
		if limit == "" {
			if has {
				t.Errorf("no limit: facts %v hold a memory limit", f)
			}
			continue
		}
		if !has || f[store.FactServerMemoryLimit] != 128<<20 || f[store.FactServerCgroupPeak] <= 0 ||
			f[store.FactServerCgroupPeak] > 128<<20 || f[store.FactServerLimitHits] < 0 ||
			f[store.FactServerPageCache] < 0 || f[store.FactServerPageCache] > f[store.FactServerCgroupPeak] {
			t.Errorf("128MB: facts limit %v peak %v hits %v cache %v swap %v; want the limit, a peak within it, cache under the peak",
				f[store.FactServerMemoryLimit], f[store.FactServerCgroupPeak], f[store.FactServerLimitHits],
				f[store.FactServerPageCache], f[store.FactServerSwap])
		}
	}
}
