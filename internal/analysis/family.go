package analysis

// Evidence names what a verdict rests on, so that tables can say it next to
// the verdict.
type Evidence string

// EvidenceRepeats is the evidence of Compare: the two-sided Mann-Whitney
// test over the repeats' values, one per run, which sees run-to-run
// variation and nothing else.
const EvidenceRepeats Evidence = "repeats"

// Pair is one cell of a family: the values of the base and of the other
// target, one per repeat, for a metric that improves in direction Dir. Key
// names the cell for Judges (the report uses "target/test@threads").
type Pair struct {
	Key         string
	Base, Other []float64
	Dir         Direction
}

// Judge is an extra source of evidence for a cell, such as within-run
// variation or a noise model of the host. Given the cell and the verdict
// drawn from its repeats alone, it returns a verdict resting on more
// evidence, with Evidence saying which and P its p-value, or ok false to
// leave the repeats' verdict. Its P takes part in the family's correction
// like any other, and CompareFamily decides the outcome again from it, so a
// Judge sets Ratio, RatioLo, RatioHi and P and may leave Outcome unset.
type Judge interface {
	Judge(c Pair, repeats Verdict, opt CompareOptions) (v Verdict, ok bool)
}

// Family is the result of CompareFamily: a verdict per cell, in the order of
// the cells, and the family's Power.
type Family struct {
	Verdicts []Verdict
	Power    Power
}

// CompareFamily judges every cell with Compare, lets opt.Judges replace a
// cell's verdict with one that rests on more evidence, then applies
// opt.Correction (default BH) over all cells with CorrectVerdicts. Power is
// computed with the smallest repeat counts of any cell, so it is the
// family's weakest case.
func CompareFamily(cells []Pair, opt CompareOptions) Family {
	opt, _ = opt.withDefaults()
	vs := make([]Verdict, len(cells))
	nb, no := 0, 0
	for i, c := range cells {
		v := Compare(c.Base, c.Other, c.Dir, opt)
		if i == 0 || v.NBase < nb {
			nb = v.NBase
		}
		if i == 0 || v.NOther < no {
			no = v.NOther
		}
		for _, j := range opt.Judges {
			if jv, ok := j.Judge(c, v, opt); ok {
				jv.Direction = c.Dir
				v = jv
				break
			}
		}
		vs[i] = v
	}
	return Family{Verdicts: CorrectVerdicts(vs, opt), Power: PowerOf(len(cells), nb, no, opt.Alpha, opt.Correction)}
}

// CorrectVerdicts applies opt.Correction (default BH) to the p-values of
// verdicts made one by one and decides each outcome again from the adjusted
// p-value: a cell called slower on its own becomes unknown when it does not
// survive the correction. The verdicts are copied, not changed in place.
func CorrectVerdicts(vs []Verdict, opt CompareOptions) []Verdict {
	opt, _ = opt.withDefaults()
	ps := make([]float64, len(vs))
	for i, v := range vs {
		ps[i] = v.P
	}
	adj := Adjust(ps, opt.Correction)
	out := make([]Verdict, len(vs))
	for i, v := range vs {
		v.PAdjusted, v.Correction = adj[i], opt.Correction
		if v.NBase > 0 && v.NOther > 0 {
			v.Outcome = decide(v, opt)
		}
		out[i] = v
	}
	return out
}
