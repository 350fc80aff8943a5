package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"benchlab/internal/store"
)

// measuredResults calls f for every measured (not action, not warm-up)
// result of every experiment in ds, in order.
func measuredResults(ds []*Data, f func(d *Data, run store.Run, r store.Result) error) error {
	for _, d := range ds {
		for _, run := range d.Runs {
			for _, r := range d.Results[run.ID] {
				if r.Action || r.Warm {
					continue
				}
				if err := f(d, run, r); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// hdrTag names a result in an HDR log: experiment, target, test, threads,
// repeat and role, without the commas and spaces the format forbids.
func hdrTag(d *Data, run store.Run, r store.Result) string {
	tag := fmt.Sprintf("e%d/%s/%s@%d/r%d", d.Experiment.ID, run.Target, r.Test, r.Threads, run.Repeat)
	if r.Role.Name != "" {
		tag += "/" + r.Role.Name
	}
	return strings.NewReplacer(",", "_", " ", "_", "\n", "_", "\r", "_").Replace(tag)
}

// WriteHDRLog writes every measured result's latency histogram (in
// nanoseconds) as one interval of an HdrHistogram log (format 1.3, as
// HdrHistogram's HistogramLogWriter writes it), tagged with its experiment,
// target, test, threads and repeat, timed by the result's wall clock.
// Results stored without a histogram are left out.
func WriteHDRLog(w io.Writer, ds []*Data) error {
	lw := hdr.NewHistogramLogWriter(w)
	if err := lw.OutputLogFormatVersion(); err != nil {
		return err
	}
	if err := lw.OutputComment("benchlab latency histograms, values in nanoseconds; max column in milliseconds"); err != nil {
		return err
	}
	var first time.Time
	_ = measuredResults(ds, func(_ *Data, _ store.Run, r store.Result) error {
		if len(r.Histogram) > 0 && (first.IsZero() || r.Started.Before(first)) {
			first = r.Started
		}
		return nil
	})
	if !first.IsZero() {
		if err := lw.OutputStartTime(first.UnixMilli()); err != nil {
			return err
		}
	}
	if err := lw.OutputLegend(); err != nil {
		return err
	}
	return measuredResults(ds, func(d *Data, run store.Run, r store.Result) error {
		if len(r.Histogram) == 0 {
			return nil
		}
		h, err := hdr.Decode(r.Histogram)
		if err != nil {
			return fmt.Errorf("run %d %s: stored histogram: %w", run.ID, r.Test, err)
		}
		h.SetTag(hdrTag(d, run, r))
		h.SetStartTimeMs(r.Started.UnixMilli())
		h.SetEndTimeMs(r.Started.Add(time.Duration(r.Seconds * float64(time.Second))).UnixMilli())
		return lw.OutputIntervalHistogram(h)
	})
}

// WriteHDRPercentiles writes every measured result's latency percentile
// distribution in HdrHistogram's text form (values in milliseconds), each
// after a comment line naming the result.
func WriteHDRPercentiles(w io.Writer, ds []*Data) error {
	return measuredResults(ds, func(d *Data, run store.Run, r store.Result) error {
		if len(r.Histogram) == 0 {
			return nil
		}
		h, err := hdr.Decode(r.Histogram)
		if err != nil {
			return fmt.Errorf("run %d %s: stored histogram: %w", run.ID, r.Test, err)
		}
		if _, err := fmt.Fprintf(w, "# %s (latency in ms)\n", hdrTag(d, run, r)); err != nil {
			return err
		}
		if _, err := h.PercentilesPrint(w, 5, 1e6); err != nil {
			return err
		}
		_, err = fmt.Fprintln(w)
		return err
	})
}

// WritePrometheus writes the summary of every measured result as
// Prometheus text exposition (version 0.0.4), for a textfile collector or
// a push: throughput, latency quantiles in seconds, events and errors,
// labelled by experiment, target, engine, test, threads, repeat and role.
func WritePrometheus(w io.Writer, ds []*Data) error {
	type sample struct {
		labels string
		value  float64
	}
	families := []struct {
		name, help, typ string
		get             func(r store.Result) []sample
	}{
		{"benchlab_throughput", "Headline throughput of a result, in its metric per second (qps, tpmC, rows/s).", "gauge",
			func(r store.Result) []sample { return []sample{{"", r.Throughput()}} }},
		{"benchlab_qps", "Statements per second.", "gauge", func(r store.Result) []sample { return []sample{{"", r.QPS()}} }},
		{"benchlab_latency_seconds", "Latency quantiles of a result's operations.", "gauge", func(r store.Result) []sample {
			l := r.Latency
			var out []sample
			// A quantile not measured (0: one an imported tool did not
			// print) has no sample.
			for _, q := range []struct {
				label string
				d     time.Duration
			}{{`quantile="0.5"`, l.P50}, {`quantile="0.95"`, l.P95}, {`quantile="0.99"`, l.P99},
				{`quantile="0.999"`, l.P999}, {`quantile="1"`, l.Max}} {
				if q.d > 0 {
					out = append(out, sample{q.label, q.d.Seconds()})
				}
			}
			return out
		}},
		{"benchlab_events", "Operations (events) done in the measured interval.", "gauge",
			func(r store.Result) []sample { return []sample{{"", float64(r.Events)}} }},
		{"benchlab_errors", "Failed operations in the measured interval.", "gauge",
			func(r store.Result) []sample { return []sample{{"", float64(r.Errors)}} }},
		{"benchlab_duration_seconds", "Length of the measured interval.", "gauge",
			func(r store.Result) []sample { return []sample{{"", r.Seconds}} }},
	}
	for _, fam := range families {
		var lines []string
		_ = measuredResults(ds, func(d *Data, run store.Run, r store.Result) error {
			base := promLabels([][2]string{{"experiment", strconv.FormatInt(d.Experiment.ID, 10)},
				{"name", d.Experiment.Name}, {"target", run.Target}, {"engine", run.Engine}, {"test", r.Test},
				{"threads", strconv.Itoa(r.Threads)}, {"repeat", strconv.Itoa(run.Repeat)}, {"role", r.Role.Name}})
			for _, s := range fam.get(r) {
				l := base
				if s.labels != "" {
					l += "," + s.labels
				}
				lines = append(lines, fmt.Sprintf("%s{%s} %s", fam.name, l, strconv.FormatFloat(s.value, 'g', -1, 64)))
			}
			return nil
		})
		if len(lines) == 0 {
			continue
		}
		if _, err := fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n%s\n", fam.name, fam.help, fam.name, fam.typ,
			strings.Join(lines, "\n")); err != nil {
			return err
		}
	}
	return nil
}

// promLabels renders label pairs with Prometheus text escaping.
func promLabels(kv [][2]string) string {
	esc := strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
	parts := make([]string, len(kv))
	for i, p := range kv {
		parts[i] = fmt.Sprintf(`%s="%s"`, p[0], esc.Replace(p[1]))
	}
	return strings.Join(parts, ",")
}
