package importer

import (
	"errors"
	"strconv"
	"time"

	"benchlab/internal/fio"
	"benchlab/internal/store"
	"benchlab/internal/workload/command"
)

// FIO is fio's tool name as the store keeps it.
const FIO = "fio"

// parseFIO reads fio's JSON output (--output-format=json, with or without
// --status-interval): the final document's jobs summed are the headline
// result, in IOPS as the command suite's fio steps count them (reads plus
// writes, fio's own rates summed; completion latency, the largest
// percentile of any job and direction), and each job's own figures are a
// result of a secondary role named after the job when there are several.
// The status documents before the final one give the series. The thread
// count is --threads, else the number of jobs fio reported.
func parseFIO(file string, data []byte, test string, threads int) (*Output, error) {
	reports, err := fio.Parse(data)
	if errors.Is(err, fio.ErrNoJSON) {
		return nil, errorf(file, 0, "no fio JSON document; want the output of fio --output-format=json")
	}
	if err != nil {
		return nil, errorf(file, 0, "%v; want the output of fio --output-format=json", err)
	}
	final := reports[len(reports)-1]
	if len(final.Jobs) == 0 {
		return nil, errorf(file, 0, "fio's last JSON document lists no job: the run was cut short or the file truncated")
	}
	if threads <= 0 {
		threads = len(final.Jobs)
	}
	out := &Output{Tool: FIO, Version: final.Version}
	if final.TimestampMS > 0 {
		out.Date = time.UnixMilli(final.TimestampMS).UTC()
	}
	sum, err := fioResult(file, test, threads, final.Totals())
	if err != nil {
		return nil, err
	}
	sum.Intervals = fioSeries(reports)
	out.Results = append(out.Results, sum)
	if len(final.Jobs) > 1 {
		count := map[string]int{}
		for _, j := range final.Jobs {
			count[j.Name]++
		}
		for i, j := range final.Jobs {
			r, err := fioResult(file, test, threads, fio.Report{Jobs: []fio.Job{j}}.Totals())
			if err != nil {
				return nil, err
			}
			name := j.Name
			if name == "" || count[name] > 1 {
				name = j.Name + "#" + strconv.Itoa(i+1) // numjobs clones share their name
			}
			r.Role = store.RoleInfo{Name: name, Secondary: true}
			out.Results = append(out.Results, r)
		}
	}
	return out, nil
}

// fioResult is one set of fio figures (all jobs summed, or one job) as a
// result.
func fioResult(file, test string, threads int, t fio.Totals) (store.Result, error) {
	switch {
	case t.Errors > 0:
		return store.Result{}, errorf(file, 0, "%d fio jobs ended with an error: the run has no result", t.Errors)
	case t.IOs() == 0:
		return store.Result{}, errorf(file, 0, "fio completed no read or write: the run has no result")
	}
	r := store.Result{Test: test, Family: test, Threads: threads, Metric: command.IOPS.Name, Status: store.StatusOK,
		Events: t.IOs(), Statements: t.IOs(), Seconds: float64(t.RuntimeMS) / 1000,
		Latency: store.Latency{Mean: t.ClatMean, P50: t.ClatP50, P95: t.ClatP95, P99: t.ClatP99, P999: t.ClatP999, Max: t.Max},
		Facts: map[string]float64{"fio_read_iops": t.ReadIOPS, "fio_write_iops": t.WriteIOPS,
			"fio_read_bytes_per_s": t.ReadBW, "fio_write_bytes_per_s": t.WriteBW, "fio_runtime_s": float64(t.RuntimeMS) / 1000,
			store.FactToolOpsPerSec: t.IOPS()}}
	if iops := t.IOPS(); iops > 0 {
		r.Seconds = float64(r.Events) / iops // fio's own rate is the headline
	}
	return r, nil
}

// fioSeries is the per-interval IOs of fio's status documents (fio.Series).
func fioSeries(reports []fio.Report) []store.Interval {
	var ivs []store.Interval
	for i, iv := range fio.Series(reports) {
		ivs = append(ivs, store.Interval{Sec: i, Seconds: iv.Seconds, Events: iv.IOs, Statements: iv.IOs})
	}
	if len(ivs) < 2 {
		return nil // the final document alone is no series
	}
	return ivs
}
