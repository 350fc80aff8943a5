package kv

import (
	"bytes"
	"compress/flate"
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/engine/pebble"
	"benchlab/internal/runner"
	"benchlab/internal/workload"
)

func TestEncodeKey(t *testing.T) {
	k := make([]byte, 20)
	EncodeKey(k, 0x0102030405060708)
	want := append([]byte{1, 2, 3, 4, 5, 6, 7, 8}, bytes.Repeat([]byte{'0'}, 12)...)
	if !bytes.Equal(k, want) {
		t.Fatalf("EncodeKey = %q, want %q", k, want)
	}
	if DecodeKey(k) != 0x0102030405060708 {
		t.Fatalf("DecodeKey = %x", DecodeKey(k))
	}
	a, b := make([]byte, 20), make([]byte, 20)
	for _, v := range []uint64{0, 1, 255, 256, 65535, 1 << 40} {
		EncodeKey(a, v)
		EncodeKey(b, v+1)
		if bytes.Compare(a, b) >= 0 {
			t.Fatalf("key %d does not sort before key %d", v, v+1)
		}
	}
}

func TestValueData(t *testing.T) {
	d := ValueData(0.5, 400)
	if len(d) != 1048600 {
		t.Fatalf("len = %d, want 1 MiB rounded up to a 100-byte fragment (1048600)", len(d))
	}
	for i := 0; i < len(d); i += 100 {
		if !bytes.Equal(d[i:i+50], d[i+50:i+100]) {
			t.Fatalf("fragment at %d is not a 50-byte run repeated", i)
		}
	}
	for _, c := range d {
		if c < ' ' || c > '~' {
			t.Fatalf("byte %d is not printable", c)
		}
	}
	// Random printable bytes compress to about 6.6/8 of their size, so a
	// ratio of 0.5 gives about 0.41 with a window that sees the repeats.
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, flate.BestSpeed)
	w.Write(d)
	w.Close()
	if r := float64(buf.Len()) / float64(len(d)); r < 0.35 || r > 0.6 {
		t.Fatalf("compressed to %.2f of its size; want about 0.41-0.5", r)
	}
	g := values{data: d}
	first := g.next(400)
	for i := 0; i < len(d)/400-1; i++ {
		g.next(400)
	}
	if again := g.next(400); !bytes.Equal(first, again) {
		t.Fatal("the generator does not wrap to the start of its data")
	}
}

func TestBenchStepOf(t *testing.T) {
	p := testParams(100_000)
	s, ok := BenchStepOf("overwritesome", p, 4)
	if !ok || s.Benchmarks[0] != "overwrite" || flag(s, "writes") != "2500" || flag(s, "num") != "100000" {
		t.Fatalf("overwritesome = %+v", s)
	}
	s, _ = BenchStepOf("readwhilewriting", p, 2)
	if flag(s, "benchmark_write_rate_limit") != "524288" || s.Duration != p.WriteTime || s.Threads != 2 {
		t.Fatalf("readwhilewriting = %+v", s)
	}
	s, _ = BenchStepOf("fillseq", p, 8)
	if s.Threads != 1 || flag(s, "disable_wal") != "1" || flag(s, "benchmark_write_rate_limit") != "" {
		t.Fatalf("fillseq = %+v", s)
	}
	if _, ok := BenchStepOf("nope", p, 1); ok {
		t.Fatal("unknown step accepted")
	}
}

func flag(s engine.KVStep, name string) string {
	for _, f := range s.Flags {
		if f[0] == name {
			return f[1]
		}
	}
	return ""
}

func TestCheckNamesField(t *testing.T) {
	for _, c := range []struct {
		field string
		edit  func(*workload.Params)
	}{
		{"workload.kv.num_keys", func(p *workload.Params) { opts(*p).NumKeys, p.TableSize = 10, 10 }},
		{"workload.kv.num_keys", func(p *workload.Params) { opts(*p).NumKeys = workload.MaxRows + 1 }},
		{"workload.kv.num_keys", func(p *workload.Params) { opts(*p).NumKeys = -5 }},
		{"workload.kv.key_size", func(p *workload.Params) { opts(*p).KeySize = 4 }},
		{"workload.kv.value_size", func(p *workload.Params) { opts(*p).ValueSize = 0 }},
		{"workload.kv.compression_ratio", func(p *workload.Params) { opts(*p).CompressionRatio = 2 }},
		{"workload.kv.mb_write_per_sec", func(p *workload.Params) { opts(*p).MBWritePerSec = 0 }},
		{"workload.tests", func(p *workload.Params) { p.Tests = []string{"fillrandom"} }},
	} {
		p := testParams(10_000)
		c.edit(&p)
		err := Suite{}.Check(p)
		if err == nil || !bytes.HasPrefix([]byte(err.Error()), []byte(c.field+":")) {
			t.Errorf("%s: got %v", c.field, err)
		}
	}
}

func testParams(n int64) workload.Params {
	return workload.Params{
		Options:  &Options{NumKeys: n, KeySize: 20, ValueSize: 400, CompressionRatio: 0.5, MBWritePerSec: 0.5},
		ReadTime: 300 * time.Millisecond, WriteTime: time.Second, Threads: []int{1, 2}, Seed: 7,
	}
}

// checkEngine runs the sequence's key steps on a real engine at a small size
// and checks db_bench's invariants: after fillseq of N keys a full scan
// sees N keys in order, readrandom finds every key, and the writer of a
// whilewriting step stays within 10% of its rate limit.
func checkEngine(t *testing.T, d engine.Driver, settings map[string]string) {
	t.Helper()
	const n = 5000
	ctx := context.Background()
	p := testParams(n)
	steps, err := Suite{}.Plan(p)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]workload.Step{}
	for _, s := range steps {
		byName[s.Name] = s
	}
	db, err := d.Open(ctx, engine.Target{Name: d.Name(), Engine: d.Name(), Settings: settings}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	kv := db.(engine.KV)

	res, err := runner.MeasureRoles(ctx, db, byName["fillseq"], 1, p.Seed, runner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Events != n || res[0].Errors != 0 {
		t.Fatalf("fillseq: %d events, %d errors; want %d, 0", res[0].Events, res[0].Errors, n)
	}
	it, err := kv.NewIterator()
	if err != nil {
		t.Fatal(err)
	}
	var seen uint64
	data := ValueData(opts(p).CompressionRatio, opts(p).ValueSize)
	vals := values{data: data}
	for ok := it.First(); ok; ok = it.Next() {
		if got := DecodeKey(it.Key()); got != seen || len(it.Key()) != opts(p).KeySize {
			t.Fatalf("scan: key %d (len %d) at position %d", got, len(it.Key()), seen)
		}
		if !bytes.Equal(it.Value(), vals.next(opts(p).ValueSize)) {
			t.Fatalf("scan: value of key %d is not the generator's", seen)
		}
		seen++
	}
	it.Close()
	if seen != n {
		t.Fatalf("full scan saw %d keys, want %d", seen, n)
	}

	for _, threads := range []int{1, 2} {
		res, err = runner.MeasureRoles(ctx, db, byName["readrandom"], threads, p.Seed, runner.Options{})
		if err != nil {
			t.Fatal(err)
		}
		r := res[0]
		if r.Events == 0 || r.Rows != r.Statements || r.Errors != 0 {
			t.Fatalf("readrandom at %d threads: %d reads, %d found, %d errors; want every read to hit",
				threads, r.Statements, r.Rows, r.Errors)
		}
	}
	for _, name := range []string{"fwdrange", "revrangewhilewriting", "multireadrandom"} {
		res, err = runner.MeasureRoles(ctx, db, byName[name], 1, p.Seed, runner.Options{})
		if err != nil || res[0].Events == 0 || res[0].Rows == 0 {
			t.Fatalf("%s: %v, %d events, %d rows", name, err, res[0].Events, res[0].Rows)
		}
	}

	res, err = runner.MeasureRoles(ctx, db, byName["readwhilewriting"], 1, p.Seed, runner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[1].Role.Name != "writer" {
		t.Fatalf("readwhilewriting: want reader and writer results, got %d", len(res))
	}
	want := WriterRate(p)
	got := float64(res[1].Events) / res[1].Seconds
	if math.Abs(got-want)/want > 0.10 {
		t.Fatalf("writer ran at %.0f ops/s, want %.0f ± 10%%", got, want)
	}
	if res[0].Rows != res[0].Statements {
		t.Fatalf("readwhilewriting: %d of %d reads found", res[0].Rows, res[0].Statements)
	}

	tally, err := byName["waitforcompaction"].Action(ctx, db, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	// An engine that cannot do db_bench's compact0 says so in the run's
	// notes (a step that did less than db_bench's must say so); one that can
	// says nothing.
	_, compacts := kv.(engine.L0Compactor)
	if said := strings.Contains(strings.Join(tally.Notes, "\n"), "compact0 left out"); said == compacts {
		t.Errorf("%s: waitforcompaction's notes %q; want a compact0 note only when the engine cannot compact L0", d.Name(), tally.Notes)
	}
	st, err := kv.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.SizeBytes <= 0 {
		t.Fatalf("LSM facts after flush: %+v", st)
	}
	t.Logf("%s: writer %.0f ops/s (limit %.0f); LSM %s", d.Name(), got, want, FormatFacts(st))
}

func TestPebble(t *testing.T) {
	checkEngine(t, pebble.Driver{}, map[string]string{"cache_size": "4194304", "compression_type": "snappy"})
}

// spyKV records the iterator calls a worker makes on a real engine.
type spyKV struct {
	engine.KV
	calls []string
}

func (s *spyKV) NewIterator() (engine.Iterator, error) {
	it, err := s.KV.NewIterator()
	return &spyIter{Iterator: it, kv: s}, err
}

type spyIter struct {
	engine.Iterator
	kv *spyKV
}

func (i *spyIter) SeekGE(k []byte) bool {
	i.kv.calls = append(i.kv.calls, fmt.Sprintf("Seek(%d)", DecodeKey(k)))
	return i.Iterator.SeekGE(k)
}

func (i *spyIter) Value() []byte {
	i.kv.calls = append(i.kv.calls, fmt.Sprintf("value(%d)", DecodeKey(i.Key())))
	return i.Iterator.Value()
}

func (i *spyIter) Next() bool { i.kv.calls = append(i.kv.calls, "Next"); return i.Iterator.Next() }
func (i *spyIter) Prev() bool { i.kv.calls = append(i.kv.calls, "Prev"); return i.Iterator.Prev() }

// TestSeekAsDBBench checks the range steps against db_bench's seekrandom on
// Pebble holding the even keys 0..198: both directions Seek (never
// SeekForPrev), then read a value and move 10 times, so a reverse range at
// the missing key 51 reads 52, 50, ..., 34 and a forward one 52 ... 70; at
// the end of the keys the reads stop early.
func TestSeekAsDBBench(t *testing.T) {
	ctx := context.Background()
	db, err := pebble.Driver{}.Open(ctx, engine.Target{Name: "p", Engine: "pebble"}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p := testParams(1000)
	key := make([]byte, opts(p).KeySize)
	for k := uint64(0); k < 200; k += 2 {
		EncodeKey(key, k)
		if err := db.(engine.KV).Put(key, []byte("v"), engine.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	walk := func(from, step int, n int, move string) string {
		out := []string{fmt.Sprintf("Seek(%d)", 51)}
		for i := 0; i < n; i++ {
			out = append(out, fmt.Sprintf("value(%d)", from+i*step), move)
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct {
		kind kind
		at   uint64
		rows int64
		want string
	}{
		{seekRev, 51, 10, walk(52, -2, 10, "Prev")},
		{seekFwd, 51, 10, walk(52, 2, 10, "Next")},
		{seekFwd, 191, 4, "Seek(191) value(192) Next value(194) Next value(196) Next value(198) Next"},
	} {
		spy := &spyKV{KV: db.(engine.KV)}
		w := newWorker(spy, c.kind, p, ValueData(0.5, opts(p).ValueSize), 1000, 1)
		tally, err := w.seekAt(c.at)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(spy.calls, " "); got != c.want || tally.Rows != c.rows {
			t.Errorf("kind %d at %d: %d rows, calls\n%s\nwant %d rows,\n%s", c.kind, c.at, tally.Rows, got, c.rows, c.want)
		}
	}
}
