// Package livemetrics serves a running experiment's last second of every
// target, test, threads and role as Prometheus text (run --metrics-addr),
// with the Go runtime's and in-process engines' memory beside it.
package livemetrics

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime/metrics"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/runner"
)

// Server holds the last second of every target/test/threads/role of a
// running experiment and serves it as Prometheus text.
type Server struct {
	mu   sync.Mutex
	last map[string]liveEntry
	srv  *http.Server
	ln   net.Listener
}

type liveEntry struct {
	target string
	s      runner.LiveSample
}

// Start serves /metrics on addr, which must be a loopback address: the
// numbers are the lab's, not the network's. Its errors say what is wrong
// with addr.
func Start(addr string) (*Server, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%q is not host:port (e.g. 127.0.0.1:9464)", addr)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("%s is not a loopback address; want 127.0.0.1:PORT, [::1]:PORT or localhost:PORT", host)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %s: %v", addr, err)
	}
	lm := &Server{last: map[string]liveEntry{}, ln: ln}
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		lm.write(w)
	})
	lm.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go lm.srv.Serve(ln)
	return lm, nil
}

// Addr is the address served.
func (lm *Server) Addr() string { return lm.ln.Addr().String() }

// Record keeps one second of one role (runner.Options.Live).
func (lm *Server) Record(target string, s runner.LiveSample) {
	key := strings.Join([]string{target, s.Test, strconv.Itoa(s.Threads), s.Role}, "\x00")
	lm.mu.Lock()
	lm.last[key] = liveEntry{target, s}
	lm.mu.Unlock()
}

// Close stops serving.
func (lm *Server) Close() { lm.srv.Close() }

func (lm *Server) write(w io.Writer) {
	lm.mu.Lock()
	entries := make([]liveEntry, 0, len(lm.last))
	for _, e := range lm.last {
		entries = append(entries, e)
	}
	lm.mu.Unlock()
	sort.Slice(entries, func(i, j int) bool {
		a, b := entries[i], entries[j]
		return fmt.Sprint(a.target, a.s.Test, a.s.Threads, a.s.Role) < fmt.Sprint(b.target, b.s.Test, b.s.Threads, b.s.Role)
	})
	fams := []struct {
		name, help string
		vals       func(s runner.LiveSample) [][2]string
	}{
		{"benchlab_live_ops_per_second", "Operations per second over the last second.", func(s runner.LiveSample) [][2]string {
			return [][2]string{{"", fmtF(float64(s.Events) / s.Seconds)}}
		}},
		{"benchlab_live_qps", "Statements per second over the last second.", func(s runner.LiveSample) [][2]string {
			return [][2]string{{"", fmtF(float64(s.Statements) / s.Seconds)}}
		}},
		{"benchlab_live_errors_per_second", "Failed operations per second over the last second.", func(s runner.LiveSample) [][2]string {
			return [][2]string{{"", fmtF(float64(s.Errors) / s.Seconds)}}
		}},
		{"benchlab_live_latency_seconds", "Latency quantiles over the last second.", func(s runner.LiveSample) [][2]string {
			return [][2]string{{`quantile="0.5"`, fmtF(s.P50.Seconds())}, {`quantile="0.95"`, fmtF(s.P95.Seconds())},
				{`quantile="0.99"`, fmtF(s.P99.Seconds())}, {`quantile="1"`, fmtF(s.Max.Seconds())}}
		}},
	}
	writeGoMemory(w)
	for _, f := range fams {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s gauge\n", f.name, f.help, f.name)
		for _, e := range entries {
			if e.s.Seconds <= 0 {
				continue
			}
			base := fmt.Sprintf(`target=%q,test=%q,threads="%d",role=%q,warmup="%t"`, e.target, e.s.Test, e.s.Threads, e.s.Role, e.s.Warm)
			for _, v := range f.vals(e.s) {
				l := base
				if v[0] != "" {
					l += "," + v[0]
				}
				fmt.Fprintf(w, "%s{%s} %s\n", f.name, l, v[1])
			}
		}
	}
}

func fmtF(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// goMemory are the Go runtime's memory classes served with the live metrics,
// so that benchlab's own memory can be told from an embedded engine's C
// allocations (SQLite's page cache) in the process's resident set
// (scripts/rss-long-run.py reads them).
var goMemory = []metrics.Sample{
	{Name: "/memory/classes/total:bytes"},
	{Name: "/memory/classes/heap/released:bytes"},
	{Name: "/memory/classes/heap/objects:bytes"},
}

// writeGoMemory writes benchlab_go_memory_bytes (what the Go runtime has
// mapped and not returned to the OS: heap, stacks, its own metadata; an
// upper bound of its part of the resident set) and benchlab_go_heap_bytes
// (live and not yet collected heap objects), then the runtime's detail
// (writeGoDetail) and benchlab_engine_memory_bytes{engine}, what each
// in-process engine holds (engine.InProcessMemory): the resident set less
// that is benchlab's own memory.
func writeGoMemory(w io.Writer) {
	s := append([]metrics.Sample(nil), goMemory...)
	metrics.Read(s)
	val := func(i int) uint64 {
		if s[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return s[i].Value.Uint64()
	}
	fmt.Fprintf(w, "# HELP benchlab_go_memory_bytes Memory the Go runtime holds (mapped, not released), bytes.\n"+
		"# TYPE benchlab_go_memory_bytes gauge\nbenchlab_go_memory_bytes %d\n", val(0)-min(val(1), val(0)))
	fmt.Fprintf(w, "# HELP benchlab_go_heap_bytes Go heap objects, live and not yet collected, bytes.\n"+
		"# TYPE benchlab_go_heap_bytes gauge\nbenchlab_go_heap_bytes %d\n", val(2))
	writeGoDetail(w)
	by, _ := engine.InProcessMemory()
	fmt.Fprintf(w, "# HELP benchlab_engine_memory_bytes Memory an in-process engine holds from its own allocator (SQLite: sqlite3_memory_used, page caches included), bytes.\n"+
		"# TYPE benchlab_engine_memory_bytes gauge\n")
	for _, n := range engine.MemoryEngines() {
		fmt.Fprintf(w, "benchlab_engine_memory_bytes{engine=%q} %d\n", n, by[n])
	}
}

// goDetail are the Go runtime's figures behind benchlab_go_memory_bytes:
// every memory class, the heap goal and limit, the goroutines, the GC cycles
// and the CPU the GC took.
var goDetail = func() []metrics.Sample {
	var s []metrics.Sample
	for _, d := range metrics.All() {
		if strings.HasPrefix(d.Name, "/memory/classes/") && d.Kind == metrics.KindUint64 {
			s = append(s, metrics.Sample{Name: d.Name})
		}
	}
	return append(s, metrics.Sample{Name: "/gc/heap/goal:bytes"}, metrics.Sample{Name: "/gc/heap/live:bytes"},
		metrics.Sample{Name: "/sched/goroutines:goroutines"}, metrics.Sample{Name: "/gc/cycles/total:gc-cycles"},
		metrics.Sample{Name: "/gc/heap/objects:objects"}, metrics.Sample{Name: "/gc/gogc:percent"},
		metrics.Sample{Name: "/gc/gomemlimit:bytes"}, metrics.Sample{Name: "/gc/limiter/last-enabled:gc-cycle"},
		metrics.Sample{Name: "/cpu/classes/gc/total:cpu-seconds"}, metrics.Sample{Name: "/cpu/classes/total:cpu-seconds"})
}()

// writeGoDetail writes benchlab_go_memory_class_bytes{class} for every
// memory class of the Go runtime and benchlab_go_runtime{metric} for the
// rest of goDetail (the GC's CPU among them, as the runtime estimates it), so that what the Go part of the resident set is made of
// can be read during a run.
func writeGoDetail(w io.Writer) {
	s := append([]metrics.Sample(nil), goDetail...)
	metrics.Read(s)
	fmt.Fprintf(w, "# HELP benchlab_go_memory_class_bytes The Go runtime's memory by class (runtime/metrics /memory/classes), bytes.\n"+
		"# TYPE benchlab_go_memory_class_bytes gauge\n")
	for _, x := range s {
		if c, ok := strings.CutPrefix(x.Name, "/memory/classes/"); ok {
			fmt.Fprintf(w, "benchlab_go_memory_class_bytes{class=%q} %d\n", strings.TrimSuffix(c, ":bytes"), x.Value.Uint64())
		}
	}
	fmt.Fprintf(w, "# HELP benchlab_go_runtime Other Go runtime figures (runtime/metrics, named by metric).\n# TYPE benchlab_go_runtime gauge\n")
	for _, x := range s {
		switch {
		case strings.HasPrefix(x.Name, "/memory/classes/"):
		case x.Value.Kind() == metrics.KindUint64:
			fmt.Fprintf(w, "benchlab_go_runtime{metric=%q} %d\n", x.Name, x.Value.Uint64())
		case x.Value.Kind() == metrics.KindFloat64:
			fmt.Fprintf(w, "benchlab_go_runtime{metric=%q} %s\n", x.Name, fmtF(x.Value.Float64()))
		}
	}
}
