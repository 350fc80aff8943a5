# benchlab: build, quick start, tests and benchmarks.
GO      ?= go
COMMIT  := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X benchlab/internal/cli.commit=$(COMMIT)
BIN     := bin/benchlab
# Embedded C engines (SQLite, RocksDB) keep frame pointers, so that perf's
# stacks of an in-process engine reach from its C functions back to the Go
# caller (docs/measurement.md#cpu-profiles).
CGO_CFLAGS ?= -O2 -g -fno-omit-frame-pointer
CGO_CXXFLAGS ?= -O2 -g -fno-omit-frame-pointer
export CGO_CFLAGS CGO_CXXFLAGS

.PHONY: build quickstart deps test test-slow load-check bench lab-scale aa calibrate clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/benchlab

# Runs the whole sysbench suite on two SQLite configurations (smoke preset)
# and writes quickstart-report.md.
quickstart: build
	./$(BIN) quickstart

# System packages the tests need (servers, sysbench, RocksDB, Chromium);
# installs the missing ones when run as root.
deps:
	scripts/install-deps.sh

# Every test: vet, then unit and integration tests against real engines,
# including in-process RocksDB (build tag rocksdb) when its library is there.
# Tests go through internal/testrun: it prints the output of failed tests,
# the 10 slowest tests and each package's time, and reruns a failed test
# once: one that then passes is named FLAKY (and appended to .flakes.log),
# one that fails again fails the build.
# The second vet is the portable build: Linux-only features (the fast
# client path's sockets, /proc, cgroups, perf) sit in _linux.go files and
# SQLite in files built with cgo, each with a counterpart that says so.
TESTRUN := $(GO) run ./internal/testrun -flakes .flakes.log --
test: deps
	$(GO) vet ./...
	GOOS=darwin CGO_ENABLED=0 $(GO) vet ./...
	$(TESTRUN) -count=1 -timeout 25m ./...
	if [ -e /usr/include/rocksdb/c.h ]; then $(TESTRUN) -count=1 -tags rocksdb ./internal/engine/rocksdb/ ./internal/workload/kv/; \
	else echo "RocksDB library missing: in-process RocksDB tests not run (make deps as root installs it)"; fi
	$(MAKE) fuzz

# The whole suite on a clean clone of HEAD while two busy loops keep both
# CPUs busy, LOADROUNDS times in a row (3 by default): per-package times
# and failures of each round, and a quiet round first for comparison
# unless LOADQUIET=0. Long (about 4 suites); a check of the tests, not of benchlab.
LOADROUNDS ?= 3
LOADQUIET ?= 1
load-check:
	scripts/load-check.sh $(LOADROUNDS) $(LOADQUIET)

# Every fuzz target (parsers of outside text: specs, run flags, DSNs,
# stored manifests, db_bench output, /proc files) for a count of inputs
# sized to about 10 s each on this VM (pkg:target:count); a panic or failed
# property fails the build and leaves the input in testdata/fuzz. Counts,
# not durations: Go 1.26's fuzz coordinator can fail a duration-bounded run
# with "context deadline exceeded" at its end, with no failing input
# (golang/go#75804, fixed in Go 1.27); a count has no deadline to race.
# FUZZSCALE multiplies every count.
FUZZSCALE ?= 1
FUZZ := ./internal/spec:FuzzParse:1000 ./internal/dsn:FuzzParseDSN:300000 ./internal/store:FuzzParseManifest:50000 \
	./internal/engine/dbbench:FuzzParse:60000 ./internal/meter:FuzzProc:100000 ./internal/cli:FuzzRunFlags:30000 \
	./internal/importer:FuzzParse:40000
fuzz:
	@for t in $(FUZZ); do pkg=$${t%%:*}; rest=$${t#*:}; fn=$${rest%%:*}; n=$$(( $${rest##*:} * $(FUZZSCALE) )); \
	  echo "fuzz $$pkg $$fn ($${n} inputs)"; \
	  $(GO) test -run '^$$' -fuzz "^$$fn$$" -fuzztime $${n}x $$pkg || exit 1; done

# Harness overhead and other benchmarks (numbers, not pass/fail).
# Per-operation cost and allocations of each suite's hot path (sysbench point
# query and insert, kv get, TPC-C New-Order, custom read, insert batch) on
# SQLite/Pebble, and the point query and New-Order on PostgreSQL and MariaDB
# servers the benchmarks start; the runner's own loop allocates nothing per operation
# (TestRunnerAllocatesNothingPerOp, BenchmarkRunnerLoop). LongHistory times report,
# compare and runs over a store of 10,000 runs; HTML renders a 3 x 32 x 2
# report against its 2 s budget (of_budget).
bench:
	$(GO) test -run '^$$' -bench . -benchtime 3s ./internal/runner/
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 5000x ./internal/workload/...
	$(GO) test -run '^$$' -bench LongHistory -benchtime 1x ./internal/cli/
	$(GO) test -run '^$$' -bench HTML -benchtime 3x ./internal/report/

# Tests too long for the main suite's 15 minutes: TPC-C on FerretDB over
# SQLite (about 8 minutes).
test-slow:
	$(TESTRUN) -count=1 -tags slow -timeout 30m -run 'TestSQLiteNormalized' ./internal/workload/tpcc/tpccdoc/

# What one PostgreSQL store costs a lab: 1, 2, 4 and 8 workers on this host
# running short SQLite jobs (jobs per minute, queue latency, store load).
lab-scale:
	$(GO) test -run '^$$' -bench LabScale -benchtime 1x -timeout 30m ./internal/fleet/

# benchlab's client cost against sysbench's (point query) and sysbench-tpcc's
# (TPC-C) on PostgreSQL and MariaDB servers it starts on 127.0.0.1: alternating
# rounds, QPS and process CPU over the same steady-state window. Long (about
# 40 min with the defaults); BENCH_CLIENT_ARGS="--rounds 3 --secs 5 --threads 4"
# for a short look; TPC-C needs TPCC_LUA_DIR (a sysbench-tpcc checkout), or
# BENCH_CLIENT_ARGS="--workload point". A benchmark that prints a table, not a test.
bench-client: build
	python3 scripts/client-vs-sysbench.py $(BENCH_CLIENT_ARGS)

# benchlab's resident memory over a long 64-thread SQLite point-query step,
# printed every minute with the growth per hour (compressed time: 30 minutes
# by default; BENCH_MEMORY_ARGS="--minutes 3 --sample 15" for a short form).
bench-memory: build
	python3 scripts/rss-long-run.py $(BENCH_MEMORY_ARGS)

# A/A false-alarm rate: two identical targets, 5 repeats; prints the verdict counts.
aa: build
	./$(BIN) run examples/aa-sqlite.toml --store aa.db > /dev/null
	./$(BIN) compare --store aa.db | tail -1

# Measured error rates of the verdicts on this machine (A/A false alarms,
# planted 10% and 30% regressions, the gate): the quick size, a few
# minutes. `./bin/benchlab calibrate` alone runs the full size (~10 min on a quiet 2-CPU VM).
calibrate: build
	./$(BIN) calibrate --quick

clean:
	rm -rf bin
