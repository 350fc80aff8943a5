package randgen

import (
	"math"
	"sort"
	"testing"
)

func TestUniformInclusive(t *testing.T) {
	r := NewRand(1)
	seen := map[int64]int{}
	for i := 0; i < 10000; i++ {
		v := r.Uniform(1, 5)
		if v < 1 || v > 5 {
			t.Fatalf("Uniform(1,5) = %d", v)
		}
		seen[v]++
	}
	if len(seen) != 5 {
		t.Errorf("values seen %v, want all of 1..5", seen)
	}
}

// TestSpecial checks sysbench 1.0.20's default: 75% of draws land on the 1%
// of values at the centre of the range, the rest spread bell-shaped.
func TestSpecial(t *testing.T) {
	r := NewRand(2)
	const n, draws = 10000, 200000
	counts := map[int64]int{}
	centre := 0
	for i := 0; i < draws; i++ {
		v := r.Special(1, n)
		if v < 1 || v > n {
			t.Fatalf("Special out of range: %d", v)
		}
		counts[v]++
		if v >= n/2-n/200 && v <= n/2+n/200 {
			centre++
		}
	}
	freq := make([]int, 0, len(counts))
	for _, c := range counts {
		freq = append(freq, c)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(freq)))
	top := 0
	for _, c := range freq[:n/100] {
		top += c
	}
	if share := float64(top) / draws; share < 0.74 || share > 0.80 {
		t.Errorf("top 1%% of values got %.3f of draws, want about 0.75", share)
	}
	if share := float64(centre) / draws; share < 0.75 {
		t.Errorf("centre 1%% got %.3f of draws, want >= 0.75", share)
	}
}

func TestZipf(t *testing.T) {
	r := NewRand(3)
	z := NewZipf(1000, DefaultZipfExp)
	counts := make([]int, 1001)
	const draws = 300000
	for i := 0; i < draws; i++ {
		v := z.Next(r)
		if v < 1 || v > 1000 {
			t.Fatalf("Zipf out of range: %d", v)
		}
		counts[v]++
	}
	// P(1)/P(2) = 2^0.8 = 1.74.
	if ratio := float64(counts[1]) / float64(counts[2]); math.Abs(ratio-1.741) > 0.1 {
		t.Errorf("rank 1 / rank 2 = %.3f, want 1.74", ratio)
	}
	for k := 1; k < 10; k++ {
		if counts[k] <= counts[k+1] {
			t.Errorf("counts not decreasing at rank %d: %d <= %d", k, counts[k], counts[k+1])
		}
	}
}

func TestDigitString(t *testing.T) {
	r := NewRand(4)
	c := r.DigitString(nil, 10, 11)
	pad := r.DigitString(nil, 5, 11)
	if len(c) != 119 || len(pad) != 59 {
		t.Fatalf("lengths %d and %d, want 119 and 59", len(c), len(pad))
	}
	for i, b := range c {
		if (i+1)%12 == 0 {
			if b != '-' {
				t.Fatalf("c[%d] = %q, want '-'", i, b)
			}
		} else if b < '0' || b > '9' {
			t.Fatalf("c[%d] = %q, want a digit", i, b)
		}
	}
	if string(NewRand(9).DigitString(nil, 2, 3)) != string(NewRand(9).DigitString(nil, 2, 3)) {
		t.Error("not deterministic for a fixed seed")
	}
	buf := make([]byte, 0, 200)
	if allocs := testing.AllocsPerRun(100, func() { buf = r.DigitString(buf[:0], 10, 11) }); allocs != 0 {
		t.Errorf("DigitString allocates %v times", allocs)
	}
}
