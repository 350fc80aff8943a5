package analysis

import "fmt"

// DefaultGateThreshold is the smallest slowdown the gate fails on (5%).
const DefaultGateThreshold = 0.05

// GateOptions are the settings of a regression gate (compare
// --fail-on-regression, or a spec's [gate] section).
type GateOptions struct {
	// Alpha is the family-wise level under Holm (default DefaultAlpha).
	Alpha float64
	// Correction is the procedure over the cells (default Holm).
	Correction Correction
	// MinEffect is the verdicts' smallest relative change (default
	// DefaultMinEffect).
	MinEffect float64
	// Threshold is the smallest slowdown that fails, as a fraction of the
	// base (default DefaultGateThreshold).
	Threshold float64
}

// WithDefaults fills zero fields.
func (o GateOptions) WithDefaults() GateOptions {
	if o.Alpha == 0 {
		o.Alpha = DefaultAlpha
	}
	if o.Correction == "" {
		o.Correction = Holm
	}
	if o.MinEffect == 0 {
		o.MinEffect = DefaultMinEffect
	}
	if o.Threshold == 0 {
		o.Threshold = DefaultGateThreshold
	}
	return o
}

// GateFieldError is a gate setting out of range; Field is the setting's
// name ("alpha", "correction", "min_effect", "threshold") for the caller to
// qualify as a flag or a spec field.
type GateFieldError struct {
	Field, Msg string
}

func (e *GateFieldError) Error() string { return e.Field + ": " + e.Msg }

// Check returns a *GateFieldError for the first setting out of range. It
// takes the options as they are, so fill defaults first (WithDefaults) when
// zero means "unset"; an explicit 0 is out of range.
func (o GateOptions) Check() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"alpha", o.Alpha}, {"min_effect", o.MinEffect}, {"threshold", o.Threshold}} {
		if !(f.v > 0 && f.v < 1) {
			return &GateFieldError{f.name, fmt.Sprintf("%v is not allowed; want a number between 0 and 1 (exclusive)", f.v)}
		}
	}
	if _, err := ParseCorrection(string(o.Correction), Holm); err != nil {
		return &GateFieldError{"correction", err.Error()}
	}
	return nil
}

// CanFire says whether a gate with power p can fail at all: some set of
// cells reaching the exact test's floor would be called (p.MinChanged > 0).
// Under Holm this is p.Callable; under BH a gate may fire only when enough
// cells move together, which CanFire accepts and Power.String states.
func CanFire(p Power) bool { return p.MinChanged > 0 }

// GateResult is what Gate decided.
type GateResult struct {
	// Options are the settings used, defaults filled.
	Options GateOptions
	// Power is the family's power under the gate's correction.
	Power Power
	// Verdicts are the cells' verdicts decided again under the gate's
	// correction.
	Verdicts []Verdict
	// Failed are the indices of the cells the gate fails on: slower after
	// correction and by at least Threshold.
	Failed []int
}

// Gate judges a family of verdicts (each from Compare or CompareFamily, in
// any correction) for the gate: it applies opt.Correction (default Holm) to
// their raw p-values, decides the outcomes again, and fails the cells that
// are slower by at least opt.Threshold. For a HigherIsBetter metric that is
// a ratio ≤ 1 − Threshold, for LowerIsBetter ≥ 1 + Threshold.
func Gate(vs []Verdict, opt GateOptions) GateResult {
	opt = opt.WithDefaults()
	res := GateResult{Options: opt}
	nb, no := 0, 0
	for i, v := range vs {
		if i == 0 || v.NBase < nb {
			nb = v.NBase
		}
		if i == 0 || v.NOther < no {
			no = v.NOther
		}
	}
	res.Power = PowerOf(len(vs), nb, no, opt.Alpha, opt.Correction)
	res.Verdicts = CorrectVerdicts(vs, CompareOptions{Alpha: opt.Alpha, MinEffect: opt.MinEffect, Correction: opt.Correction})
	for i, v := range res.Verdicts {
		if v.Outcome != Slower {
			continue
		}
		if (v.Direction == HigherIsBetter && v.Ratio <= 1-opt.Threshold) ||
			(v.Direction == LowerIsBetter && v.Ratio >= 1+opt.Threshold) {
			res.Failed = append(res.Failed, i)
		}
	}
	return res
}
