package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/spf13/cobra"

	"benchlab/internal/analysis"
	"benchlab/internal/report"
)

// errRegression makes compare exit with code 3.
var errRegression = errors.New("significant regression found")

// compareFlags are the flags of `benchlab compare`.
type compareFlags struct {
	store, format, color        string
	correction, gateCorrection  string
	id                          int64
	alpha, minEffect, threshold float64
	sequence, gate              bool
	// baseSel and vs compare selections of stored runs across
	// experiments (compareacross.go) instead of one experiment's targets.
	baseSel string
	vs      []string
}

func newCompareCmd(env Env) *cobra.Command {
	f := &compareFlags{}
	cmd := &cobra.Command{
		Use:   "compare [flags]",
		Short: "judge targets against the base with significance tests; gate on regressions",
		Long: "Judges every target against the base, cell by cell: a t-test on log throughput (with the host's noise history\n" +
			"when the store has one, otherwise Welch's over the repeats, 3 or more a side), or a Mann-Whitney test over the\n" +
			"repeats when no t-test is possible or an outlier decides its call.",
		Example: "  benchlab compare --sequence\n  benchlab compare --fail-on-regression --threshold 0.05\n" +
			"  benchlab compare --format json > verdicts.json\n" +
			"  benchlab compare --base experiment:3 --vs experiment:5     # across experiments\n" +
			"  benchlab compare --base 'experiment:nightly target:pg16 since:2026-11-01' --vs experiment:12",
		Args: noArgs,
		RunE: body(func(*cobra.Command, []string) error { return runCompare(env, f) }),
	}
	fs := cmd.Flags()
	addStoreFlag(fs, &f.store)
	fs.Int64Var(&f.id, "experiment", 0, "experiment ID (default: the most recent)")
	fs.Float64Var(&f.alpha, "alpha", analysis.DefaultAlpha, "significance level of each cell's test")
	fs.Float64Var(&f.minEffect, "min-effect", analysis.DefaultMinEffect, "smallest relative change that counts (0.02 = 2%)")
	fs.BoolVar(&f.sequence, "sequence", false, "treat the targets as a release sequence and locate where each metric changed")
	fs.BoolVar(&f.gate, "fail-on-regression", false, "exit with code 3 when a significant regression beyond --threshold is found")
	fs.Float64Var(&f.threshold, "threshold", analysis.DefaultGateThreshold, "with --fail-on-regression: the smallest slowdown that fails (0.05 = 5%)")
	fs.StringVar(&f.correction, "correction", string(analysis.BH), "correction of the verdicts over all cells: bh (Benjamini-Hochberg, false discovery rate), holm (family-wise) or none")
	fs.StringVar(&f.gateCorrection, "gate-correction", string(analysis.Holm), "with --fail-on-regression: the gate's correction, holm (family-wise, default), bh or none")
	fs.StringVar(&f.baseSel, "base", "", "compare across experiments: the runs of the base, a selector (experiment:12, "+
		"experiment:NAME, target:, engine:, version:, host:, suite:, test:, threads:, since:, until:; terms separated by spaces or commas)")
	fs.StringArrayVar(&f.vs, "vs", nil, "with --base: the runs compared with it, a selector; repeat for several")
	fs.StringVar(&f.format, "format", "text", "text, markdown, html (one self-contained page with the charts) or json (every verdict)")
	addColorFlag(fs, &f.color)
	return cmd
}

func runCompare(env Env, f *compareFlags) error {
	alpha, minEffect, threshold, format, gate := &f.alpha, &f.minEffect, &f.threshold, &f.format, &f.gate
	*format = strings.ToLower(*format)
	color, err := useColor(env, env.Stdout, f.color)
	if err != nil {
		return err
	}
	for _, c := range []struct {
		name string
		v    float64
	}{{"alpha", *alpha}, {"min-effect", *minEffect}, {"threshold", *threshold}} {
		if !(c.v > 0 && c.v < 1) {
			return usagef("flag --%s: %v is not allowed; want a number between 0 and 1", c.name, c.v)
		}
	}
	corr, err := analysis.ParseCorrection(strings.ToLower(f.correction), analysis.BH)
	if err != nil {
		return usagef("flag --correction: %v", err)
	}
	gcorr, err := analysis.ParseCorrection(strings.ToLower(f.gateCorrection), analysis.Holm)
	if err != nil {
		return usagef("flag --gate-correction: %v", err)
	}
	gopt := analysis.GateOptions{Alpha: *alpha, MinEffect: *minEffect, Threshold: *threshold, Correction: gcorr}
	if *format != "text" && *format != "markdown" && *format != "html" && *format != "json" {
		return usagef("flag --format: %q is not allowed; want text, markdown, html or json", *format)
	}
	if *format == "html" && *gate {
		return usagef("flag --format: html is a page for reading; the gate (--fail-on-regression) prints text")
	}
	if f.baseSel != "" || len(f.vs) > 0 {
		return runCompareAcross(env, f, report.VerdictOptions{Alpha: *alpha, MinEffect: *minEffect, Correction: corr}, gopt, color)
	}
	d, err := loadData(env, storePath(env, f.store), f.id)
	if err != nil {
		return err
	}
	vopt := report.VerdictOptions{Alpha: *alpha, MinEffect: *minEffect, Correction: corr}
	cmps, unjudged := report.Compare(d, vopt), report.NotJudged(d)
	if *gate {
		if err := gateCheck("flag --fail-on-regression", cmps, unjudged, gopt); err != nil {
			return err
		}
	}
	r := report.BuildWith(d, report.Options{Verdict: vopt, Sequence: f.sequence})
	var keep []report.Table // the relative, sweep and sequence tables; `report` shows the rest
	for _, t := range r.Tables {
		if t.Relative || t.Sweep || strings.HasPrefix(t.Title, "Changes across") {
			keep = append(keep, t)
		}
	}
	verdicts := report.ComparisonTableWith(cmps, d.Experiment.Base, vopt)
	verdicts.Rows = append(verdicts.Rows, report.NotJudgedRows(unjudged)...)
	r.Tables = append(keep, verdicts)
	if *format == "json" {
		return writeCompareJSON(env.Stdout, d, cmps, unjudged, f, vopt, gopt)
	}
	switch *format {
	case "markdown":
		err = report.WriteMarkdown(env.Stdout, r)
	case "html":
		// The page is the whole output: the verdict counts and the gate's
		// lines below would not be valid HTML after it.
		return report.WriteHTML(env.Stdout, d, r)
	default:
		err = report.WriteText(env.Stdout, r, report.TextOptions{Color: color})
	}
	if err != nil {
		return err
	}
	verdictLines(env.Stdout, cmps, unjudged, vopt)
	if !*gate {
		return nil
	}
	return gateReport(env.Stdout, cmps, unjudged, gopt)
}

// jsonNum is a float that encodes NaN and infinities as null.
type jsonNum float64

func (n jsonNum) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(n)) || math.IsInf(float64(n), 0) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(n))
}

// writeCompareJSON writes compare's verdicts as one JSON document; with the
// gate it holds the regressions too and the exit code still says the
// outcome.
func writeCompareJSON(w io.Writer, d *report.Data, cmps []report.Comparison, unjudged []report.Unjudged, f *compareFlags, vopt report.VerdictOptions,
	gopt analysis.GateOptions) error {
	type verdict struct {
		Target   string   `json:"target"`
		Test     string   `json:"test"`
		Threads  int      `json:"threads"`
		Outcome  string   `json:"outcome"`
		Ratio    jsonNum  `json:"ratio"`
		RatioLo  jsonNum  `json:"ratio_lo"`
		RatioHi  jsonNum  `json:"ratio_hi"`
		P        jsonNum  `json:"p"`
		PAdj     jsonNum  `json:"p_adjusted"`
		Evidence string   `json:"evidence"`
		Why      string   `json:"unknown_why,omitempty"`
		NBase    int      `json:"n_base"`
		NOther   int      `json:"n_other"`
		Base     jsonNum  `json:"median_base"`
		Other    jsonNum  `json:"median_other"`
		Warnings []string `json:"warnings,omitempty"`
	}
	type notJudged struct {
		Target  string `json:"target"`
		Test    string `json:"test"`
		Threads int    `json:"threads"`
		Why     string `json:"why"`
	}
	doc := struct {
		Experiment  int64          `json:"experiment"`
		Name        string         `json:"name"`
		Base        string         `json:"base"`
		Alpha       float64        `json:"alpha"`
		MinEffect   float64        `json:"min_effect"`
		Correction  string         `json:"correction"`
		Power       powerJSON      `json:"power"`
		Counts      map[string]int `json:"counts"`
		Verdicts    []verdict      `json:"verdicts"`
		Gate        bool           `json:"gate"`
		Threshold   float64        `json:"threshold,omitempty"`
		GatePower   *powerJSON     `json:"gate_power,omitempty"`
		Regressions []verdict      `json:"regressions,omitempty"`
		// NotJudged are the cells no verdict covers: a side's runs all
		// stalled (report.NotJudged).
		NotJudged []notJudged `json:"not_judged"`
	}{Experiment: d.Experiment.ID, Name: d.Experiment.Name, Base: d.Experiment.Base, Alpha: f.alpha,
		MinEffect: f.minEffect, Correction: string(vopt.Correction), Power: toPowerJSON(report.PowerOf(cmps, vopt)),
		Counts: map[string]int{}, Verdicts: []verdict{}, Gate: f.gate,
		NotJudged: []notJudged{}}
	why := func(c report.Comparison) string {
		_, long := report.UnknownWhy(c, vopt)
		return long
	}
	conv := func(c report.Comparison) verdict {
		v := c.Verdict
		return verdict{c.Target, c.Test, c.Threads, v.Outcome.String(), jsonNum(v.Ratio), jsonNum(v.RatioLo),
			jsonNum(v.RatioHi), jsonNum(v.P), jsonNum(v.PAdjusted), string(v.Evidence), why(c), v.NBase, v.NOther, jsonNum(v.MedianBase), jsonNum(v.MedianOther), v.Warnings}
	}
	for _, o := range []analysis.Outcome{analysis.Slower, analysis.Faster, analysis.Same, analysis.Unknown} {
		doc.Counts[o.String()] = 0
	}
	for _, c := range cmps {
		doc.Counts[c.Verdict.Outcome.String()]++
		doc.Verdicts = append(doc.Verdicts, conv(c))
	}
	for _, u := range unjudged {
		doc.NotJudged = append(doc.NotJudged, notJudged{u.Target, u.Test, u.Threads, u.Why()})
	}
	var found []report.Comparison
	if f.gate {
		doc.Threshold = f.threshold
		var g analysis.GateResult
		g, found = regressions(cmps, gopt)
		gp := toPowerJSON(g.Power)
		doc.GatePower = &gp
		for _, c := range found {
			doc.Regressions = append(doc.Regressions, conv(c))
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("compare json: %w", err)
	}
	if !f.gate {
		return nil
	}
	return gateOutcome(found, unjudged)
}

// effectOf is opt's minimum effect, its default when unset.
func effectOf(opt report.VerdictOptions) float64 {
	if opt.MinEffect == 0 {
		return analysis.DefaultMinEffect
	}
	return opt.MinEffect
}

// verdictLines prints what compare prints under its table, across
// experiments too: the verdict counts and the cells not judged, why cells
// are unknown, and the power of the repeats.
func verdictLines(w io.Writer, cmps []report.Comparison, unjudged []report.Unjudged, vopt report.VerdictOptions) {
	counts := map[analysis.Outcome]int{}
	for _, c := range cmps {
		counts[c.Verdict.Outcome]++
	}
	stalled := ""
	if len(unjudged) > 0 {
		stalled = fmt.Sprintf("; %d cell(s) not judged: their runs completed no operation (stalled)", len(unjudged))
	}
	fmt.Fprintf(w, "\nverdicts over %d cells: %d slower, %d faster, %d same, %d unknown%s\n", len(cmps),
		counts[analysis.Slower], counts[analysis.Faster], counts[analysis.Same], counts[analysis.Unknown], stalled)
	if len(cmps) == 0 {
		return
	}
	unknownLines(w, cmps, vopt)
	powerLines(w, cmps, vopt)
}
