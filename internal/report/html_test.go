package report_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	stdhtml "html"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	_ "benchlab/internal/engine/sqlite"
	"benchlab/internal/report"
	"benchlab/internal/runner"
	"benchlab/internal/spec"
	"benchlab/internal/store"
	_ "benchlab/internal/workload/insertbench"
	"benchlab/internal/workload/sysbench"
)

// hostile is text a store could hold that would run as script or load an
// image if it reached the page (or a chart tooltip) as markup.
const hostile = `<script>alert(1)</script><img src=x onerror=alert(2)> "quoted" & 'single'`

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
	dataOnce.Do(func() {
		data, dataErr = runRealExperiment(`[workload]
tests = ["point-query", "update-index"]
table_size = 2000
threads = [1, 2]
read_time = "1500ms"
write_time = "1500ms"
warmup = "200ms"
postwrite_wait = "0s"
report_interval = "0s"
`)
	})
	if dataErr != nil {
		t.Fatal(dataErr)
	}
	return data
}

// runRealExperiment runs the workload section given on two SQLite targets,
// "wal" and "delete", the second renamed to hostile text afterwards.
func runRealExperiment(workloadTOML string) (*report.Data, error) {
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
`+workloadTOML), "html test", "")
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
		if rs[i].Test == "point-query" || rs[i].Test == "qp100" {
			rs[i].Errors, rs[i].ErrorSamples = 1, []string{hostile}
		}
	}
	return d, nil
}

// TestHTMLEscapes checks that names and messages from the store appear as
// text, never as markup: the experiment name (title), a target name (header,
// tables, chart data, manifests) and an error message (notes).
func TestHTMLEscapes(t *testing.T) {
	d := realData(t)
	var buf bytes.Buffer
	if err := report.WriteHTML(&buf, d, report.Build(d)); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	// The inlined chart library holds markup of its own ("<img" among it):
	// look at the page without it.
	lib := strings.Index(html, "<script>")
	own := html[:lib] + html[lib+strings.Index(html[lib:], "</script>"):]
	for _, bad := range []string{"<script>alert(1)", "<img", `"quoted" &`, "& 'single'"} {
		if strings.Contains(own, bad) {
			t.Errorf("hostile text %q appears unescaped", bad)
		}
	}
	escaped := stdhtml.EscapeString(hostile)
	if n := strings.Count(html, escaped); n < 4 {
		t.Errorf("hostile text shown escaped %d times, want it in the title, header, tables and notes", n)
	}
	if !strings.Contains(html, "<title>benchlab experiment") || !strings.Contains(html[:strings.Index(html, "</title>")], escaped) {
		t.Error("the experiment name is not escaped text in the title")
	}
	if !strings.Contains(html, "failed operations, first: "+escaped) {
		t.Error("the planted error message is not escaped text in the notes")
	}
	if !strings.Contains(html, `\u003cscript\u003ealert(1)\u003c/script\u003e`) {
		t.Error("hostile text not escaped inside the chart data")
	}
	if n := strings.Count(html, "<script"); n != 3 {
		t.Errorf("%d script elements, want 3 (library, data, init)", n)
	}
	if n := strings.Count(html, "</script>"); n != 3 {
		t.Errorf("%d script end tags, want 3: store text closed a script element", n)
	}
}

// TestHTMLInBrowser opens the report of a real run in headless Chromium and
// checks that no request leaves the page, no JavaScript error happens, no
// dialog opens, the hostile names read as text, and every chart draws; it
// saves a screenshot (and, with BENCHLAB_SCREENSHOT or BENCHLAB_HTML set,
// keeps the screenshot or the page there).
func TestHTMLInBrowser(t *testing.T) {
	// Two tests at two thread counts, two targets: relative bars for 2
	// groups, 4 per-second charts, 2 thread charts, 4 box plots, efficiency
	// (CPU and KB written at least) and 2 latency charts.
	checkInBrowser(t, realData(t), 16)
}

// TestInsertHTMLInBrowser opens the report of a small Insert Benchmark: its
// toned tables and the background insert charts must load and draw as the
// others do.
func TestInsertHTMLInBrowser(t *testing.T) {
	d, err := runRealExperiment(`[workload]
suite = "insert"
tests = ["qp100"]
report_interval = "0s"
[workload.insert]
rows = 4000
inserts = 500
query_time = "2s"
rates = [100]
`)
	if err != nil {
		t.Fatal(err)
	}
	// Relative bars for 2 groups (load, read-write), per-second and box
	// plots for l.i0, l.x and qp100, latency for 2 groups and the
	// background inserts of qp100.
	checkInBrowser(t, d, 11)
}

// checkInBrowser writes d's report, opens it in Chromium and checks that
// nothing but the file loads, no script fails, hostile names stay text, and
// at least minCharts charts draw.
func checkInBrowser(t *testing.T, d *report.Data, minCharts int) {
	t.Helper()
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium not found on PATH; .ci/run installs Debian's chromium package (apt-get install -y chromium)")
		}
		t.Skip("chromium not installed (apt-get install -y chromium); this test fails instead when CI=true")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	var page bytes.Buffer
	start := time.Now()
	if err := report.WriteHTML(&page, d, report.Build(d)); err != nil {
		t.Fatal(err)
	}
	t.Logf("rendered %d bytes in %s", page.Len(), time.Since(start))
	if err := os.WriteFile(path, page.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := os.Getenv("BENCHLAB_HTML"); out != "" {
		if err := os.WriteFile(out, page.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wantCharts := strings.Count(page.String(), `<div class="chart"`)

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
		case *network.EventWebSocketCreated:
			requests = append(requests, e.URL)
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+e.ExceptionDetails.Text+" "+exceptionText(e.ExceptionDetails))
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.APITypeError || e.Type == runtime.APITypeWarning || e.Type == runtime.APITypeAssert {
				problems = append(problems, "console "+string(e.Type)+": "+argsText(e.Args))
			}
		case *cdplog.EventEntryAdded:
			if e.Entry.Level == cdplog.LevelError || e.Entry.Level == cdplog.LevelWarning {
				problems = append(problems, "log "+string(e.Entry.Source)+": "+e.Entry.Text)
			}
		case *cdppage.EventJavascriptDialogOpening:
			problems = append(problems, "dialog: "+e.Message)
			go chromedp.Run(ctx, cdppage.HandleJavaScriptDialog(false))
		}
	})
	var drawn []int
	var hostileText bool
	var scripts, images, tips int
	hostileJS, _ := json.Marshal(hostile)
	var shot []byte
	err = chromedp.Run(ctx,
		network.Enable(), runtime.Enable(), cdplog.Enable(),
		chromedp.Navigate("file://"+path),
		chromedp.WaitReady("body"),
		chromedp.Sleep(time.Second),
		// For each chart container, the area of its largest canvas or svg.
		chromedp.Evaluate(`Array.from(document.querySelectorAll("div.chart")).map(function (el) {
			var best = 0;
			el.querySelectorAll("canvas, svg").forEach(function (c) {
				var r = c.getBoundingClientRect(); best = Math.max(best, Math.round(r.width * r.height));
			});
			return best;
		})`, &drawn),
		chromedp.Evaluate(`document.body.innerText.indexOf(`+string(hostileJS)+`) >= 0`, &hostileText),
		// Show a tooltip on every chart: ECharts writes tooltips as HTML, so
		// a series or category name that reached it unescaped would add an
		// element (and fire a dialog or a request).
		chromedp.Evaluate(`Array.from(document.querySelectorAll("div.chart")).filter(function (el) {
			var c = echarts.getInstanceByDom(el);
			if (!c) { return false; }
			c.dispatchAction({ type: "showTip", seriesIndex: 0, dataIndex: 0 });
			c.dispatchAction({ type: "showTip", seriesIndex: 1, dataIndex: 0 });
			return true;
		}).length`, &tips),
		chromedp.Sleep(300*time.Millisecond),
		chromedp.Evaluate(`document.querySelectorAll("script").length`, &scripts),
		chromedp.Evaluate(`document.querySelectorAll("img").length`, &images),
		chromedp.FullScreenshot(&shot, 80),
	)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "report.png"), shot, 0o644); err != nil {
		t.Fatal(err)
	}
	if out := os.Getenv("BENCHLAB_SCREENSHOT"); out != "" {
		if err := os.WriteFile(out, shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, u := range requests {
		if u != "file://"+path {
			t.Errorf("the page requested %s; only the file itself may load", u)
		}
	}
	if len(requests) == 0 {
		t.Error("no request seen at all: network events were not captured")
	}
	if len(problems) > 0 {
		t.Errorf("JavaScript problems: %v", problems)
	}
	if !hostileText {
		t.Error("the hostile target name does not read as text on the page")
	}
	if scripts != 3 || images != 0 {
		t.Errorf("after showing tooltips the page has %d script and %d img elements, want 3 and 0", scripts, images)
	}
	if tips != wantCharts {
		t.Errorf("tooltips shown on %d of %d charts", tips, wantCharts)
	}
	if wantCharts < minCharts {
		t.Errorf("%d chart containers, want at least %d", wantCharts, minCharts)
	}
	if len(drawn) != wantCharts {
		t.Errorf("the browser saw %d chart containers, the page has %d", len(drawn), wantCharts)
	}
	for i, area := range drawn {
		if area == 0 {
			t.Errorf("chart %d did not draw (no canvas or svg with a size)", i)
		}
	}
}

func exceptionText(d *runtime.ExceptionDetails) string {
	if d.Exception != nil {
		return d.Exception.Description
	}
	return ""
}

func argsText(args []*runtime.RemoteObject) string {
	var parts []string
	for _, a := range args {
		if a.Description != "" {
			parts = append(parts, a.Description)
		} else {
			parts = append(parts, string(a.Value))
		}
	}
	return strings.Join(parts, " ")
}

// Budgets for a 3-target x 32-test x 2-thread-count experiment: a page
// must build in a CI step and open in a browser without a wait.
const (
	budgetTime  = 2 * time.Second
	budgetBytes = 5 << 20
)

// TestHTMLBudget renders the synthetic 3 x 32 x 2 report once and fails
// when it passes 5 MB. Its time (budget 2 s) is BenchmarkHTML's to print:
// a timed test would fail on a busy machine.
func TestHTMLBudget(t *testing.T) {
	d := syntheticData(3, 2, 60)
	var buf bytes.Buffer
	if err := report.WriteHTML(&buf, d, report.Build(d)); err != nil {
		t.Fatal(err)
	}
	if buf.Len() > budgetBytes {
		t.Errorf("page is %d bytes, budget %d", buf.Len(), budgetBytes)
	}
	// A per-second chart and a box plot per test and thread count, and a
	// thread chart per test, at least.
	if n := strings.Count(buf.String(), `<div class="chart"`); n < 32*2*2+32 {
		t.Errorf("%d charts: the synthetic experiment did not produce the charts it should", n)
	}
}

// BenchmarkHTML builds and renders the report of a synthetic 3-target x
// 32-test x 2-thread-count experiment with 60-second series (budget: under
// 2 s and 5 MB); it reports the page size as MB.
func BenchmarkHTML(b *testing.B) {
	d := syntheticData(3, 2, 60)
	var size int
	for b.Loop() {
		var buf bytes.Buffer
		if err := report.WriteHTML(&buf, d, report.Build(d)); err != nil {
			b.Fatal(err)
		}
		size = buf.Len()
	}
	b.ReportMetric(float64(size)/1e6, "MB")
	// The share of the 2 s budget one render takes (over 1 misses it).
	b.ReportMetric(float64(b.Elapsed())/float64(b.N)/float64(budgetTime), "of_budget")
}

// syntheticData makes an experiment of every sysbench test at 1..threadCounts
// threads on the given number of SQLite-like targets, each step with 5
// warm-up seconds and secs measured seconds whose throughput wanders and
// stalls now and then, latency percentiles and per-operation costs.
func syntheticData(targets, threadCounts, secs int) *report.Data {
	rng := rand.New(rand.NewPCG(1, 2))
	d := &report.Data{Experiment: store.Experiment{ID: 1, Name: "synthetic", Base: "t0"},
		Results: map[int64][]store.Result{}}
	tests := sysbench.Suite{}.Tests()
	for ti := 0; ti < targets; ti++ {
		name := fmt.Sprintf("t%d", ti)
		d.Experiment.Targets = append(d.Experiment.Targets, name)
		run := store.Run{ID: int64(ti + 1), Target: name, Engine: "sqlite", Version: "3.54.1", Status: store.StatusOK,
			Manifest: `{"engine": {"name": "sqlite", "settings": {"journal_mode": "wal"}}}`}
		d.Runs = append(d.Runs, run)
		for i, tc := range tests {
			for th := 1; th <= threadCounts; th++ {
				level := 1000 * float64(i+1) * float64(th) * (1 + 0.1*float64(ti))
				r := store.Result{RunID: run.ID, Seq: len(d.Results[run.ID]) + 1, Test: tc.Name, Group: tc.Group,
					Threads: th, Metric: "qps", Status: store.StatusOK, Seconds: float64(secs)}
				for sec := -5; sec < secs; sec++ {
					v := level * (1 + 0.05*rng.NormFloat64())
					if sec < 0 {
						v *= 0.6
					}
					if rng.IntN(20) == 0 {
						v *= 0.3
					}
					iv := store.Interval{Sec: sec, Seconds: 1, Statements: int64(v), Events: int64(v),
						P95: time.Duration(1e6 / v * 1e6), Max: time.Duration(5e6 / v * 1e6)}
					r.Intervals = append(r.Intervals, iv)
					if sec >= 0 {
						r.Statements += iv.Statements
					}
				}
				r.Events = r.Statements
				r.Latency = store.Latency{P50: time.Duration(float64(th) * 1e6 / level * 1e6),
					P95: time.Duration(float64(th) * 2e6 / level * 1e6), P99: time.Duration(float64(th) * 3e6 / level * 1e6),
					Mean: time.Duration(float64(th) * 1.1e6 / level * 1e6)}
				r.Eff = &store.Efficiency{Seconds: float64(secs), ClientCPU: float64(secs) * float64(th) * (0.5 + 0.1*float64(ti)),
					ServerCPU: store.NotMeasured, ServerReadBytes: store.NotMeasured, ServerWriteBytes: store.NotMeasured,
					ServerReadCalls: store.NotMeasured, ServerWriteCalls: store.NotMeasured, ServerCS: store.NotMeasured,
					ServerPeakRSS: store.NotMeasured, ClientWriteBytes: r.Statements * 100, ClientReadCalls: r.Statements,
					DevReads: store.NotReadable, DevWrites: store.NotReadable, DevReadBytes: store.NotReadable,
					DevWriteBytes: store.NotReadable, MachineCPU: 2 * float64(secs), MachineBusy: float64(secs)}
				d.Results[run.ID] = append(d.Results[run.ID], r)
			}
		}
	}
	return d
}
