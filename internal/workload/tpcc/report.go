package tpcc

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"benchlab/internal/report/section"
	"benchlab/internal/store"
	"benchlab/internal/workload/tpcc/tpccdoc"
)

func init() { section.Register(Suite{}.Name(), Suite{}) }

// ReportSections adds the TPC-C table to the generic report: what a reader
// needs to trust tpmC. Per target and terminal count: the isolation level
// and protocol (prepared statements or text) the terminals' sessions used,
// the committed mix against the standard 45/43/4/4/4 (a share that departs
// beyond chance is marked, with a note), the retries conflicts needed per
// 100 committed transactions, and the transactions that failed even so
// (counted in no throughput).
func (Suite) ReportSections(in *section.Input) section.Sections {
	t, notes := mixTable(in)
	if t == nil {
		return section.Sections{}
	}
	return section.Sections{Tables: []section.Table{*t}, Notes: notes}
}

// mixTable builds the TPC-C table; nil when no result has TPC-C's facts.
func mixTable(in *section.Input) (*section.Table, []string) {
	t := &section.Table{Title: "TPC-C: isolation, protocol and committed mix",
		Legend: "isolation and protocol as the terminals' sessions reported them; committed mix in % of the committed " +
			"transactions (median over repeats; - marks a share that departs from the standard 45/43/4/4/4 beyond chance); " +
			"retries per 100 committed transactions (tpcc.max_tries); failed transactions (counted in neither tpmC nor TPS)",
		Columns: append(append([]string{"target", "isolation", "protocol"}, pct(Kinds)...), "retries/100", "failed")}
	var notes []string
	scaled := map[float64][]string{}
	for _, target := range in.Targets {
		byThreads := map[int][]store.Result{}
		for _, run := range in.Runs {
			if run.Target != target {
				continue
			}
			for _, r := range in.Results[run.ID] {
				if _, ok := r.Facts[FactIsolation]; ok && r.Test == "tpcc" && r.Status == store.StatusOK {
					byThreads[r.Threads] = append(byThreads[r.Threads], r)
				}
			}
		}
		threads := make([]int, 0, len(byThreads))
		for n := range byThreads {
			threads = append(threads, n)
		}
		slices.Sort(threads)
		for _, n := range threads {
			rs := byThreads[n]
			if sf := rs[0].Facts[tpccdoc.FactScaleFactor]; sf > 1 && !slices.Contains(scaled[sf], target) {
				scaled[sf] = append(scaled[sf], target)
			}
			t.Rows = append(t.Rows, mixRow(target, n, rs))
			for _, r := range rs {
				if _, departs := CommittedMix(r.Facts); departs != "" {
					notes = append(notes, fmt.Sprintf("TPC-C on %s at %d terminals: the committed mix departs from the "+
						"standard one (%s), so its tpmC is not comparable; %d transactions failed after tpcc.max_tries",
						target, n, departs, r.Errors))
					break
				}
			}
		}
	}
	if len(t.Rows) == 0 {
		return nil, nil
	}
	return t, append(scaleNotes(scaled), notes...)
}

// scaleNotes says, per scale factor other than 1, which targets ran at it
// and that their tpmC is no TPC-C result.
func scaleNotes(scaled map[float64][]string) []string {
	factors := make([]float64, 0, len(scaled))
	for f := range scaled {
		factors = append(factors, f)
	}
	slices.Sort(factors)
	var notes []string
	for _, f := range factors {
		notes = append(notes, fmt.Sprintf("TPC-C on %s ran at scale factor %g (tpcc.scalefactor): %s; compare its tpmC only "+
			"with runs at the same scale factor", strings.Join(scaled[f], ", "), f, NotCompliant))
	}
	return notes
}

func pct(kinds []string) []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = k + " %"
	}
	return out
}

// mixRow is one target's row at n terminals over its repeats rs.
func mixRow(target string, n int, rs []store.Result) section.Row {
	r0 := rs[0]
	protocol := "prepared"
	if r0.Facts[FactPrepared] == 0 {
		protocol = "text"
	}
	isolation := Isolation(r0.Facts[FactIsolation]).String()
	if r0.Facts[tpccdoc.FactDocument] == 1 {
		isolation, protocol = docColumns(r0.Facts)
	}
	if sf := r0.Facts[tpccdoc.FactScaleFactor]; sf > 1 {
		protocol += fmt.Sprintf(", scale factor %g", sf)
	}
	row := section.Row{Group: Group, Label: fmt.Sprintf("tpcc, %d terminals", n), Cells: []section.Cell{section.TextCell(target),
		section.TextCell(isolation), section.TextCell(protocol)}}
	for i, kind := range Kinds {
		c := section.NumberCell(section.Median(rs, func(r store.Result) float64 {
			shares, _ := CommittedMix(r.Facts)
			if shares == nil {
				return math.NaN()
			}
			return shares[i]
		}))
		for _, r := range rs {
			if _, departs := CommittedMix(r.Facts); departsOn(departs, kind) {
				c.Tone = section.ToneBad
			}
		}
		row.Cells = append(row.Cells, c)
	}
	return section.Row{Group: row.Group, Label: row.Label, Cells: append(row.Cells,
		section.NumberCell(section.Median(rs, func(r store.Result) float64 {
			if r.Events == 0 {
				return math.NaN()
			}
			return 100 * r.Facts[store.FactRetries] / float64(r.Events)
		})),
		section.NumberCell(section.Median(rs, func(r store.Result) float64 { return float64(r.Errors) })))}
}

// departsOn says whether CommittedMix's description names kind.
func departsOn(departs, kind string) bool {
	for _, part := range strings.Split(departs, ", ") {
		if strings.HasPrefix(part, kind+" ") {
			return true
		}
	}
	return false
}

// docColumns are the isolation and protocol columns of a document target:
// transactions or single-document writes, and py-tpcc's options.
func docColumns(f map[string]float64) (isolation, protocol string) {
	isolation = "none (each write alone)"
	if f[tpccdoc.FactTransactions] == 1 {
		isolation = "multi-document transactions"
	}
	protocol = "MongoDB, normalized"
	if f[tpccdoc.FactDenormalized] == 1 {
		protocol = "MongoDB, lines in orders"
	}
	if f[tpccdoc.FactFindAndModify] == 1 {
		protocol += ", findAndModify"
	}
	return isolation, protocol
}
