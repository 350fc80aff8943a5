package analysis

import (
	"math"
	"slices"
)

// This file holds the small numerical kernels the tests and summaries share:
// sorting copies, medians, means, the normal and Student t distributions.

// finite returns the finite values of xs in a new slice and how many values
// were dropped (NaN or ±Inf), so callers can warn about them.
func finite(xs []float64) (out []float64, dropped int) {
	out = make([]float64, 0, len(xs))
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			dropped++
			continue
		}
		out = append(out, x)
	}
	return out, dropped
}

// sortedCopy returns a sorted copy of xs; the input is never modified.
func sortedCopy(xs []float64) []float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s
}

// Median returns the median of xs (the mean of the middle two for an even
// count), NaN if empty; xs is not modified. It is the one median of
// benchlab: the report's medians over repeats use it too.
func Median(xs []float64) float64 { return medianSorted(sortedCopy(xs)) }

// medianSorted returns the median of an already sorted slice, NaN if empty.
func medianSorted(s []float64) float64 {
	n := len(s)
	if n == 0 {
		return math.NaN()
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// mean returns the arithmetic mean of xs, NaN if empty.
func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// stddev returns the standard deviation of xs around m with ddof degrees of
// freedom removed (0: population, 1: sample); 0 when there are too few values.
func stddev(xs []float64, m float64, ddof int) float64 {
	if len(xs)-ddof <= 0 {
		return 0
	}
	var ss float64
	for _, x := range xs {
		d := x - m
		ss += d * d
	}
	return math.Sqrt(ss / float64(len(xs)-ddof))
}

// normCDF is the standard normal distribution function Φ(z).
func normCDF(z float64) float64 {
	return 0.5 * math.Erfc(-z/math.Sqrt2)
}

// normQuantile is Φ⁻¹(p) for 0 < p < 1.
func normQuantile(p float64) float64 {
	return math.Sqrt2 * math.Erfinv(2*p-1)
}

// studentTwoSided returns the two-sided p-value of a Student t statistic with
// df degrees of freedom: P(|T| ≥ |t|) = I_{df/(df+t²)}(df/2, 1/2).
func studentTwoSided(t, df float64) float64 {
	if math.IsNaN(t) || df <= 0 {
		return math.NaN()
	}
	if math.IsInf(t, 0) {
		return 0
	}
	x := df / (df + t*t)
	return regIncBeta(df/2, 0.5, x)
}

// regIncBeta is the regularized incomplete beta function I_x(a, b), evaluated
// with the continued fraction of DLMF 8.17.22 (modified Lentz algorithm),
// using the symmetry I_x(a,b) = 1 − I_{1−x}(b,a) where the fraction converges
// slowly.
func regIncBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	if x > (a+1)/(a+b+2) {
		return 1 - regIncBeta(b, a, 1-x)
	}
	lbeta := lgamma(a+b) - lgamma(a) - lgamma(b)
	front := math.Exp(a*math.Log(x) + b*math.Log1p(-x) + lbeta)
	return front * betaContinuedFraction(a, b, x) / a
}

// lgamma is math.Lgamma without the sign, for positive arguments.
func lgamma(x float64) float64 {
	v, _ := math.Lgamma(x)
	return v
}

// betaContinuedFraction evaluates 1/(1+ d1/(1+ d2/(1+ ...))) for I_x(a,b)
// with the coefficients d_{2m+1} = −(a+m)(a+b+m)x/((a+2m)(a+2m+1)) and
// d_{2m} = m(b−m)x/((a+2m−1)(a+2m)).
func betaContinuedFraction(a, b, x float64) float64 {
	const (
		tiny    = 1e-300
		eps     = 1e-15
		maxIter = 500
	)
	c := 1.0
	d := 1 - (a+b)*x/(a+1)
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= maxIter; m++ {
		fm := float64(m)
		// Even step.
		num := fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm))
		d = 1 + num*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + num/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		h *= d * c
		// Odd step.
		num = -(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1))
		d = 1 + num*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + num/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		delta := d * c
		h *= delta
		if math.Abs(delta-1) < eps {
			break
		}
	}
	return h
}

// fUpper is the upper tail P(F ≥ f) of Fisher's F distribution with d1 and
// d2 degrees of freedom: I_{d2/(d2+d1·f)}(d2/2, d1/2).
func fUpper(f, d1, d2 float64) float64 {
	if math.IsNaN(f) || d1 <= 0 || d2 <= 0 {
		return math.NaN()
	}
	if f <= 0 {
		return 1
	}
	if math.IsInf(f, 1) {
		return 0
	}
	return regIncBeta(d2/2, d1/2, d2/(d2+d1*f))
}
