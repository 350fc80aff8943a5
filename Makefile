# benchlab: build, quick start, tests and benchmarks.
GO      ?= go
COMMIT  := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X benchlab/internal/cli.commit=$(COMMIT)
BIN     := bin/benchlab

.PHONY: build quickstart test bench aa clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/benchlab

# Runs the whole sysbench suite on two SQLite configurations (smoke preset)
# and writes quickstart-report.md.
quickstart: build
	./$(BIN) quickstart

# Every test: vet, then unit and integration tests against real engines.
test:
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 25m ./...

# Harness overhead and other benchmarks (numbers, not pass/fail).
bench:
	$(GO) test -run '^$$' -bench . -benchtime 3s ./internal/runner/

# A/A false-alarm rate: two identical targets, 5 repeats; prints the verdict counts.
aa: build
	./$(BIN) run examples/aa-sqlite.toml --store aa.db > /dev/null
	./$(BIN) compare --store aa.db | tail -1

clean:
	rm -rf bin
