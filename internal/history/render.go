package history

import (
	"fmt"
	"math"
	"strings"

	"benchlab/internal/analysis"
	"benchlab/internal/report"
)

// shownPoints is how many of a series' newest values its row prints.
const shownPoints = 10

// Report lays the series out as tables: each cell's series with its change
// points, then its newest point against its history, and notes that say
// what a short history cannot conclude.
func Report(selector string, experiments int, series []Series, opt Options) *report.Report {
	r := &report.Report{Title: "benchlab history of " + selector}
	per := "one point per experiment in order of creation"
	if opt.ByVersion {
		per = "one point per engine version, in the order the versions first ran (each named by its newest experiment)"
	}
	r.Header = append(r.Header, fmt.Sprintf("%d cells over %d experiments, %s", len(series), experiments, per))
	cp := opt.Change
	if cp.PValue == 0 {
		cp.PValue = analysis.DefaultChangePValue
	}
	seriesT := report.Table{
		Title: "Series cell by cell (oldest to newest)",
		Legend: fmt.Sprintf("each point is an experiment's geometric mean over its runs (the last %d shown, | before a change "+
			"point); change points: E-Divisive means with Otava's t-test, p < %g", shownPoints, cp.PValue),
		Columns: []string{"points", "first", "newest", "series", "change points"},
	}
	newestT := report.Table{
		Title: "Newest point against its history",
		Legend: "the newest experiment against the points since the last change point before it: with 3 or more, a t-test " +
			"of its mean against theirs with their own spread (what varies between experiments included); with 1 or 2, its runs " +
			"against theirs as compare judges them (the host's noise history where the store has it); ratio with its 95% CI, " +
			"p before correction, verdict after " + string(correction(opt)) + " over the cells; medians and n are of the runs " +
			"(without those that completed no operation; a newest point whose runs all stalled is not judged)",
		Columns: []string{"history", "history median", "newest median", "ratio [95% CI]", "p", "n", "verdict", "evidence"},
	}
	for _, s := range series {
		label := s.Target + ": " + s.Cell.String()
		first, last := s.Points[0], s.Newest()
		seriesT.Rows = append(seriesT.Rows, report.Row{Label: label, Cells: []report.Cell{
			textCell(fmt.Sprint(len(s.Points))), textCell(pointName(first)), textCell(pointName(last)),
			textCell(seriesText(s)), textCell(changeText(s)),
		}})
		h := s.Judged
		if len(s.Points) < 2 {
			cps := fmt.Sprintf("change points need at least %d", max(h.PointsNeeded, 3))
			if h.PointsNeeded == 0 {
				cps = fmt.Sprintf("change points cannot find a %g%% step at the spread its runs show", effect(opt)*100)
			}
			r.Notes = append(r.Notes, fmt.Sprintf("%s: one point (experiment %d); nothing to judge it against: the history needs "+
				"at least 2 points, and %s", label, last.Experiment.ID, cps))
			continue
		}
		r.Notes = append(r.Notes, stallNotes(label, s)...)
		v := h.Newest
		hist := s.Points[h.Regime : len(s.Points)-1]
		if s.NotJudged {
			newestT.Rows = append(newestT.Rows, report.Row{Label: label, Cells: []report.Cell{
				textCell(fmt.Sprintf("%d points from %s", len(hist), pointName(hist[0]))), textCell("n/a"),
				textCell(report.StalledMark), textCell("n/a"), textCell("n/a"), textCell(fmt.Sprintf("0/%d", last.Stalled)),
				textCell("not judged"), textCell(string(v.Evidence)),
			}})
			continue
		}
		newestT.Rows = append(newestT.Rows, report.Row{Label: label, Cells: []report.Cell{
			textCell(fmt.Sprintf("%d points from %s", len(hist), pointName(hist[0]))),
			textCell(report.FormatValue(v.MedianBase)), textCell(report.FormatValue(v.MedianOther)),
			textCell(fmt.Sprintf("%.3f [%s]", v.Ratio, ci(v.RatioLo, v.RatioHi))),
			textCell(fmt.Sprintf("%.2g", v.P)), textCell(fmt.Sprintf("%d/%d", v.NBase, v.NOther)),
			textCell(v.Outcome.String()), textCell(string(v.Evidence)),
		}})
		switch n := len(s.Points); {
		case h.Spread == 0 && n-1-h.Regime < 3:
			r.Notes = append(r.Notes, fmt.Sprintf("%s: %d points, one run each and no noise history for the test: how much "+
				"experiments vary is not known yet; change points need at least 3 points and more as the spread shows, and the newest "+
				"point is judged by its history's spread from 3 points before it (%d more)", label, n, 3-(n-1-h.Regime)))
		case h.PointsNeeded == 0 || n < h.PointsNeeded:
			r.Notes = append(r.Notes, neededNote(label, n, h.PointsNeeded, effect(opt)))
		}
	}
	r.Tables = []report.Table{seriesT}
	if len(newestT.Rows) > 0 {
		r.Tables = append(r.Tables, newestT)
	}
	return r
}

// neededNote says what a series too short for the change-point test can
// and cannot conclude.
func neededNote(label string, have, need int, eff float64) string {
	switch {
	case need == 0:
		return fmt.Sprintf("%s: %d points; the points vary too much for change points to find a %g%% step in any history "+
			"shorter than 1,000 points: the newest point's verdict is the test that can", label, have, eff*100)
	case need == 3:
		return fmt.Sprintf("%s: %d points; change points need at least 3 (%d more), and more as the points' spread shows; "+
			"the newest point's verdict above rests on the runs", label, have, need-have)
	}
	return fmt.Sprintf("%s: %d points; at the spread the history shows, change points need at least %d points to find a %g%% step "+
		"(%d more); until then the newest point's verdict above is the test that can", label, have, need, eff*100, need-have)
}

func effect(opt Options) float64 {
	if opt.Effect > 0 {
		return opt.Effect
	}
	return analysis.DefaultGateThreshold
}

func correction(opt Options) analysis.Correction {
	if opt.Verdict.Correction == "" {
		return analysis.BH
	}
	return opt.Verdict.Correction
}

// pointName names a point: its experiment's ID, date and versions.
func pointName(p Point) string {
	return fmt.Sprintf("#%d %s (%s)", p.Experiment.ID, p.Experiment.Created.UTC().Format("2006-01-02"), strings.Join(p.Versions, ", "))
}

// seriesText is the newest shownPoints values, a | before each change
// point.
func seriesText(s Series) string {
	h := s.Judged
	at := map[int]bool{}
	for _, c := range h.ChangePoints {
		at[c.Index] = true
	}
	var parts []string
	start := max(0, len(h.Values)-shownPoints)
	if start > 0 {
		parts = append(parts, "...")
	}
	for i := start; i < len(h.Values); i++ {
		if at[i] {
			parts = append(parts, "|")
		}
		if s.Points[i].AllStalled() {
			parts = append(parts, report.StalledMark)
			continue
		}
		parts = append(parts, report.FormatValue(h.Values[i]))
	}
	return strings.Join(parts, " ")
}

// stallNotes name the points of a series with runs that completed no
// operation: left out of the point's value, its change points and its
// verdict; a point whose runs all stalled is shown as stalled.
func stallNotes(label string, s Series) []string {
	var out []string
	for _, p := range s.Points {
		switch {
		case p.AllStalled():
			out = append(out, fmt.Sprintf("%s: point %s: every run (%d) completed no operation (stalled); it has no value "+
				"and makes no change point", label, pointName(p), p.Stalled))
		case p.Stalled > 0:
			out = append(out, fmt.Sprintf("%s: point %s: %d of %d runs completed no operation (stalled) and are left out of "+
				"its value and verdict", label, pointName(p), p.Stalled, p.Stalled+len(p.Runs)))
		}
	}
	return out
}

// changeText lists the change points: where, by how much, how sure.
func changeText(s Series) string {
	var out []string
	for _, c := range s.Judged.ChangePoints {
		out = append(out, fmt.Sprintf("at %s: %+.1f%% (p=%.2g)", pointName(s.Points[c.Index]), c.ForwardChangePercent, c.P))
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, "; ")
}

func ci(lo, hi float64) string {
	f := func(x float64) string {
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return "?"
		}
		return fmt.Sprintf("%.3f", x)
	}
	return f(lo) + "-" + f(hi)
}

// textCell is a table cell holding s.
func textCell(s string) report.Cell { return report.Cell{Kind: report.Text, Text: s} }
