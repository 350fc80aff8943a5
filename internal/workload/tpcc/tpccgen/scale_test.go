package tpccgen

import (
	"math"
	"testing"
)

// TestScaleOf checks py-tpcc's makeWithScaleFactor: items, customers and
// initial new orders per district divided and truncated, with floors.
func TestScaleOf(t *testing.T) {
	for _, c := range []struct {
		f                           float64
		items, customers, newOrders int
		first, lastNames            int
	}{
		{1, 100_000, 3000, 900, 2101, 999},
		{10, 10_000, 300, 90, 211, 299},
		{100, 1000, 30, 9, 22, 29},
		{7, 14_285, 428, 128, 301, 427},
		{5000, 20, 1, 0, 2, 0},
		{MaxScaleFactor, 1, 1, 0, 2, 0},
	} {
		s := ScaleOf(c.f)
		if s.Items != c.items || s.Customers != c.customers || s.NewOrders != c.newOrders || s.Orders() != c.customers ||
			s.FirstNewOrder() != c.first || s.LastNames() != c.lastNames {
			t.Errorf("ScaleOf(%g) = %+v, first new order %d, last names to %d; want %d items, %d customers, %d new orders, %d, %d",
				c.f, s, s.FirstNewOrder(), s.LastNames(), c.items, c.customers, c.newOrders, c.first, c.lastNames)
		}
	}
	for _, f := range []float64{0, 0.5, -1, math.NaN(), MaxScaleFactor + 1} {
		if CheckScaleFactor(f) == nil {
			t.Errorf("CheckScaleFactor(%v) accepted it", f)
		}
	}
	if err := CheckScaleFactor(1.5); err != nil {
		t.Errorf("CheckScaleFactor(1.5): %v", err)
	}
}
