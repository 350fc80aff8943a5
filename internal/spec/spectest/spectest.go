// Package spectest holds spec fragments that tests of several packages
// share: experiments small enough for a test, with a regression planted in
// them.
package spectest

import "fmt"

// SyncTargets are two SQLite targets in WAL mode that differ only in
// synchronous: "off" (the base, no fsync) and "full" (an fsync per
// commit), a regression on every writing test and none on the reads.
const SyncTargets = `[[target]]
name = "off"
engine = "sqlite"
[target.settings]
journal_mode = "wal"
synchronous = "off"
[[target]]
name = "full"
engine = "sqlite"
[target.settings]
journal_mode = "wal"
synchronous = "full"
`

// ShortSteps are [workload] fields for short verdict tests: 2,000 rows,
// one thread, 300 ms steps after a 100 ms warm-up, no waits.
const ShortSteps = `table_size = 2000
threads = [1]
read_time = "300ms"
write_time = "300ms"
warmup = "100ms"
postwrite_wait = "0s"
report_interval = "0s"
`

// Target is the lines of a [[target]] table naming a target of engine; a
// test adds lines of its own (a dsn, settings) after them.
func Target(name, engine string) string {
	return fmt.Sprintf("name = %q\nengine = %q\n", name, engine)
}

// CommandHead starts an experiment file named name for the command suite
// on one target (its [[target]] table's lines, as Target gives them): each
// measured step runs readTime on threads threads, with no warm-up and no
// live lines. The suite's [workload.command] and steps follow it.
func CommandHead(name, target string, threads int, readTime string) string {
	return fmt.Sprintf(`name = %q
[[target]]
%s[workload]
suite = "command"
threads = [%d]
read_time = %q
warmup = "0s"
report_interval = "0s"
`, name, target, threads, readTime)
}
