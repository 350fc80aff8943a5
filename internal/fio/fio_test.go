package fio

import (
	"bytes"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
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

// TestSeriesNumjobs runs real fio with four jobs merged by group_reporting
// (whose job_runtime adds up the four jobs' time) and checks that the
// series reads fio's own rates: at every status document the IOs so far
// over the series' seconds so far are within 5% of the IOPS fio reports,
// and the series spans the run's wall time, not four times it.
func TestSeriesNumjobs(t *testing.T) {
	fioPath, err := exec.LookPath("fio")
	if err != nil {
		t.Fatal("fio is not installed (scripts/install-deps.sh installs it)")
	}
	dir := t.TempDir()
	cmd := exec.Command(fioPath, "--name=nj", "--filename="+filepath.Join(dir, "f"), "--size=8M", "--rw=randread",
		"--bs=4k", "--ioengine=psync", "--numjobs=4", "--group_reporting", "--time_based", "--runtime=3",
		"--status-interval=1", "--output-format=json")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("fio: %v", err)
	}
	reports, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(reports) < 3 {
		t.Fatalf("%d documents; want status documents and the final", len(reports))
	}
	final := reports[len(reports)-1].Totals()
	if final.RuntimeMS < 2900 || final.RuntimeMS > 3500 {
		t.Errorf("final runtime %d ms; want about the 3000 ms asked for", final.RuntimeMS)
	}
	ivs := Series(reports)
	var ios int64
	var secs float64
	k := 0
	for _, rep := range reports {
		tot := rep.Totals()
		for ios < tot.IOs() && k < len(ivs) {
			ios += ivs[k].IOs
			secs += ivs[k].Seconds
			k++
		}
		if ios != tot.IOs() {
			t.Fatalf("series holds %d IOs at a document with %d", ios, tot.IOs())
		}
		if got, want := float64(ios)/secs, tot.IOPS(); math.Abs(got-want) > 0.05*want {
			t.Errorf("after %.3f s the series reads %.0f IOPS; fio says %.0f", secs, got, want)
		}
	}
	if secs < 2.9 || secs > 3.5 {
		t.Errorf("series spans %.3f s; want the 3 s fio ran", secs)
	}
}
