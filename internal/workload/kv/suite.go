// Package kv is the key-value suite: RocksDB's db_bench step sequence as
// benchmark_compare.sh runs it (docs/method.md 4.1), with db_bench's key encoding
// and value generator so that in-process engines and db_bench do the same
// work. In-process engines (engine.KV) run under the runner's workers;
// db_bench itself (engine.StepRunner) receives each step as the equivalent
// db_bench invocation (BenchStep).
package kv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/workload"
)

func init() { workload.Register(Suite{}) }

// Suite is the db_bench step sequence.
type Suite struct{}

// Name returns "kv".
func (Suite) Name() string { return "kv" }

// Summary describes the suite for `benchlab list`.
// Needs says the suite runs on key-value engines.
func (Suite) Needs() engine.Kind { return engine.KindKV }

func (Suite) Summary() string {
	return "RocksDB db_bench step sequence (benchmark_compare.sh): fillseq, ranges, point reads, overwrite, reads while writing"
}

// Report groups.
const (
	GroupLoad   = "load"
	GroupRead   = "reads"
	GroupWrite  = "writes"
	GroupMixed  = "reads while writing"
	seekNexts   = 10 // fwdrange and revrange: seek, then 10 values each followed by a move (--seek_nexts=10)
	batchSize   = 10 // multireadrandom --batch_size
	drainKeys   = 100
	maxDrain    = 300 * time.Second
	stepBound   = 24 * time.Hour // MaxDuration of op-count bounded steps
	facetSuffix = ".lsm"
)

// kind is what a worker does per operation.
type kind int

const (
	fillSeq kind = iota
	overwrite
	readRandom
	seekFwd
	seekRev
	multiRead
)

// def is one step of the sequence.
type def struct {
	name, group, summary string
	write                bool
	kind                 kind
	// oneThread steps run at 1 thread whatever the experiment's counts.
	oneThread bool
	// whileWriting adds db_bench's one rate-limited writer.
	whileWriting bool
	// rw steps run for DURATION_RW (write_time), others for DURATION_RO.
	rw bool
	// bench is the db_bench form: --benchmarks and step flags.
	benchmarks []string
	flags      [][2]string
	// action steps (flush and wait) are not measured.
	action bool
}

func defs() []def {
	return []def{
		{name: "fillseq", group: GroupLoad, write: true, kind: fillSeq, oneThread: true,
			summary:    "load num_keys keys in order, 1 thread, WAL off",
			benchmarks: []string{"fillseq"},
			flags: [][2]string{{"memtablerep", "vector"}, {"allow_concurrent_memtable_write", "false"},
				{"disable_wal", "1"}, {"sync", "0"}}},
		{name: "revrange", group: GroupRead, kind: seekRev, oneThread: true,
			summary:    "reverse seek + 10 prevs over the first 100 keys, lets the load's compaction debt drain (excluded from summaries)",
			benchmarks: []string{"seekrandom"},
			flags:      [][2]string{{"seek_nexts", "10"}, {"reverse_iterator", "true"}}},
		{name: "readrandom", group: GroupRead, kind: readRandom, summary: "point reads of random keys",
			benchmarks: []string{"readrandom"}},
		{name: "fwdrange", group: GroupRead, kind: seekFwd, summary: "seek to a random key + 10 nexts",
			benchmarks: []string{"seekrandom"},
			flags:      [][2]string{{"seek_nexts", "10"}, {"reverse_iterator", "false"}}},
		{name: "multireadrandom", group: GroupRead, kind: multiRead, summary: "batched point reads, 10 keys per batch",
			benchmarks: []string{"multireadrandom"},
			flags:      [][2]string{{"multiread_batched", "true"}, {"batch_size", "10"}}},
		{name: "overwritesome", group: GroupWrite, write: true, kind: overwrite,
			summary:    "overwrite 10% of the keys at random, to randomize keys before Lmax",
			benchmarks: []string{"overwrite"}},
		{name: "waitforcompaction", action: true, summary: "flush the memtables and wait for compaction (flush_mt_l0)",
			benchmarks: []string{"levelstats", "flush", "waitforcompaction", "compact0", "waitforcompaction", "memstats", "levelstats"}},
		{name: "revrangewhilewriting", group: GroupMixed, kind: seekRev, whileWriting: true, rw: true,
			summary:    "reverse range reads while one writer writes mb_write_per_sec",
			benchmarks: []string{"seekrandomwhilewriting"},
			flags:      [][2]string{{"seek_nexts", "10"}, {"reverse_iterator", "true"}}},
		{name: "fwdrangewhilewriting", group: GroupMixed, kind: seekFwd, whileWriting: true, rw: true,
			summary:    "forward range reads while one writer writes mb_write_per_sec",
			benchmarks: []string{"seekrandomwhilewriting"},
			flags:      [][2]string{{"seek_nexts", "10"}, {"reverse_iterator", "false"}}},
		{name: "readwhilewriting", group: GroupMixed, kind: readRandom, whileWriting: true, rw: true,
			summary:    "point reads while one writer writes mb_write_per_sec",
			benchmarks: []string{"readwhilewriting"}},
		{name: "overwriteandwait", group: GroupWrite, write: true, kind: overwrite, rw: true,
			summary:    "overwrite random keys for write_time, then flush and wait for compaction",
			benchmarks: []string{"overwrite"}},
	}
}

// Tests lists the steps in run order.
func (Suite) Tests() []workload.Test {
	var out []workload.Test
	for _, d := range defs() {
		out = append(out, workload.Test{Name: d.name, Family: d.name, Group: d.group, Summary: d.summary})
	}
	return out
}

// Check validates the parameters this suite uses, naming the bad field.
func (Suite) Check(p workload.Params) error {
	o := opts(p)
	switch {
	case o.NumKeys < 0 || o.NumKeys > workload.MaxRows:
		return workload.Bad("kv.num_keys", o.NumKeys, "%d is not allowed; want 1000 to %d keys (0 takes workload.table_size)", o.NumKeys, int64(workload.MaxRows))
	case numKeys(p) < 1000:
		return workload.Bad("kv.num_keys", numKeys(p), "%d is too small; want >= 1000 (0 takes workload.table_size)", numKeys(p))
	case o.KeySize < 8 || o.KeySize > 1<<16:
		return workload.Bad("kv.key_size", o.KeySize, "%d is not allowed; want 8 to 65536 bytes (db_bench encodes the key number in 8)", o.KeySize)
	case o.ValueSize < 1 || o.ValueSize > 1<<26:
		return workload.Bad("kv.value_size", o.ValueSize, "%d is not allowed; want 1 to 67108864 bytes", o.ValueSize)
	case o.CompressionRatio <= 0 || o.CompressionRatio > 1:
		return workload.Bad("kv.compression_ratio", o.CompressionRatio, "%g is not allowed; want > 0 and <= 1", o.CompressionRatio)
	case o.MBWritePerSec <= 0:
		return workload.Bad("kv.mb_write_per_sec", o.MBWritePerSec, "%g is not allowed; want > 0", o.MBWritePerSec)
	case o.DrainTime.Duration < 0:
		return workload.Bad("kv.drain_time", o.DrainTime, "%s is not allowed; want >= 0 (0: read_time capped at 300s)", o.DrainTime)
	}
	_, err := workload.SelectTests(p.Tests, Suite{}.Tests())
	return err
}

func numKeys(p workload.Params) int64 {
	if n := opts(p).NumKeys; n > 0 {
		return n
	}
	return p.TableSize
}

// WriterRate is the operations per second of the *whilewriting writer: the
// MB/s limit (2^20 bytes, as --benchmark_write_rate_limit) over the bytes of
// one key and value.
func WriterRate(p workload.Params) float64 {
	o := opts(p)
	return o.MBWritePerSec * (1 << 20) / float64(o.KeySize+o.ValueSize)
}

func drainTime(p workload.Params) time.Duration {
	if d := opts(p).DrainTime.Duration; d > 0 {
		return d
	}
	return min(p.ReadTime, maxDrain)
}

// Plan returns the sequence of docs/method.md 4.1. fillseq always runs since
// every later step reads its keys; a selection leaves out the other
// unselected steps. After each measured step an action "<step>.lsm" logs the
// engine's LSM facts (size, write amplification, compaction bytes, stalls).
func (s Suite) Plan(p workload.Params) ([]workload.Step, error) {
	if err := s.Check(p); err != nil {
		return nil, err
	}
	sel, _ := workload.SelectTests(p.Tests, Suite{}.Tests())
	data := ValueData(opts(p).CompressionRatio, opts(p).ValueSize)
	var steps []workload.Step
	for _, d := range defs() {
		if sel != nil && !sel[d.name] && d.kind != fillSeq {
			continue
		}
		if d.action {
			steps = append(steps, waitStep(d, p))
			continue
		}
		steps = append(steps, measured(d, p, data), lsmStep(d.name))
		if d.name == "overwriteandwait" {
			w := d
			w.name, w.benchmarks = "overwriteandwait.wait", []string{"flush", "levelstats", "waitforcompaction"}
			steps = append(steps, waitStep(w, p))
		}
	}
	return steps, nil
}

func measured(d def, p workload.Params, data []byte) workload.Step {
	st := workload.Step{Name: d.name, Family: d.name, Group: d.group, Write: d.write, Warm: d.name == "revrange"}
	switch {
	case d.name == "revrange":
		st.Duration = drainTime(p)
	case d.rw:
		st.Duration = p.WriteTime
	default:
		st.Duration = p.ReadTime
	}
	if d.oneThread {
		st.Threads = []int{1}
	}
	st.Bench = func(threads int) (engine.KVStep, bool) { return BenchStepOf(d.name, p, threads) }
	n := numKeys(p)
	newWorker := func(k kind) func(ctx context.Context, db engine.DB, id, threads int, seed uint64) (workload.Worker, error) {
		return func(ctx context.Context, db engine.DB, id, threads int, seed uint64) (workload.Worker, error) {
			kv, err := kvOf(db, d.name)
			if err != nil {
				return nil, err
			}
			keyRange := n
			if d.name == "revrange" {
				keyRange = drainKeys
			}
			w := newWorker(kv, k, p, data, keyRange, seed)
			if bl, ok := kv.(engine.BatchLookuper); ok && k == readRandom {
				return &batchReader{worker: w, batch: bl}, nil
			}
			if mc, ok := kv.(engine.MemtableChooser); ok && k == fillSeq {
				// db_bench's fillseq opens the database with
				// --memtablerep=vector; the steps after it with the skip list.
				if err := mc.UseMemtable(ctx, "vector"); err != nil {
					return nil, fmt.Errorf("kv %s: %w", d.name, err)
				}
				return &vectorLoader{worker: w, mc: mc}, nil
			}
			return w, nil
		}
	}
	switch {
	case d.kind == fillSeq:
		// fillseq ends after num_keys puts (db_bench --num).
		st.MaxDuration = stepBound
		st.Roles = []workload.Role{{Name: "writer", Threads: 1, Ops: n, NewWorker: newWorker(fillSeq)}}
	case d.name == "overwritesome":
		// WRITES = NUM_KEYS/NUM_THREADS/10 per thread: 10% of the keys in all.
		st.MaxDuration = stepBound
		st.Roles = []workload.Role{{Name: "writer", Ops: n / 10, NewWorker: newWorker(overwrite)}}
	case d.whileWriting:
		st.Roles = []workload.Role{
			{Name: "reader", NewWorker: newWorker(d.kind)},
			{Name: "writer", Threads: 1, Rate: WriterRate(p), NewWorker: newWorker(overwrite)},
		}
	default:
		st.NewWorker = newWorker(d.kind)
	}
	return st
}

// errStepRunner says a db_bench target reached a step the runner measures
// with its own workers.
var errStepRunner = errors.New("the engine runs whole db_bench steps itself (engine.StepRunner); " +
	"this step has no db_bench form")

func kvOf(db engine.DB, step string) (engine.KV, error) {
	if kv, ok := db.(engine.KV); ok {
		return kv, nil
	}
	if _, ok := db.(engine.StepRunner); ok {
		return nil, fmt.Errorf("kv %s: %w", step, errStepRunner)
	}
	return nil, fmt.Errorf("kv %s: %w", step, engine.ErrNoKV)
}

// statser is what the .lsm action needs: engine.KV, or a StepRunner that
// keeps the facts of its last step.
type statser interface {
	Stats(ctx context.Context) (engine.LSMStats, error)
}

func lsmStep(name string) workload.Step {
	return workload.Step{
		Name: name + facetSuffix, Warm: true,
		Action: func(ctx context.Context, db engine.DB, log io.Writer) (workload.Tally, error) {
			s, ok := db.(statser)
			if !ok {
				return workload.Tally{}, fmt.Errorf("kv: %w", engine.ErrNoKV)
			}
			st, err := s.Stats(ctx)
			if err != nil {
				return workload.Tally{}, fmt.Errorf("kv: LSM facts after %s: %w", name, err)
			}
			fmt.Fprintf(log, "%s: %s\n", name, FormatFacts(st))
			return workload.Tally{Facts: st.Facts()}, nil
		},
	}
}

// FormatFacts renders LSM facts as one line of key=value pairs in a fixed order.
func FormatFacts(s engine.LSMStats) string {
	f := s.Facts()
	keys := make([]string, 0, len(f))
	for k := range f {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k + "=" + strconv.FormatFloat(f[k], 'g', 6, 64))
	}
	return b.String()
}

// waitStep is an unmeasured flush + wait for compaction. For a StepRunner it
// runs d's db_bench benchmarks; an in-process engine does the same
// benchmarks in order: flush, waitforcompaction, compact0 (L0 into the next
// level, where the engine can do it alone; otherwise the log says it was
// skipped), and the stats ones as a line of LSM facts.
func waitStep(d def, p workload.Params) workload.Step {
	return workload.Step{
		Name: d.name, Warm: true,
		Action: func(ctx context.Context, db engine.DB, log io.Writer) (workload.Tally, error) {
			if sr, ok := db.(engine.StepRunner); ok {
				bs, _ := BenchStepOf(d.name, p, 1)
				_, err := sr.RunStep(ctx, bs)
				return workload.Tally{}, err
			}
			kv, err := kvOf(db, d.name)
			if err != nil {
				return workload.Tally{}, err
			}
			start := time.Now()
			var t workload.Tally
			for _, b := range d.benchmarks {
				if err := runMeta(ctx, kv, b, log); err != nil {
					return t, fmt.Errorf("%s: %s: %w", d.name, b, err)
				}
				if _, ok := kv.(engine.L0Compactor); b == "compact0" && !ok && !slices.Contains(t.Notes, compact0Note(d.name)) {
					t.Notes = append(t.Notes, compact0Note(d.name))
				}
			}
			fmt.Fprintf(log, "%s: %s in %s\n", d.name, strings.Join(d.benchmarks, ","), time.Since(start).Round(time.Millisecond))
			return t, nil
		},
	}
}

// compact0Note says what an engine without engine.L0Compactor (Pebble) did
// differently from db_bench in the flush-and-wait step named step.
func compact0Note(step string) string {
	return step + ": compact0 left out: the engine cannot compact level 0 alone into the next level as db_bench does " +
		"(Pebble's Compact rewrites a key range through every level), so level 0 may keep files db_bench's LSM would not have"
}

// runMeta does one of db_bench's meta benchmarks on an in-process engine.
func runMeta(ctx context.Context, kv engine.KV, b string, log io.Writer) error {
	switch b {
	case "flush":
		return kv.Flush(ctx)
	case "waitforcompaction":
		return kv.WaitForCompactions(ctx)
	case "compact0":
		c, ok := kv.(engine.L0Compactor)
		if !ok {
			fmt.Fprintf(log, "compact0: skipped, the engine cannot compact L0 alone into the next level\n")
			return nil
		}
		files, level, err := c.CompactL0(ctx)
		if err != nil {
			return err
		}
		if files == 0 {
			fmt.Fprintf(log, "compact0: nothing to do (no L0 files, or no data below L0)\n")
		} else {
			fmt.Fprintf(log, "compact0: %d L0 files into L%d\n", files, level)
		}
		return nil
	case "memstats":
		return nil // the engines keep no memtable stats to print
	case "levelstats":
		st, err := kv.Stats(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(log, "%s: %s\n", b, FormatFacts(st))
		return nil
	}
	return fmt.Errorf("no in-process form of db_bench's %s", b)
}

// BenchStepOf returns step name at the given thread count in db_bench's
// terms: the benchmarks and the flags of docs/method.md 4.1 and 4.2 that depend
// on the workload (the engine adds its own settings). ok is false for an
// unknown step.
func BenchStepOf(name string, p workload.Params, threads int) (engine.KVStep, bool) {
	var d def
	found := false
	for _, c := range defs() {
		if c.name == name {
			d, found = c, true
		}
	}
	if name == "overwriteandwait.wait" {
		d, found = def{name: name, action: true, benchmarks: []string{"flush", "levelstats", "waitforcompaction"}}, true
	}
	if !found {
		return engine.KVStep{}, false
	}
	n := numKeys(p)
	o := opts(p)
	s := engine.KVStep{Name: name, Benchmarks: d.benchmarks, Threads: threads}
	if d.oneThread || d.action {
		s.Threads = 1
	}
	num := n
	switch {
	case d.action:
	case d.name == "revrange":
		s.Duration, num = drainTime(p), drainKeys
	case d.kind == fillSeq:
	case d.name == "overwritesome":
		s.Flags = append(s.Flags, [2]string{"writes", strconv.FormatInt(max(1, n/int64(s.Threads)/10), 10)})
	case d.rw:
		s.Duration = p.WriteTime
	default:
		s.Duration = p.ReadTime
	}
	s.Flags = append(s.Flags,
		[2]string{"num", strconv.FormatInt(num, 10)},
		[2]string{"key_size", strconv.Itoa(o.KeySize)},
		[2]string{"value_size", strconv.Itoa(o.ValueSize)},
		[2]string{"compression_ratio", strconv.FormatFloat(o.CompressionRatio, 'g', -1, 64)},
		[2]string{"benchmark_write_rate_limit", strconv.FormatInt(int64(o.MBWritePerSec*(1<<20)), 10)},
	)
	if !d.action && d.kind != fillSeq {
		s.Flags = append(s.Flags, [2]string{"sync", "0"})
	}
	s.Flags = append(s.Flags, d.flags...)
	if !d.whileWriting {
		// The rate limit applies to the *whilewriting writer only.
		s.Flags = slices.DeleteFunc(s.Flags, func(f [2]string) bool { return f[0] == "benchmark_write_rate_limit" })
	}
	return s, true
}
