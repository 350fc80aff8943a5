package report

import (
	"slices"
	"strings"

	"benchlab/internal/analysis"
	"benchlab/internal/metric"
	"benchlab/internal/report/section"
)

// otherMetrics lists the metrics other than QPS that rows report, each
// with the tests that report it, in row order: what the legends must name.
func otherMetrics(s samples, keys []cellKey) []metricRows {
	var out []metricRows
	for _, k := range keys {
		for _, byKey := range s {
			for _, r := range byKey[k] {
				m := metric.Of(r.Metric)
				if m.Name == metric.QPS.Name {
					continue
				}
				i := slices.IndexFunc(out, func(x metricRows) bool { return x.m.Name == m.Name })
				if i < 0 {
					out = append(out, metricRows{m: m})
					i = len(out) - 1
				}
				if !slices.Contains(out[i].tests, k.test) {
					out[i].tests = append(out[i].tests, k.test)
				}
			}
		}
	}
	return out
}

// metricRows is a metric and the tests that report it.
type metricRows struct {
	m     metric.Metric
	tests []string
}

// compareLegend adds to a relative table's legend what rows of other
// metrics compare: "; scan compares thousand rows scanned per second".
func compareLegend(s samples, keys []cellKey) string {
	out := ""
	for _, o := range otherMetrics(s, keys) {
		out += "; " + strings.Join(o.tests, ", ") + " compares " + o.m.Legend
	}
	return out
}

// absoluteLegend says what the absolute table's numbers are: queries per
// second, and what rows of other metrics report.
func absoluteLegend(s samples, keys []cellKey) string {
	var parts []string
	for _, o := range otherMetrics(s, keys) {
		parts = append(parts, strings.Join(o.tests, ", ")+": "+o.m.Legend)
	}
	switch {
	case len(parts) == 0:
		return metric.QPS.Legend
	case !hasQPS(s, keys):
		return strings.Join(parts, "; ")
	}
	return metric.QPS.Legend + " (" + strings.Join(parts, "; ") + ")"
}

// absoluteTitle titles the table of absolute values after what its rows'
// metrics measure: "Absolute throughput" (queries, rows, transactions per
// second), "Absolute latency" (connect's milliseconds), "Absolute values"
// for rows of several quantities.
func absoluteTitle(s samples, keys []cellKey) string {
	if q := quantityOf(s, keys); q != "" {
		return "Absolute " + q
	}
	return "Absolute values"
}

// quantityOf is what every row's metric measures ("throughput",
// "latency"), "" when the rows measure several quantities.
func quantityOf(s samples, keys []cellKey) string {
	q := ""
	for _, k := range keys {
		switch mq := s.metricOf(k).QuantityOf(); {
		case q == "":
			q = mq
		case q != mq:
			return ""
		}
	}
	if q == "" {
		q = metric.QPS.QuantityOf()
	}
	return q
}

// relativeTitle titles the relative table after what its rows' metrics
// measure and how the ratio is taken: "Relative throughput: QPS(target) /
// QPS(base)" when queries per second head the rows (other throughputs are
// named in the legend), "Relative latency: ms(target) / ms(base)" for
// connect's rows, "Relative values: target / base" for rows of several
// quantities.
func relativeTitle(s samples, keys []cellKey, base string) string {
	q := quantityOf(s, keys)
	if q == "" {
		return "Relative values: target / " + base
	}
	m := metric.QPS
	if !hasQPS(s, keys) {
		if others := otherMetrics(s, keys); len(others) == 1 {
			m = others[0].m
		} else {
			return "Relative " + q + ": target / " + base
		}
	}
	return "Relative " + q + ": " + m.SymbolOf() + "(target) / " + m.SymbolOf() + "(" + base + ")"
}

// relativeMarks says how the relative table marks its ratios: 1.05 and
// more is better where more is better, worse where less is (latencies),
// and the other way round at 0.95 and less.
func relativeMarks(s samples, keys []cellKey) string {
	return section.RelativeMarks(uniqueTests(keys), lowerIsBetterTests(s, keys))
}

// verdictLegend says on which side of 1 the relative table's significant
// verdicts lie: - slower below 1 and + faster above where more is better,
// the other way round where less is (a latency ratio above 1 is slower).
func verdictLegend(s samples, keys []cellKey) string {
	return section.VerdictLegend(uniqueTests(keys), lowerIsBetterTests(s, keys))
}

// lowerIsBetterTests lists, once each and in order, the tests of keys
// whose metric is lower-is-better (latencies).
func lowerIsBetterTests(s samples, keys []cellKey) []string {
	var out []string
	for _, k := range keys {
		if s.metricOf(k).Direction == analysis.LowerIsBetter && !slices.Contains(out, k.test) {
			out = append(out, k.test)
		}
	}
	return out
}

// uniqueTests lists the tests of keys once each, in order.
func uniqueTests(keys []cellKey) []string {
	var out []string
	for _, k := range keys {
		if !slices.Contains(out, k.test) {
			out = append(out, k.test)
		}
	}
	return out
}

// hasQPS reports whether any row reports queries per second.
func hasQPS(s samples, keys []cellKey) bool {
	for _, k := range keys {
		if s.metricOf(k).Name == metric.QPS.Name {
			return true
		}
	}
	return false
}
