//go:build rocksdb

package kv

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/engine/dbbench"
	"benchlab/internal/engine/rocksdb"
	"benchlab/internal/runner"
)

func TestRocksDB(t *testing.T) {
	checkEngine(t, rocksdb.Driver{}, map[string]string{"cache_size": "4194304", "compression_type": "lz4"})
}

// TestSameDataAsDBBench loads keys with Debian's db_bench and reads them
// in-process: keys and values must be byte-identical to what the kv suite
// generates, so both do the same work.
func TestSameDataAsDBBench(t *testing.T) {
	if _, err := exec.LookPath("db_bench"); err != nil {
		t.Skip("db_bench not on PATH (apt-get install rocksdb-tools)")
	}
	ctx := context.Background()
	dir := t.TempDir()
	p := testParams(3000)
	bdb, err := dbbench.Driver{}.Open(ctx, engine.Target{}, dir)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := BenchStepOf("fillseq", p, 1)
	if _, err := bdb.(engine.StepRunner).RunStep(ctx, s); err != nil {
		t.Fatal(err)
	}
	db, err := rocksdb.Driver{}.Open(ctx, engine.Target{}, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	it, _ := db.(engine.KV).NewIterator()
	defer it.Close()
	vals := values{data: ValueData(opts(p).CompressionRatio, opts(p).ValueSize)}
	key := make([]byte, opts(p).KeySize)
	var n uint64
	for ok := it.First(); ok; ok = it.Next() {
		EncodeKey(key, n)
		if !bytes.Equal(it.Key(), key) {
			t.Fatalf("db_bench key %d is %q, the suite's is %q", n, it.Key(), key)
		}
		if want := vals.next(opts(p).ValueSize); !bytes.Equal(it.Value(), want) {
			t.Fatalf("db_bench value of key %d differs from the suite's:\n%q\n%q", n, it.Value()[:40], want[:40])
		}
		n++
	}
	if n != 3000 {
		t.Fatalf("db_bench wrote %d keys, want 3000", n)
	}
}

// TestHarnessOverhead compares benchlab's readrandom on in-process RocksDB
// with db_bench's readrandom on the same data at 1 and 2 threads (the
// harness should cost no more than db_bench's own loop). It only logs: the numbers need a quiet machine to mean anything.
// It takes about 100 s, so it runs only with BENCHLAB_OVERHEAD=1:
// BENCHLAB_OVERHEAD=1 go test -tags rocksdb -run HarnessOverhead -v ./internal/workload/kv/
func TestHarnessOverhead(t *testing.T) {
	if os.Getenv("BENCHLAB_OVERHEAD") == "" {
		t.Skip("set BENCHLAB_OVERHEAD=1 to compare benchlab's and db_bench's readrandom")
	}
	if _, err := exec.LookPath("db_bench"); err != nil {
		t.Skip("db_bench not on PATH")
	}
	ctx := context.Background()
	dir := t.TempDir()
	p := testParams(200_000)
	p.ReadTime = 3 * time.Second
	bdb, _ := dbbench.Driver{}.Open(ctx, engine.Target{}, dir)
	sr := bdb.(engine.StepRunner)
	for _, name := range []string{"fillseq", "waitforcompaction"} {
		s, _ := BenchStepOf(name, p, 1)
		if _, err := sr.RunStep(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	steps, _ := Suite{}.Plan(p)
	var rr = steps[0]
	for _, s := range steps {
		if s.Name == "readrandom" {
			rr = s
		}
	}
	// Seven rounds per thread count, the two tools alternating which goes
	// first; medians, since single 3 s runs vary by 20% and more here.
	for _, threads := range []int{1, 2} {
		var ours, theirs []float64
		for round := 0; round < 7; round++ {
			runOurs := func() {
				db, err := rocksdb.Driver{}.Open(ctx, engine.Target{}, dir)
				if err != nil {
					t.Fatal(err)
				}
				res, err := runner.MeasureRoles(ctx, db, rr, threads, 1, runner.Options{})
				db.Close()
				if err != nil {
					t.Fatal(err)
				}
				ours = append(ours, res[0].Throughput())
			}
			runTheirs := func() {
				s, _ := BenchStepOf("readrandom", p, threads)
				br, err := sr.RunStep(ctx, s)
				if err != nil {
					t.Fatal(err)
				}
				theirs = append(theirs, br.OpsPerSec)
			}
			if round%2 == 0 {
				runOurs()
				runTheirs()
			} else {
				runTheirs()
				runOurs()
			}
		}
		slices.Sort(ours)
		slices.Sort(theirs)
		t.Logf("readrandom %d thread(s), median of 7: benchlab %.0f ops/s %v, db_bench %.0f ops/s %v, ratio %s", threads,
			ours[3], ours, theirs[3], theirs, strconv.FormatFloat(ours[3]/theirs[3], 'f', 2, 64))
	}
}

// latestOptions returns the newest OPTIONS file RocksDB wrote in dir (one
// per open).
func latestOptions(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	best, bestN := "", -1
	for _, e := range ents {
		if s, ok := strings.CutPrefix(e.Name(), "OPTIONS-"); ok && !strings.HasSuffix(s, ".dbtmp") {
			if n, err := strconv.Atoi(s); err == nil && n > bestN {
				best, bestN = e.Name(), n
			}
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, best))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestFillseqVectorMemtable checks that in-process RocksDB loads fillseq
// into a vector memtable without concurrent memtable writes, as db_bench's
// fillseq (--memtablerep=vector --allow_concurrent_memtable_write=false),
// and that the steps after it find the skip list again with every key of
// the load (written without the WAL) readable.
func TestFillseqVectorMemtable(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := rocksdb.Driver{}.Open(ctx, engine.Target{Name: "r", Engine: "rocksdb"}, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if o := latestOptions(t, dir); !strings.Contains(o, "SkipListFactory") {
		t.Fatalf("a fresh database should use the skip list:\n%s", grepLines(o, "memtable"))
	}
	p := testParams(2000)
	steps, err := Suite{}.Plan(p)
	if err != nil {
		t.Fatal(err)
	}
	role := steps[0].Roles[0]
	w, err := role.NewWorker(ctx, db, 0, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	o := latestOptions(t, dir)
	if !strings.Contains(o, "VectorRepFactory") || !strings.Contains(o, "allow_concurrent_memtable_write=false") {
		t.Errorf("fillseq's database options:\n%s\nwant the vector memtable without concurrent writes",
			grepLines(o, "memtable"))
	}
	for i := 0; i < 2000; i++ {
		if _, err := w.Op(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if o := latestOptions(t, dir); !strings.Contains(o, "SkipListFactory") {
		t.Errorf("after fillseq the database should use the skip list again:\n%s", grepLines(o, "memtable"))
	}
	key := make([]byte, opts(p).KeySize)
	for i := uint64(0); i < 2000; i++ {
		EncodeKey(key, i)
		if _, ok, err := db.(engine.KV).Get(key, nil); err != nil || !ok {
			t.Fatalf("key %d after the reopen: found %v, %v", i, ok, err)
		}
	}
}

func grepLines(s, word string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, word) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestWaitStepCompactsL0 checks that the in-process flush-and-wait step
// (flush_mt_l0) includes db_bench's compact0: with data below L0 and one L0
// file, too few to trigger a compaction, waiting alone leaves it in L0 and
// the step moves it down.
func TestWaitStepCompactsL0(t *testing.T) {
	ctx := context.Background()
	db, err := rocksdb.Driver{}.Open(ctx, engine.Target{Name: "r", Engine: "rocksdb",
		Settings: map[string]string{"level0_file_num_compaction_trigger": "2"}}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	kv := db.(engine.KV)
	p := testParams(3000)
	key := make([]byte, opts(p).KeySize)
	vals := values{data: ValueData(opts(p).CompressionRatio, opts(p).ValueSize)}
	fill := func(from, to uint64) {
		for i := from; i < to; i++ {
			EncodeKey(key, i)
			if err := kv.Put(key, vals.next(opts(p).ValueSize), engine.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if err := kv.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	l0 := func() int64 {
		st, err := kv.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return st.L0Files
	}
	// Flushes until a compaction (triggered at 2 L0 files) has moved
	// everything below L0.
	next := uint64(0)
	for l0() != 0 || next == 0 {
		if next == 10000 {
			t.Fatalf("set-up: %d L0 files after 10 flushes", l0())
		}
		fill(next, next+1000)
		next += 1000
		if err := kv.WaitForCompactions(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	fill(next, next+1000)
	next += 1000
	if err := kv.WaitForCompactions(ctx); err != nil {
		t.Fatal(err)
	}
	if n := l0(); n != 1 {
		t.Fatalf("set-up: %d L0 files, want 1 (below the trigger of 2)", n)
	}
	steps, err := Suite{}.Plan(p)
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	for _, s := range steps {
		if s.Name == "waitforcompaction" {
			if _, err := s.Action(ctx, db, &log); err != nil {
				t.Fatal(err)
			}
		}
	}
	st, _ := kv.Stats(ctx)
	if st.L0Files != 0 || !strings.Contains(log.String(), "compact0: 1 L0 files into L") {
		t.Errorf("after the wait step: %d L0 files, log:\n%s\nwant compact0 to move the L0 file", st.L0Files, log.String())
	}
	t.Logf("%s", log.String())
	for i := uint64(0); i < next; i += 299 {
		EncodeKey(key, i)
		if _, ok, err := kv.Get(key, nil); err != nil || !ok {
			t.Fatalf("key %d after compact0: found %v, %v", i, ok, err)
		}
	}
}
