package fio

import (
	"bytes"
	"errors"
	"math"
	"os"
	"testing"
)

// TestParseStatusAndFinal reads a real fio 3.33 run (randrw 70/30, two
// jobs, 2 s, --status-interval=1) with a warning line put between its
// documents: every document is read, the counts only grow, and the final
// report's totals add both jobs' reads and writes.
func TestParseStatusAndFinal(t *testing.T) {
	b, err := os.ReadFile("testdata/randrw-2jobs.json")
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b[1:], []byte("\n{")) + 2
	b = append(append(append([]byte{}, b[:i]...), []byte("fio: a warning {with a brace} {}\n")...), b[i:]...)
	reports, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(reports) != 3 {
		t.Fatalf("%d reports, want 3 (two status reports and the final)", len(reports))
	}
	var prev int64
	for _, r := range reports {
		if n := r.Totals().IOs(); n < prev {
			t.Errorf("IOs went down from %d to %d", prev, n)
		} else {
			prev = n
		}
	}
	final := reports[2]
	if len(final.Jobs) != 2 || final.Version != "fio-3.33" {
		t.Fatalf("final: %d jobs, version %q", len(final.Jobs), final.Version)
	}
	tot := final.Totals()
	var reads, writes int64
	var iops float64
	for _, j := range final.Jobs {
		reads += j.Read.TotalIOs
		writes += j.Write.TotalIOs
		iops += j.Read.IOPS + j.Write.IOPS
	}
	if tot.ReadIOs != reads || tot.WriteIOs != writes || reads == 0 || writes == 0 || math.Abs(tot.IOPS()-iops) > 1e-9*iops {
		t.Errorf("totals %+v; want %d reads, %d writes, %v IOPS", tot, reads, writes, iops)
	}
	if !(tot.ClatP50 > 0 && tot.ClatP50 <= tot.ClatP95 && tot.ClatP95 <= tot.ClatP99 && tot.ClatP99 <= tot.ClatP999 &&
		tot.ClatP999 <= tot.Max && tot.ClatMean > 0) {
		t.Errorf("latency p50 %v p95 %v p99 %v p99.9 %v max %v mean %v: want positive and ordered",
			tot.ClatP50, tot.ClatP95, tot.ClatP99, tot.ClatP999, tot.Max, tot.ClatMean)
	}
}

// TestParseNothing says fio wrote no JSON (a normal-format run, an empty
// output), and reads a document cut short as absent.
func TestParseNothing(t *testing.T) {
	for _, out := range []string{"", "rr: (groupid=0, jobs=1): err= 0\n  read: IOPS=27.3k\n", `{"fio version" : "fio-3.33", "jobs" : [`} {
		if _, err := Parse([]byte(out)); !errors.Is(err, ErrNoJSON) {
			t.Errorf("Parse(%q): %v, want ErrNoJSON", out, err)
		}
	}
}
