package report

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"strconv"
	"time"

	"benchlab/internal/store"
)

// Record is one stored step result flattened for machine-readable output
// (`benchlab report --format json|csv`): what ran where, its counts and
// rates, latency in milliseconds, and the raw efficiency counters of the
// measured interval. Counters that were not measured or not readable, and
// latency figures that were not measured (those an imported tool's output
// did not print), are null in JSON and empty in CSV; units are in the names.
type Record struct {
	Experiment   int64              `json:"experiment"`
	Run          int64              `json:"run"`
	Target       string             `json:"target"`
	Engine       string             `json:"engine"`
	Version      string             `json:"version"`
	Repeat       int                `json:"repeat"`
	RunStatus    string             `json:"run_status"`
	Seq          int                `json:"seq"`
	Test         string             `json:"test"`
	Family       string             `json:"family"`
	Group        string             `json:"group"`
	Role         string             `json:"role"`
	Threads      int                `json:"threads"`
	Warm         bool               `json:"warm"`
	Action       bool               `json:"action"`
	Status       string             `json:"status"`
	Metric       string             `json:"metric"`
	Started      string             `json:"started"`
	Seconds      float64            `json:"seconds"`
	Events       int64              `json:"events"`
	Statements   int64              `json:"statements"`
	Rows         int64              `json:"rows"`
	Errors       int64              `json:"errors"`
	QPS          float64            `json:"qps"`
	TPS          float64            `json:"tps"`
	Throughput   float64            `json:"throughput"`
	TargetRate   float64            `json:"target_rate"`
	LatMeanMs    *float64           `json:"lat_mean_ms"`
	LatP50Ms     *float64           `json:"lat_p50_ms"`
	LatP95Ms     *float64           `json:"lat_p95_ms"`
	LatP99Ms     *float64           `json:"lat_p99_ms"`
	LatP999Ms    *float64           `json:"lat_p999_ms"`
	LatMaxMs     *float64           `json:"lat_max_ms"`
	EffSeconds   *float64           `json:"eff_seconds"`
	ServerCPUS   *float64           `json:"server_cpu_s"`
	ClientCPUS   *float64           `json:"client_cpu_s"`
	ServerReadB  *int64             `json:"server_read_bytes"`
	ServerWriteB *int64             `json:"server_write_bytes"`
	ServerReads  *int64             `json:"server_read_calls"`
	ServerWrites *int64             `json:"server_write_calls"`
	ServerCS     *int64             `json:"server_context_switches"`
	ClientCS     *int64             `json:"client_context_switches"`
	ServerRSSB   *int64             `json:"server_peak_rss_bytes"`
	Device       string             `json:"device"`
	DevReads     *int64             `json:"device_reads"`
	DevWrites    *int64             `json:"device_writes"`
	DevReadB     *int64             `json:"device_read_bytes"`
	DevWriteB    *int64             `json:"device_write_bytes"`
	StealPct     *float64           `json:"steal_pct"`
	ForeignPct   *float64           `json:"foreign_cpu_pct"`
	DBBytes      *int64             `json:"db_bytes"`
	Facts        map[string]float64 `json:"facts,omitempty"`
	// SweepSetting and SweepValue are the setting a sweep varied and the
	// value this result's target ran, for a target a sweep made (the
	// stored spec's swept marks).
	SweepSetting string `json:"sweep_setting,omitempty"`
	SweepValue   string `json:"sweep_value,omitempty"`
	// Stalled says the measured step completed no operation (a failure to
	// measure, store.Result.Stalled): its throughput of 0 is no rate, and
	// the verdicts leave it out.
	Stalled bool `json:"stalled"`
	// Intervals are the 1-second series (JSON only).
	Intervals []IntervalRecord `json:"intervals,omitempty"`
	// EngineSeries are the engine's counters and gauges per second of the
	// measured part (JSON; CSV with --engine-series).
	EngineSeries []EngineSeriesRecord `json:"engine_series,omitempty"`
}

// EngineSeriesRecord is one engine counter or gauge over a step's seconds
// (store.EngineSeries): a counter as its rate per second, a gauge as its
// value at the end of each second.
type EngineSeriesRecord struct {
	Name string `json:"name"`
	// Kind is "counter" or "gauge"; Unit "/s" for a counter's rate, ""
	// for a gauge.
	Kind   string              `json:"kind"`
	Unit   string              `json:"unit"`
	Points []EnginePointRecord `json:"points"`
}

// EnginePointRecord is one second of an engine series; Sec counts as an
// interval's does, and Time is the second's end on the wall clock.
type EnginePointRecord struct {
	Sec   int     `json:"sec"`
	Time  string  `json:"time"`
	Value float64 `json:"value"`
}

// secondEnd is the wall-clock end of second sec of a result that started
// its measured part at started: interval k covers (start + k s, start +
// (k+1) s].
func secondEnd(started time.Time, sec int) string {
	return started.Add(time.Duration(sec+1) * time.Second).UTC().Format(time.RFC3339Nano)
}

// engineSeriesRecords flattens r's engine series.
func engineSeriesRecords(r store.Result) []EngineSeriesRecord {
	var out []EngineSeriesRecord
	for _, x := range r.Internals {
		kind := "counter"
		if x.Gauge {
			kind = "gauge"
		}
		rec := EngineSeriesRecord{Name: x.Name, Kind: kind, Unit: x.Unit()}
		for _, p := range x.Points {
			rec.Points = append(rec.Points, EnginePointRecord{Sec: p.Sec, Time: secondEnd(r.Started, p.Sec), Value: p.Value})
		}
		out = append(out, rec)
	}
	return out
}

// IntervalRecord is one second of a step's series.
type IntervalRecord struct {
	Sec int `json:"sec"`
	// Time is the interval's end on the wall clock (RFC 3339, UTC).
	Time       string  `json:"time"`
	Seconds    float64 `json:"seconds"`
	Events     int64   `json:"events"`
	Statements int64   `json:"statements"`
	Rows       int64   `json:"rows"`
	Errors     int64   `json:"errors"`
	// P95Ms and MaxMs are null when the second has none (an imported
	// tool's series prints no maximum, and a p95 only at --percentile=95).
	P95Ms *float64 `json:"p95_ms"`
	MaxMs *float64 `json:"max_ms"`
	// CPUSpeed is the CPU speed probes' mean rate in the second (rounds per
	// CPU microsecond, as the step's fact cpu_speed); null without one.
	CPUSpeed *float64 `json:"cpu_speed"`
}

func msOf(d time.Duration) float64 { return float64(d) / 1e6 }

// latencyOf is a latency figure in ms, or nil when it is 0: not measured
// (a percentile an imported tool's output did not print).
func latencyOf(d time.Duration) *float64 {
	if d <= 0 {
		return nil
	}
	v := msOf(d)
	return &v
}

// measuredI is v, or nil for the not-measured and not-readable sentinels.
func measuredI(v int64) *int64 {
	if v < 0 {
		return nil
	}
	return &v
}

func measuredF(v float64) *float64 {
	if v < 0 {
		return nil
	}
	return &v
}

// Records flattens d's results in run order, then step order.
func Records(d *Data) []Record {
	var out []Record
	swept := sweptOf(d)
	for _, run := range d.Runs {
		for _, r := range d.Results[run.ID] {
			rec := Record{Experiment: d.Experiment.ID, Run: run.ID, Target: run.Target, Engine: run.Engine,
				Version: run.Version, Repeat: run.Repeat, RunStatus: run.Status, Seq: r.Seq, Test: r.Test,
				Family: r.Family, Group: r.Group, Role: r.Role.Name, Threads: r.Threads, Warm: r.Warm, Action: r.Action,
				Status: r.Status, Metric: r.Metric, Started: r.Started.UTC().Format(time.RFC3339Nano), Seconds: r.Seconds,
				Events: r.Events, Statements: r.Statements, Rows: r.Rows, Errors: r.Errors,
				QPS: r.QPS(), TPS: r.TPS(), Throughput: r.Throughput(), TargetRate: r.Role.TargetRate,
				LatMeanMs: latencyOf(r.Latency.Mean), LatP50Ms: latencyOf(r.Latency.P50), LatP95Ms: latencyOf(r.Latency.P95),
				LatP99Ms: latencyOf(r.Latency.P99), LatP999Ms: latencyOf(r.Latency.P999), LatMaxMs: latencyOf(r.Latency.Max),
				Facts: r.Facts, SweepSetting: swept[run.Target][0], SweepValue: swept[run.Target][1],
				Stalled: r.Stalled()}
			if r.DBBytes != 0 {
				rec.DBBytes = measuredI(r.DBBytes)
			}
			if e := r.Eff; e != nil {
				rec.EffSeconds, rec.ServerCPUS, rec.ClientCPUS = measuredF(e.Seconds), measuredF(e.ServerCPU), measuredF(e.ClientCPU)
				rec.ServerReadB, rec.ServerWriteB = measuredI(e.ServerReadBytes), measuredI(e.ServerWriteBytes)
				rec.ServerReads, rec.ServerWrites = measuredI(e.ServerReadCalls), measuredI(e.ServerWriteCalls)
				rec.ServerCS, rec.ClientCS, rec.ServerRSSB = measuredI(e.ServerCS), measuredI(e.ClientCS), measuredI(e.ServerPeakRSS)
				rec.Device = e.Device
				rec.DevReads, rec.DevWrites = measuredI(e.DevReads), measuredI(e.DevWrites)
				rec.DevReadB, rec.DevWriteB = measuredI(e.DevReadBytes), measuredI(e.DevWriteBytes)
				rec.StealPct, rec.ForeignPct = measuredF(e.StealPct()), measuredF(e.ForeignPct())
			}
			rec.EngineSeries = engineSeriesRecords(r)
			for _, iv := range r.Intervals {
				ir := IntervalRecord{Sec: iv.Sec, Time: secondEnd(r.Started, iv.Sec), Seconds: iv.Seconds, Events: iv.Events,
					Statements: iv.Statements, Rows: iv.Rows, Errors: iv.Errors, P95Ms: latencyOf(iv.P95), MaxMs: latencyOf(iv.Max)}
				if iv.Load != nil && iv.Load.CPUSpeed > 0 {
					ir.CPUSpeed = measuredF(iv.Load.CPUSpeed)
				}
				rec.Intervals = append(rec.Intervals, ir)
			}
			out = append(out, rec)
		}
	}
	return out
}

// WriteJSON writes the experiment (with its spec) and every result with its
// 1-second series as one JSON document.
func WriteJSON(w io.Writer, d *Data) error {
	doc := struct {
		Experiment int64                      `json:"experiment"`
		Name       string                     `json:"name"`
		Base       string                     `json:"base"`
		Preset     string                     `json:"preset"`
		Created    string                     `json:"created"`
		Targets    []string                   `json:"targets"`
		Spec       string                     `json:"spec"`
		Manifests  map[string]json.RawMessage `json:"manifests"`
		Results    []Record                   `json:"results"`
	}{Experiment: d.Experiment.ID, Name: d.Experiment.Name, Base: d.Experiment.Base, Preset: d.Experiment.Preset,
		Created: d.Experiment.Created.UTC().Format(time.RFC3339), Targets: d.Experiment.Targets, Spec: d.Experiment.Spec,
		Manifests: map[string]json.RawMessage{}, Results: Records(d)}
	for _, r := range d.Runs {
		m := json.RawMessage(r.Manifest)
		if !json.Valid(m) {
			m, _ = json.Marshal(r.Manifest)
		}
		doc.Manifests[strconv.FormatInt(r.ID, 10)] = m
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// WriteCSV writes one line per result, with a header line; facts and
// intervals are left out (see WriteJSON).
func WriteCSV(w io.Writer, d *Data) error {
	cw := csv.NewWriter(w)
	header := []string{"experiment", "run", "target", "engine", "version", "repeat", "run_status", "seq", "test", "family",
		"group", "role", "threads", "warm", "action", "status", "metric", "started", "seconds", "events", "statements",
		"rows", "errors", "qps", "tps", "throughput", "target_rate", "lat_mean_ms", "lat_p50_ms", "lat_p95_ms",
		"lat_p99_ms", "lat_p999_ms", "lat_max_ms", "eff_seconds", "server_cpu_s", "client_cpu_s", "server_read_bytes",
		"server_write_bytes", "server_read_calls", "server_write_calls", "server_context_switches",
		"client_context_switches", "server_peak_rss_bytes", "device", "device_reads", "device_writes",
		"device_read_bytes", "device_write_bytes", "steal_pct", "foreign_cpu_pct", "db_bytes", "sweep_setting", "sweep_value", "stalled"}
	if err := cw.Write(header); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	pf := func(p *float64) string {
		if p == nil {
			return ""
		}
		return f(*p)
	}
	pi := func(p *int64) string {
		if p == nil {
			return ""
		}
		return i(*p)
	}
	for _, r := range Records(d) {
		line := []string{i(r.Experiment), i(r.Run), r.Target, r.Engine, r.Version, strconv.Itoa(r.Repeat), r.RunStatus,
			strconv.Itoa(r.Seq), r.Test, r.Family, r.Group, r.Role, strconv.Itoa(r.Threads), strconv.FormatBool(r.Warm),
			strconv.FormatBool(r.Action), r.Status, r.Metric, r.Started, f(r.Seconds), i(r.Events), i(r.Statements),
			i(r.Rows), i(r.Errors), f(r.QPS), f(r.TPS), f(r.Throughput), f(r.TargetRate), pf(r.LatMeanMs), pf(r.LatP50Ms),
			pf(r.LatP95Ms), pf(r.LatP99Ms), pf(r.LatP999Ms), pf(r.LatMaxMs), pf(r.EffSeconds), pf(r.ServerCPUS),
			pf(r.ClientCPUS), pi(r.ServerReadB), pi(r.ServerWriteB), pi(r.ServerReads), pi(r.ServerWrites),
			pi(r.ServerCS), pi(r.ClientCS), pi(r.ServerRSSB), r.Device, pi(r.DevReads), pi(r.DevWrites),
			pi(r.DevReadB), pi(r.DevWriteB), pf(r.StealPct), pf(r.ForeignPct), pi(r.DBBytes), r.SweepSetting, r.SweepValue,
			strconv.FormatBool(r.Stalled)}
		if err := cw.Write(line); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteSeriesCSV writes every stored 1-second interval, one line each, with
// the result it belongs to (`benchlab report --format csv --series`):
// second (negative during the warm-up), its length, counts, rates and
// latency in ms.
func WriteSeriesCSV(w io.Writer, d *Data) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"experiment", "run", "target", "repeat", "seq", "test", "role", "threads", "sec", "time",
		"seconds", "events", "statements", "rows", "errors", "qps", "tps", "p95_ms", "max_ms", "cpu_speed"}); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	pf := func(p *float64) string {
		if p == nil {
			return ""
		}
		return f(*p)
	}
	for _, r := range Records(d) {
		for _, iv := range r.Intervals {
			qps, tps := 0.0, 0.0
			if iv.Seconds > 0 {
				qps, tps = float64(iv.Statements)/iv.Seconds, float64(iv.Events)/iv.Seconds
			}
			if err := cw.Write([]string{i(r.Experiment), i(r.Run), r.Target, strconv.Itoa(r.Repeat), strconv.Itoa(r.Seq),
				r.Test, r.Role, strconv.Itoa(r.Threads), strconv.Itoa(iv.Sec), iv.Time, f(iv.Seconds), i(iv.Events),
				i(iv.Statements), i(iv.Rows), i(iv.Errors), f(qps), f(tps), pf(iv.P95Ms), pf(iv.MaxMs), pf(iv.CPUSpeed)}); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteEngineSeriesCSV writes every stored point of the engine's counters
// and gauges per second, one line each, with the result it belongs to
// (`benchlab report --format csv --engine-series`): the series' name, kind
// (counter or gauge) and unit ("/s" for a counter's rate), the second and
// its wall-clock end, and the value.
func WriteEngineSeriesCSV(w io.Writer, d *Data) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"experiment", "run", "target", "repeat", "seq", "test", "role", "threads", "name", "kind",
		"unit", "sec", "time", "value"}); err != nil {
		return err
	}
	for _, r := range Records(d) {
		for _, x := range r.EngineSeries {
			for _, p := range x.Points {
				if err := cw.Write([]string{strconv.FormatInt(r.Experiment, 10), strconv.FormatInt(r.Run, 10), r.Target,
					strconv.Itoa(r.Repeat), strconv.Itoa(r.Seq), r.Test, r.Role, strconv.Itoa(r.Threads), x.Name, x.Kind,
					x.Unit, strconv.Itoa(p.Sec), p.Time, strconv.FormatFloat(p.Value, 'g', -1, 64)}); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
