package report_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	_ "benchlab/internal/engine/sqlite"
	"benchlab/internal/report"
	"benchlab/internal/runner"
	"benchlab/internal/spec"
	"benchlab/internal/store"
	"benchlab/internal/workload/sysbench"
)

const hostile = `<script>alert(1)</script> "quoted" & 'single'`

// realData runs a short two-target SQLite experiment at two thread counts
// and loads it back from the store, then plants hostile text where a store
// written elsewhere could hold it: a target name and an error message.
var (
	dataOnce sync.Once
	data     *report.Data
	dataErr  error
)

func realData(t *testing.T) *report.Data {
	t.Helper()
	dataOnce.Do(func() { data, dataErr = runRealExperiment() })
	if dataErr != nil {
		t.Fatal(dataErr)
	}
	return data
}

func runRealExperiment() (*report.Data, error) {
	dir, err := os.MkdirTemp("", "benchlab-html-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	s, err := spec.Parse([]byte(`name = "html `+strings.ReplaceAll(hostile, `"`, `\"`)+`"
[[target]]
name = "wal"
engine = "sqlite"
[[target]]
name = "delete"
engine = "sqlite"
[target.settings]
journal_mode = "delete"
[workload]
tests = ["point-query", "update-index"]
table_size = 2000
threads = [1, 2]
read_time = "1500ms"
write_time = "1500ms"
warmup = "200ms"
postwrite_wait = "0s"
report_interval = "0s"
`), "html test", "")
	if err != nil {
		return nil, err
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	st, err := store.Open(filepath.Join(dir, "r.db"))
	if err != nil {
		return nil, err
	}
	defer st.Close()
	id, err := runner.RunExperiment(context.Background(), s, st, runner.ExperimentOptions{Out: io.Discard})
	if err != nil {
		return nil, err
	}
	d, err := report.Load(context.Background(), st, id, true)
	if err != nil {
		return nil, err
	}
	for i := range d.Runs {
		if d.Runs[i].Target == "delete" {
			d.Runs[i].Target = hostile
		}
	}
	for i, name := range d.Experiment.Targets {
		if name == "delete" {
			d.Experiment.Targets[i] = hostile
		}
	}
	rs := d.Results[d.Runs[0].ID]
	for i := range rs {
		if rs[i].Test == "point-query" {
			rs[i].Errors, rs[i].ErrorSamples = 1, []string{hostile}
		}
	}
	return d, nil
}

// TestHTMLEscapes checks that names and messages from the store appear as
// text, never as markup.
func TestHTMLEscapes(t *testing.T) {
	d := realData(t)
	var buf bytes.Buffer
	if err := report.WriteHTML(&buf, d, report.Build(d)); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	if strings.Contains(html, "<script>alert(1)") {
		t.Fatal("hostile text appears unescaped")
	}
	if !strings.Contains(html, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("hostile text not shown as escaped text in the tables")
	}
	if !strings.Contains(html, `\u003cscript\u003ealert(1)`) {
		t.Error("hostile text not escaped inside the chart data")
	}
	if strings.Count(html, "<script") != 3 {
		t.Errorf("%d script elements, want 3 (library, data, init)", strings.Count(html, "<script"))
	}
}

// TestHTMLInBrowser opens the report of a real run in headless Chromium and
// checks that no request leaves the page, no JavaScript error happens, no
// dialog opens, and every chart draws; it saves a screenshot.
func TestHTMLInBrowser(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium not found; scripts/install-deps.sh installs Debian's chromium")
		}
		t.Skip("chromium not installed (apt-get install chromium)")
	}
	d := realData(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := report.WriteHTML(f, d, report.Build(d)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	t.Logf("rendered in %s", time.Since(start))

	// The browser profile lives outside t.TempDir: Chromium's helper
	// processes may still write there for a moment after it is stopped, so
	// it is removed with retries, and a failure to remove it fails nothing.
	profile, err := os.MkdirTemp("", "benchlab-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for i := 0; i < 20; i++ {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(profile),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true), chromedp.WindowSize(1200, 900),
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
	defer cancel()

	var mu sync.Mutex
	var requests, problems []string
	chromedp.ListenTarget(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			requests = append(requests, e.Request.URL)
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+e.ExceptionDetails.Text)
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.APITypeError || e.Type == runtime.APITypeWarning {
				problems = append(problems, "console "+string(e.Type))
			}
		case *page.EventJavascriptDialogOpening:
			problems = append(problems, "dialog: "+e.Message)
			go chromedp.Run(ctx, page.HandleJavaScriptDialog(false))
		}
	})
	var charts, drawn int
	var shot []byte
	err = chromedp.Run(ctx,
		network.Enable(), runtime.Enable(),
		chromedp.Navigate("file://"+path),
		chromedp.WaitReady("body"),
		chromedp.Sleep(time.Second),
		chromedp.Evaluate(`document.querySelectorAll("div.chart").length`, &charts),
		chromedp.Evaluate(`Array.from(document.querySelectorAll("div.chart")).filter(function (el) {
			var c = el.querySelector("canvas"); return c && c.width > 0 && c.height > 0; }).length`, &drawn),
		chromedp.FullScreenshot(&shot, 80),
	)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "report.png"), shot, 0o644); err != nil {
		t.Fatal(err)
	}
	if out := os.Getenv("BENCHLAB_SCREENSHOT"); out != "" {
		os.WriteFile(out, shot, 0o644)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, u := range requests {
		if !strings.HasPrefix(u, "file://") {
			t.Errorf("the page requested %s; it must not touch the network", u)
		}
	}
	if len(requests) == 0 {
		t.Error("no request seen at all: network events were not captured")
	}
	if len(problems) > 0 {
		t.Errorf("JavaScript problems: %v", problems)
	}
	// 4 groups of relative bars, 4 per-second, 2 threads, 4 box plots,
	// efficiency, 4 latency: charts must all exist and all draw.
	if charts < 10 || drawn != charts {
		t.Errorf("%d of %d charts drew", drawn, charts)
	}
}

// BenchmarkHTML renders the report of a synthetic 3-target x 32-test x
// 2-thread-count experiment with 60-second series; target: under 2 s and
// 5 MB. It reports bytes per page as MB.
func BenchmarkHTML(b *testing.B) {
	d := syntheticData(3, 2, 60)
	r := report.Build(d)
	var size int
	for i := 0; i < b.N; i++ {
		var buf bytes.Buffer
		if err := report.WriteHTML(&buf, d, r); err != nil {
			b.Fatal(err)
		}
		size = buf.Len()
	}
	b.ReportMetric(float64(size)/1e6, "MB")
}

func syntheticData(targets, threadCounts, secs int) *report.Data {
	d := &report.Data{Experiment: store.Experiment{ID: 1, Name: "synthetic", Base: "t0"},
		Results: map[int64][]store.Result{}}
	tests := sysbench.Suite{}.Tests()
	for ti := 0; ti < targets; ti++ {
		name := "t" + string(rune('0'+ti))
		d.Experiment.Targets = append(d.Experiment.Targets, name)
		run := store.Run{ID: int64(ti + 1), Target: name, Engine: "sqlite", Status: store.StatusOK, Manifest: "{}"}
		d.Runs = append(d.Runs, run)
		seq := 0
		for _, tc := range tests {
			for th := 1; th <= threadCounts; th++ {
				seq++
				r := store.Result{RunID: run.ID, Seq: seq, Test: tc.Name, Group: tc.Group, Threads: th, Metric: "qps",
					Status: store.StatusOK, Seconds: float64(secs), Statements: int64(1000 * secs * (ti + 1)),
					Events: int64(1000 * secs), Latency: store.Latency{P50: time.Millisecond, P99: 3 * time.Millisecond}}
				for sec := -5; sec < secs; sec++ {
					r.Intervals = append(r.Intervals, store.Interval{Sec: sec, Seconds: 1, Statements: int64(1000 + sec*3)})
				}
				d.Results[run.ID] = append(d.Results[run.ID], r)
			}
		}
	}
	return d
}
