package metric

import "benchlab/internal/store"

// CountsOf are a stored result's counts, the inputs of its metric.
func CountsOf(r store.Result) Counts {
	return Counts{Seconds: r.Seconds, Events: r.Events, Statements: r.Statements, Rows: r.Rows,
		RowsPerOp: r.RowsPerOp, Mean: r.Latency.Mean, Facts: r.Facts}
}

// Stamp sets r's headline, unit and direction from its metric (QPS for a
// name no linked suite declares), so the stored result carries them and
// reads the same in a benchlab that links other suites. Producers stamp a
// result when it is complete, before storing it.
func Stamp(r *store.Result) {
	m := Of(r.Metric)
	r.Headline, r.Unit, r.Direction = m.Value(CountsOf(*r)), m.Unit, m.Direction
}

// Fill stamps each result that carries no headline: one stored before
// results kept theirs, or never stamped by its producer. Readers call it on
// what they read, so old stores read as they always did.
func Fill(rs []store.Result) {
	for i := range rs {
		if rs[i].Unit == "" {
			Stamp(&rs[i])
		}
	}
}
