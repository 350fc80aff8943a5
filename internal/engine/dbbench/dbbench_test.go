package dbbench_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/engine/dbbench"
	"benchlab/internal/server/servertest"
	"benchlab/internal/workload"
	"benchlab/internal/workload/kv"
)

// TestDebianDBBench runs the kv sequence through Debian's db_bench (package
// rocksdb-tools) at a tiny size and checks that every step's output parses.
func TestDebianDBBench(t *testing.T) {
	if _, err := exec.LookPath("db_bench"); err != nil {
		t.Skip("db_bench not on PATH (apt-get install rocksdb-tools)")
	}
	ctx := context.Background()
	db, err := dbbench.Driver{}.Open(ctx, engine.Target{Settings: map[string]string{
		"cache_type": "hyper_clock_cache", "write_buffer_size": "1048576", "max_bytes_for_level_multiplier": "32",
		"cache_index_and_filter_blocks": "true"}}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	info, _ := db.Info(ctx)
	if !strings.HasPrefix(info.Version, "7.") && !strings.HasPrefix(info.Version, "8.") && !strings.HasPrefix(info.Version, "9.") {
		t.Fatalf("version %q", info.Version)
	}
	sr := db.(engine.StepRunner)
	p := workload.Params{ReadTime: time.Second, WriteTime: time.Second, Options: &kv.Options{NumKeys: 5000, KeySize: 20,
		ValueSize: 400, CompressionRatio: 0.5, MBWritePerSec: 1, DrainTime: workload.Duration{Duration: time.Second}}}
	for _, name := range []string{"fillseq", "readrandom", "fwdrange", "multireadrandom", "overwritesome",
		"waitforcompaction", "readwhilewriting", "overwriteandwait"} {
		s, ok := kv.BenchStepOf(name, p, 2)
		if !ok {
			t.Fatalf("no db_bench form of %s", name)
		}
		r, err := sr.RunStep(ctx, s)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if name == "waitforcompaction" {
			continue
		}
		if r.OpsPerSec <= 0 || r.Ops <= 0 || r.P50 <= 0 || r.P99 < r.P50 || r.Max < r.P99 {
			t.Fatalf("%s: parsed %+v", name, r)
		}
		t.Logf("%-18s %9.0f ops/s p50 %v p99 %v; LSM %+v", name, r.OpsPerSec, r.P50, r.P99, r.LSM)
	}
	st, _ := db.(interface {
		Stats(context.Context) (engine.LSMStats, error)
	}).Stats(ctx)
	if st.SizeBytes <= 0 || st.IngestBytes <= 0 || st.L0Files < 0 || st.Compactions < 0 {
		t.Fatalf("LSM facts: %+v", st)
	}
}

func TestBadBinary(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	script := filepath.Join(dir, "fake_db_bench")
	os.WriteFile(script, []byte("#!/bin/sh\necho 'db_bench version 9.9.9'\n[ \"$1\" = --version ] && exit 0\necho 'line one'\necho 'Invalid argument: boom'\nexit 1\n"), 0o755)
	noexec := filepath.Join(dir, "noexec")
	os.WriteFile(noexec, []byte("x"), 0o644)
	for _, c := range []struct{ path, want string }{
		{filepath.Join(dir, "missing"), "no such file"},
		{noexec, "permission denied"},
	} {
		_, err := dbbench.Driver{}.Open(ctx, engine.Target{Settings: map[string]string{"path": c.path}}, dir)
		if err == nil || !strings.Contains(err.Error(), "path") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want the path setting and %q", c.path, err, c.want)
		}
	}
	db, err := dbbench.Driver{}.Open(ctx, engine.Target{Settings: map[string]string{"path": script}}, dir)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := kv.BenchStepOf("readrandom", workload.Params{Options: &kv.Options{NumKeys: 1000, KeySize: 20, ValueSize: 400, CompressionRatio: 0.5, MBWritePerSec: 1}}, 1)
	_, err = db.(engine.StepRunner).RunStep(ctx, s)
	if err == nil || !strings.Contains(err.Error(), "Invalid argument: boom") || !strings.Contains(err.Error(), "exit status 1") {
		t.Fatalf("got %v, want the exit status and the last lines of output", err)
	}
	if err := engine.CheckSettings(dbbench.Driver{}, map[string]string{"cache_type": "arc"}); err == nil ||
		!strings.Contains(err.Error(), "cache_type") {
		t.Fatalf("bad cache_type: %v", err)
	}
}

func TestParseUnparseable(t *testing.T) {
	if _, _, err := dbbench.Parse("RocksDB: version 7.8.3\nsomething else\n"); err == nil {
		t.Fatal("output without a result line parsed")
	}
}

// TestArgsCachedIndexAndFilters checks benchmark.sh's flags that follow
// from others: leveled compaction pins L0's index and filter blocks, and
// caching index and filter blocks gives them half of the cache at high
// priority (cache_high_pri_pool_ratio=0.5, cache_low_pri_pool_ratio=0).
func TestArgsCachedIndexAndFilters(t *testing.T) {
	if _, err := exec.LookPath("db_bench"); err != nil {
		t.Skip("db_bench not on PATH (apt-get install rocksdb-tools)")
	}
	ctx := context.Background()
	s, _ := kv.BenchStepOf("readrandom", workload.Params{Options: &kv.Options{NumKeys: 1000, KeySize: 20, ValueSize: 400, CompressionRatio: 0.5, MBWritePerSec: 1}}, 1)
	for _, c := range []struct {
		settings map[string]string
		want     []string
		not      []string
	}{
		{map[string]string{"cache_index_and_filter_blocks": "true"},
			[]string{"--cache_index_and_filter_blocks=true", "--pin_l0_filter_and_index_blocks_in_cache=1",
				"--cache_high_pri_pool_ratio=0.5", "--cache_low_pri_pool_ratio=0"}, nil},
		{map[string]string{}, []string{"--pin_l0_filter_and_index_blocks_in_cache=1"},
			[]string{"--cache_high_pri_pool_ratio=0.5"}},
		{map[string]string{"compaction_style": "1"}, nil,
			[]string{"--pin_l0_filter_and_index_blocks_in_cache=1", "--cache_high_pri_pool_ratio=0.5"}},
	} {
		db, err := dbbench.Driver{}.Open(ctx, engine.Target{Settings: c.settings}, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		args := strings.Join(db.(*dbbench.DB).Args(s, false), " ")
		for _, w := range c.want {
			if !strings.Contains(args, w) {
				t.Errorf("%v: args lack %s:\n%s", c.settings, w, args)
			}
		}
		for _, w := range c.not {
			if strings.Contains(args, w) {
				t.Errorf("%v: args have %s:\n%s", c.settings, w, args)
			}
		}
	}
}

// TestStoppedAtItsBound runs Debian's db_bench on steps it cannot finish in
// time: a 1 s readrandom allowed 1 ns past its second (db_bench's own
// start alone takes longer), and a fill of a billion keys whose run is
// interrupted once it has reported progress. Each step fails saying why,
// with the operations db_bench reported so far and its time kept, and no
// db_bench process is left (its process group got SIGTERM).
func TestStoppedAtItsBound(t *testing.T) {
	if _, err := exec.LookPath("db_bench"); err != nil {
		t.Skip("db_bench not on PATH (apt-get install rocksdb-tools)")
	}
	dir := t.TempDir()
	db, err := dbbench.Driver{}.Open(context.Background(), engine.Target{Settings: map[string]string{"write_buffer_size": "1048576"}}, dir)
	if err != nil {
		t.Fatal(err)
	}
	sr := db.(engine.StepRunner)
	fill := engine.KVStep{Name: "fill", Benchmarks: []string{"fillrandom"}, Threads: 1,
		Flags: [][2]string{{"num", "1000000000"}, {"key_size", "20"}, {"value_size", "100"}}}

	// Interrupted: the context ends once db_bench has printed progress.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		guard := time.After(2 * time.Minute) // a hang guard, not a window
		for {
			select {
			case <-guard:
				cancel()
				return
			case <-time.After(20 * time.Millisecond):
			}
			if procsOf(dir) > 0 && progressSeen(dir) {
				cancel()
				return
			}
		}
	}()
	r, err := sr.RunStep(ctx, fill)
	if err == nil || !strings.Contains(err.Error(), "interrupted") || !errors.Is(err, context.Canceled) ||
		!strings.Contains(err.Error(), "process group") {
		t.Errorf("interrupted fill: %v; want an interruption that names the process group", err)
	}
	if r.Ops <= 0 || r.Seconds <= 0 {
		t.Errorf("interrupted fill kept %d ops in %.3f s; want the progress so far", r.Ops, r.Seconds)
	}
	if n := procsOf(dir); n > 0 {
		t.Errorf("%d db_bench process(es) outlived the interrupted step", n)
	}

	// Overrun: a 1 s step allowed 1 ns past its time.
	read := engine.KVStep{Name: "read", Benchmarks: []string{"readrandom"}, Threads: 1, Duration: time.Second,
		Overrun: time.Nanosecond, Flags: [][2]string{{"num", "1000"}, {"key_size", "20"}, {"value_size", "100"}}}
	r, err = sr.RunStep(context.Background(), read)
	if !errors.Is(err, dbbench.ErrOverran) || !strings.Contains(err.Error(), "db_bench read") ||
		!strings.Contains(err.Error(), "SIGTERM") {
		t.Errorf("overrun read: %v; want db_bench read stopped at its bound with SIGTERM", err)
	}
	if r.Seconds < time.Second.Seconds() {
		t.Errorf("overrun read kept %.3f s; want its time until it was stopped, past its 1 s", r.Seconds)
	}
	if n := procsOf(dir); n > 0 {
		t.Errorf("%d db_bench process(es) outlived the overrun step", n)
	}
}

// procsOf counts the processes whose command line names dir.
func procsOf(dir string) int { return len(servertest.Procs(dir)) }

// progressSeen reports whether db_bench has flushed a table file under
// dir: it has done thousands of operations, and printed progress lines.
func progressSeen(dir string) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".sst") {
			return true
		}
	}
	return false
}
