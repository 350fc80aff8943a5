package tpcc

import (
	"math/rand/v2"
	"strconv"
)

// rnd draws TPC-C's random values (clause 2.1.4 and 4.3.2).
type rnd struct {
	r   *rand.Rand
	src *rand.PCG
}

func newRand(seed uint64) *rnd {
	src := rand.NewPCG(seed, seed^0x7c0ffee5eed)
	return &rnd{r: rand.New(src), src: src}
}

// state is where the generator is, for a transaction run again with the
// same inputs (as pgbench retries a script with the same random values).
func (r *rnd) state() rand.PCG { return *r.src }

// restore goes back to a state.
func (r *rnd) restore(s rand.PCG) { *r.src = s }

// between returns an integer uniform in [lo, hi].
func (r *rnd) between(lo, hi int) int { return lo + r.r.IntN(hi-lo+1) }

// The constants C of NURand (clause 2.1.6): cLoad for c_last at load time,
// cRun for it while running (65 <= |cRun - cLoad| <= 119, not 96 or 112,
// clause 2.1.6.1), cID for customer ids and cItem for item ids.
const (
	cLoad = 157
	cRun  = 223
	cID   = 259
	cItem = 7911
)

// nuRand is NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x.
func (r *rnd) nuRand(a, c, x, y int) int {
	return (((r.between(0, a) | r.between(x, y)) + c) % (y - x + 1)) + x
}

const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// aString is a random alphanumeric string of lo to hi characters.
func (r *rnd) aString(lo, hi int) string {
	b := make([]byte, r.between(lo, hi))
	for i := range b {
		b[i] = alnum[r.r.IntN(len(alnum))]
	}
	return string(b)
}

// nString is a random string of n digits.
func (r *rnd) nString(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('0' + r.r.IntN(10))
	}
	return string(b)
}

// data is i_data or s_data: 26 to 50 characters, 10% of them holding
// "ORIGINAL" at a random position (clause 4.3.3.1).
func (r *rnd) data() string {
	s := r.aString(26, 50)
	if r.r.IntN(10) == 0 {
		at := r.r.IntN(len(s) - 8)
		s = s[:at] + "ORIGINAL" + s[at+8:]
	}
	return s
}

// zip is 4 random digits followed by "11111".
func (r *rnd) zip() string { return r.nString(4) + "11111" }

// fixed formats n/10^scale, a random decimal such as a price or tax.
func fixed(n, scale int) string {
	s := strconv.Itoa(n)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	for len(s) <= scale {
		s = "0" + s
	}
	s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	if neg {
		s = "-" + s
	}
	return s
}

var syllables = []string{"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"}

// lastName is the customer last name of number n in 0..999 (clause 4.3.2.3).
func lastName(n int) string {
	return syllables[n/100] + syllables[n/10%10] + syllables[n%10]
}
