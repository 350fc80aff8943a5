// Package fio reads fio's JSON output (--output-format=json): the
// operations, rates, bandwidth and completion latency of each job, summed
// over jobs and directions. With --status-interval fio writes one complete
// JSON document per interval before its final one; Parse reads them all, so
// a caller can turn the cumulative counts of the status documents into a
// per-second series. It knows fio's format only, not who runs fio.
package fio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// Report is one JSON document fio wrote: a status document
// (--status-interval) or the final one.
type Report struct {
	Version     string `json:"fio version"`
	TimestampMS int64  `json:"timestamp_ms"`
	Jobs        []Job  `json:"jobs"`
}

// Job is one job's figures (one per numjobs clone, unless group_reporting
// merges them).
type Job struct {
	Name  string `json:"jobname"`
	Error int    `json:"error"`
	// JobRuntimeMS is how long the job has run, in milliseconds; with
	// group_reporting it is the sum over the jobs merged (numjobs=4 over
	// 3 s reads 12 s), so wall time comes from Dir.RuntimeMS.
	JobRuntimeMS int64 `json:"job_runtime"`
	Read         Dir   `json:"read"`
	Write        Dir   `json:"write"`
}

// Dir is one direction of a job (read or write).
type Dir struct {
	IOBytes  int64   `json:"io_bytes"`
	BWBytes  float64 `json:"bw_bytes"`
	IOPS     float64 `json:"iops"`
	TotalIOs int64   `json:"total_ios"`
	// RuntimeMS is how long the direction ran in wall time, in
	// milliseconds. Unlike the job's job_runtime, group_reporting does not
	// add it up over the jobs it merges.
	RuntimeMS int64 `json:"runtime"`
	// Clat is the completion latency in nanoseconds.
	Clat Lat `json:"clat_ns"`
}

// Lat is a latency distribution in nanoseconds; Percentile maps fio's
// percentile keys ("99.000000") to values.
type Lat struct {
	Min        int64              `json:"min"`
	Max        int64              `json:"max"`
	Mean       float64            `json:"mean"`
	N          int64              `json:"N"`
	Percentile map[string]float64 `json:"percentile"`
}

// At returns the latency at percentile p (50, 99.9, ...), false when fio did
// not report it.
func (l Lat) At(p float64) (time.Duration, bool) {
	v, ok := l.Percentile[strconv.FormatFloat(p, 'f', 6, 64)]
	return time.Duration(v), ok
}

// ErrNoJSON is Parse's error for output holding no JSON document.
var ErrNoJSON = errors.New("fio: no JSON document in the output (was it run with --output-format=json?)")

// Parse reads every JSON document of out in order, skipping text between
// them (fio prints some warnings to stdout). The last is the final report
// when fio ended normally.
func Parse(out []byte) ([]Report, error) {
	var reports []Report
	rest := out
	for {
		i := bytes.IndexByte(rest, '{')
		if i < 0 {
			break
		}
		dec := json.NewDecoder(bytes.NewReader(rest[i:]))
		var r Report
		if err := dec.Decode(&r); err != nil {
			var se *json.SyntaxError
			if errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF) {
				// Not a document (a brace in a warning) or a truncated
				// last one: look further.
				rest = rest[i+1:]
				continue
			}
			return reports, fmt.Errorf("fio: JSON document %d: %w", len(reports)+1, err)
		}
		rest = rest[i+int(dec.InputOffset()):]
		if r.Version == "" && r.Jobs == nil {
			continue // JSON, but not fio's (a brace in a warning)
		}
		reports = append(reports, r)
	}
	if len(reports) == 0 {
		return nil, ErrNoJSON
	}
	return reports, nil
}

// Totals are a report's figures summed over jobs and over reads and
// writes.
type Totals struct {
	// IOs are the completed reads and writes; IOPS their rate as fio
	// computed it per job, summed.
	ReadIOs, WriteIOs   int64
	ReadIOPS, WriteIOPS float64
	// ReadBW and WriteBW are bytes per second.
	ReadBW, WriteBW float64
	// RuntimeMS is the longest job's runtime in wall time: the longest
	// direction's runtime, or job_runtime for a job that did no IO.
	RuntimeMS int64
	// Clat is the completion latency over both directions: the mean
	// weighted by operations, and each percentile and the max the largest
	// of any job's and direction's that did operations (fio reports no
	// merged distribution).
	ClatMean                                 time.Duration
	ClatP50, ClatP95, ClatP99, ClatP999, Max time.Duration
	// Errors counts the jobs that ended with an error.
	Errors int
}

// IOs is reads plus writes.
func (t Totals) IOs() int64 { return t.ReadIOs + t.WriteIOs }

// IOPS is the read plus write rate.
func (t Totals) IOPS() float64 { return t.ReadIOPS + t.WriteIOPS }

// wallMS is how long the job ran in wall time.
func (j Job) wallMS() int64 {
	if ms := max(j.Read.RuntimeMS, j.Write.RuntimeMS); ms > 0 {
		return ms
	}
	return j.JobRuntimeMS
}

// Totals sums the report's jobs.
func (r Report) Totals() Totals {
	var t Totals
	var weighted float64
	for _, j := range r.Jobs {
		if j.Error != 0 {
			t.Errors++
		}
		t.RuntimeMS = max(t.RuntimeMS, j.wallMS())
		t.ReadIOs += j.Read.TotalIOs
		t.WriteIOs += j.Write.TotalIOs
		t.ReadIOPS += j.Read.IOPS
		t.WriteIOPS += j.Write.IOPS
		t.ReadBW += j.Read.BWBytes
		t.WriteBW += j.Write.BWBytes
		for _, d := range []Dir{j.Read, j.Write} {
			if d.TotalIOs == 0 {
				continue
			}
			weighted += d.Clat.Mean * float64(d.TotalIOs)
			for _, p := range []struct {
				at  float64
				dst *time.Duration
			}{{50, &t.ClatP50}, {95, &t.ClatP95}, {99, &t.ClatP99}, {99.9, &t.ClatP999}} {
				if v, ok := d.Clat.At(p.at); ok {
					*p.dst = max(*p.dst, v)
				}
			}
			t.Max = max(t.Max, time.Duration(d.Clat.Max))
		}
	}
	if n := t.IOs(); n > 0 {
		t.ClatMean = time.Duration(weighted / float64(n))
	}
	return t
}

// Interval is one step of a Series: the reads and writes completed over
// Seconds of the jobs' wall time.
type Interval struct {
	Seconds float64
	IOs     int64
}

// Series turns the cumulative counts of fio's status documents
// (--status-interval) and its final one into intervals, by the longest
// job's wall-time runtime. A document in the same millisecond as the one
// before (the final just after the last status) adds its IOs to that
// interval.
func Series(reports []Report) []Interval {
	var ivs []Interval
	var prevIOs, prevMS int64
	for _, rep := range reports {
		t := rep.Totals()
		if t.RuntimeMS <= prevMS {
			if n := len(ivs); n > 0 && t.IOs() > prevIOs {
				ivs[n-1].IOs += t.IOs() - prevIOs
				prevIOs = t.IOs()
			}
			continue
		}
		ivs = append(ivs, Interval{Seconds: float64(t.RuntimeMS-prevMS) / 1000, IOs: t.IOs() - prevIOs})
		prevIOs, prevMS = t.IOs(), t.RuntimeMS
	}
	return ivs
}
