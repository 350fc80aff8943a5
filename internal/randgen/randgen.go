// Package randgen draws random numbers the way sysbench 1.0.20 does
// (src/sb_rand.c: uniform, special, zipfian) and the strings its tables
// hold. The sysbench suite loads and queries with it, and the custom suite's
// statement arguments draw from it, so both stay sysbench's distributions
// without one suite importing the other.
package randgen

import (
	"math"
	"math/rand/v2"
)

// Rand is one worker's random source with sysbench 1.0.20's distributions
// (src/sb_rand.c). Each worker owns one, so drawing takes no lock.
type Rand struct {
	r *rand.Rand
}

// NewRand returns a source seeded with seed.
func NewRand(seed uint64) *Rand {
	return &Rand{r: rand.New(rand.NewPCG(seed, seed^0xda3e39cb94b95bdb))}
}

// Float returns a uniform double in [0, 1), as sb_rand_uniform_double.
func (r *Rand) Float() float64 { return r.r.Float64() }

// Uniform returns an integer uniform in [lo, hi], computed as sysbench's
// sb_rand_uniform does: lo + u * (hi - lo + 1) with u in [0, 1).
func (r *Rand) Uniform(lo, hi int64) int64 {
	if hi <= lo {
		return lo
	}
	return lo + int64(r.r.Float64()*float64(hi-lo+1))
}

// Defaults of sysbench 1.0.20's special distribution (--rand-spec-iter,
// --rand-spec-pct, --rand-spec-res) and of --rand-zipfian-exp.
const (
	specIter       = 12
	specPct        = 1
	specRes        = 75
	DefaultZipfExp = 0.8
)

// Special returns a value in [lo, hi] from sysbench 1.0.20's "special"
// distribution, the default --rand-type of that release and so the one its
// prepare draws k from: with probability 1/4 (100 - rand-spec-res percent) a
// value from a sum of 12 uniforms (bell-shaped around the middle), otherwise
// one of the 1% (rand-spec-pct) of values at the centre of the range.
func (r *Rand) Special(lo, hi int64) int64 {
	t := float64(hi - lo)
	if t <= 0 {
		return lo
	}
	rangeSize := t * 100.0 / (100.0 - specRes)
	rnd := r.r.Float64()
	res := rnd * rangeSize
	if res < t {
		sum := 0.0
		for i := 0; i < specIter; i++ {
			sum += r.r.Float64()
		}
		return lo + int64(sum*t/specIter)
	}
	d := t * specPct / 100.0
	res = rnd*(d+1) + t/2 - t*specPct/200.0
	return lo + int64(res)
}

// DigitString appends groups of groupLen random digits joined by '-' to dst,
// sysbench's '#'-template strings: c is 10 groups of 11, pad 5 groups of 11.
func (r *Rand) DigitString(dst []byte, groups, groupLen int) []byte {
	for g := 0; g < groups; g++ {
		if g > 0 {
			dst = append(dst, '-')
		}
		for i := 0; i < groupLen; i++ {
			dst = append(dst, byte('0'+r.r.IntN(10)))
		}
	}
	return dst
}

// Zipf draws from a bounded Zipf distribution over [1, n] with any positive
// exponent by rejection-inversion (Hörmann and Derflinger 1996), the method
// sysbench 1.0.20's sb_rand_zipfian uses; Go's rand.Zipf needs exponents > 1.
type Zipf struct {
	n, e, s, hX1, hN float64
}

// NewZipf prepares a generator of values in [1, n] with exponent e.
func NewZipf(n int64, e float64) *Zipf {
	z := &Zipf{n: float64(n), e: e}
	z.s = 2 - z.hInv(z.hInt(2.5)-z.h(2))
	z.hX1 = z.hInt(1.5) - 1
	z.hN = z.hInt(z.n + 0.5)
	return z
}

// Next returns the next value in [1, n].
func (z *Zipf) Next(r *Rand) int64 {
	for {
		u := z.hN + r.r.Float64()*(z.hX1-z.hN)
		x := z.hInv(u)
		k := math.Floor(x + 0.5)
		k = min(max(k, 1), z.n)
		if k-x <= z.s || u >= z.hInt(k+0.5)-z.h(k) {
			return int64(k)
		}
	}
}

// hInt is H(x) = (x^(1-e) - 1)/(1-e), or log(x) when e = 1.
func (z *Zipf) hInt(x float64) float64 {
	lx := math.Log(x)
	return expm1Over((1-z.e)*lx) * lx
}

// h is x^-e.
func (z *Zipf) h(x float64) float64 { return math.Exp(-z.e * math.Log(x)) }

// hInv is the inverse of hInt.
func (z *Zipf) hInv(x float64) float64 {
	t := max(x*(1-z.e), -1)
	return math.Exp(log1pOver(t) * x)
}

// log1pOver is log(1+x)/x, with its Taylor series near 0.
func log1pOver(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Log1p(x) / x
	}
	return 1 - x*(0.5-x*(1.0/3-0.25*x))
}

// expm1Over is (exp(x)-1)/x, with its Taylor series near 0.
func expm1Over(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Expm1(x) / x
	}
	return 1 + x*0.5*(1+x/3*(1+0.25*x))
}
