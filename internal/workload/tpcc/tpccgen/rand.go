// Package tpccgen is what every TPC-C implementation in benchlab shares:
// the random values of clause 2.1.4 and 4.3.2, the population's sizes and
// the standard mix, so that the SQL and the document terminals draw the
// same inputs in the same order.
package tpccgen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
)

// Rand draws TPC-C's random values (clause 2.1.4 and 4.3.2); its
// embedded generator gives plain draws (IntN, Perm).
type Rand struct {
	*rand.Rand
	src *rand.PCG
}

// NewRand returns a generator seeded with seed.
func NewRand(seed uint64) *Rand {
	src := rand.NewPCG(seed, seed^0x7c0ffee5eed)
	return &Rand{Rand: rand.New(src), src: src}
}

// State is where the generator is, for a transaction run again with the
// same inputs (as pgbench retries a script with the same random values).
func (r *Rand) State() rand.PCG { return *r.src }

// Restore goes back to a state.
func (r *Rand) Restore(s rand.PCG) { *r.src = s }

// Between returns an integer uniform in [lo, hi].
func (r *Rand) Between(lo, hi int) int { return lo + r.IntN(hi-lo+1) }

// The constants C of NURand (clause 2.1.6): CLoad for c_last at load time,
// CRun for it while running (65 <= |CRun - CLoad| <= 119, not 96 or 112,
// clause 2.1.6.1), CID for customer ids and CItem for item ids.
const (
	CLoad = 157
	CRun  = 223
	CID   = 259
	CItem = 7911
)

// Population of clause 4.3.3.1 per warehouse.
const (
	Items                 = 100_000
	DistrictsPerWarehouse = 10
	CustomersPerDistrict  = 3000
	OrdersPerDistrict     = 3000
	FirstNewOrder         = 2101 // orders 2101..3000 are undelivered
)

// Scale is the population of one warehouse at py-tpcc's scale factor:
// items, customers (and orders) per district, and the orders per district
// still undelivered at the start. Factor 1 is clause 4.3.3.1's.
type Scale struct {
	Factor                      float64
	Items, Customers, NewOrders int
}

// MaxScaleFactor is the largest scale factor: every table keeps at least
// one row per district (py-tpcc clamps there too).
const MaxScaleFactor = Items

// ScaleOf is py-tpcc's makeWithScaleFactor: items, customers per district
// and initial new orders per district divided by f and truncated, at
// least one item and one customer. f must hold CheckScaleFactor.
func ScaleOf(f float64) Scale {
	if f < 1 {
		f = 1
	}
	return Scale{Factor: f, Items: max(int(Items/f), 1), Customers: max(int(CustomersPerDistrict/f), 1),
		NewOrders: max(int((OrdersPerDistrict-FirstNewOrder+1)/f), 0)}
}

// CheckScaleFactor says what is wrong with a scale factor: py-tpcc
// asserts at least 1 (it only shrinks the population).
func CheckScaleFactor(f float64) error {
	if math.IsNaN(f) || f < 1 || f > MaxScaleFactor {
		return fmt.Errorf("%v is not a scale factor; want 1 (the full population) to %d (py-tpcc divides items, "+
			"customers and new orders per district by it)", f, MaxScaleFactor)
	}
	return nil
}

// Orders is the orders per district at the start: one per customer.
func (s Scale) Orders() int { return s.Customers }

// FirstNewOrder is the first undelivered order of a district at the start.
func (s Scale) FirstNewOrder() int { return s.Customers - s.NewOrders + 1 }

// LastNames is the highest last-name number drawn (py-tpcc's
// makeRandomLastName caps it at the customers per district less one).
func (s Scale) LastNames() int { return min(999, s.Customers-1) }

// NURand is NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x.
func (r *Rand) NURand(a, c, x, y int) int {
	return (((r.Between(0, a) | r.Between(x, y)) + c) % (y - x + 1)) + x
}

const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// AString is a random alphanumeric string of lo to hi characters.
func (r *Rand) AString(lo, hi int) string {
	b := make([]byte, r.Between(lo, hi))
	for i := range b {
		b[i] = alnum[r.IntN(len(alnum))]
	}
	return string(b)
}

// NString is a random string of n digits.
func (r *Rand) NString(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('0' + r.IntN(10))
	}
	return string(b)
}

// Data is i_data or s_data: 26 to 50 characters, 10% of them holding
// "ORIGINAL" at a random position (clause 4.3.3.1).
func (r *Rand) Data() string {
	s := r.AString(26, 50)
	if r.IntN(10) == 0 {
		at := r.IntN(len(s) - 8)
		s = s[:at] + "ORIGINAL" + s[at+8:]
	}
	return s
}

// Zip is 4 random digits followed by "11111".
func (r *Rand) Zip() string { return r.NString(4) + "11111" }

// Fixed formats n/10^scale, a random decimal such as a price or tax.
func Fixed(n, scale int) string {
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

// LastName is the customer last name of number n in 0..999 (clause 4.3.2.3).
func LastName(n int) string {
	return syllables[n/100] + syllables[n/10%10] + syllables[n%10]
}

// Pick draws the next transaction from the standard mix: New-Order 45%,
// Payment 43%, Order-Status, Delivery and Stock-Level 4% each (clause
// 5.2.3's minimums for the last four), as an index into Kinds.
func (r *Rand) Pick() int {
	switch x := r.Between(1, 100); {
	case x <= 45:
		return 0
	case x <= 88:
		return 1
	case x <= 92:
		return 2
	case x <= 96:
		return 3
	}
	return 4
}

// The transactions' indexes in Kinds.
const (
	NewOrder = iota
	Payment
	OrderStatus
	Delivery
	StockLevel
)
