package analysis

// This file is NoiseJudge, which decides a family's cells with
// CompareNoise.

// NoiseCell is what a NoiseJudge knows of one cell beyond its values: the
// repeats with their within-run variances, and the host's noise prior.
type NoiseCell struct {
	Base, Other []Run
	Prior       NoisePrior
	// Paired: the runs are interleaved pairs (NoiseOptions.Paired).
	Paired bool
}

// NoiseJudge is a Judge (CompareFamily) that decides cells with
// CompareNoise. Cells maps a Pair's Key to what it knows of the cell; a
// cell it does not know keeps the repeats' verdict. When CompareNoise falls
// back to the repeats, the judge still answers, with the repeats' verdict
// and an Evidence that says why it fell back.
type NoiseJudge struct {
	Cells      map[string]NoiseCell
	MinPriorDF int
}

// Judge implements Judge.
func (j NoiseJudge) Judge(c Pair, repeats Verdict, opt CompareOptions) (Verdict, bool) {
	cell, ok := j.Cells[c.Key]
	if !ok {
		return repeats, false
	}
	v, ev := CompareNoise(cell.Base, cell.Other, c.Dir, cell.Prior, NoiseOptions{CompareOptions: opt, MinPriorDF: j.MinPriorDF,
		Paired: cell.Paired})
	if ev.Basis == BasisRepeats && ev.SlowSide == [2]bool{} && len(ev.HostSlow) == 0 {
		repeats.Evidence = Evidence(ev.String())
		if ev.Why != "" {
			repeats.Evidence += Evidence(" (" + ev.Why + ")")
		}
		return repeats, true
	}
	if cell.Paired {
		// The pairs' values are ratios scaled to the base's mean: the
		// medians shown are the measured ones.
		v.MedianBase, v.MedianOther = repeats.MedianBase, repeats.MedianOther
	}
	return v, true
}
