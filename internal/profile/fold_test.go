package profile

import (
	"strings"
	"testing"
)

// script is hand-written `perf script -F comm,pid,tid,time,period,event,ip,
// sym,dso --ns` output: eight samples, one before the window and one after
// it, one with a command name holding a space, one whose symbols perf could
// not resolve, two of threads perf saw start unnamed (":tid"), one of a
// process with a named thread.
const script = `postgres 4242/4242  100.000000000:   10101010 cpu-clock: 
	ffffffff821ed4e6 do_syscall_64 ([kernel.kallsyms])
	    55d0c0a1b2c3 PostgresMain (/usr/lib/postgresql/15/bin/postgres)

postgres 4242/4242  101.000000000:   10101010 cpu-clock: 
	    55d0c0a1b000 hash_search;x (/usr/lib/postgresql/15/bin/postgres)
	    55d0c0a1b2c3 PostgresMain (/usr/lib/postgresql/15/bin/postgres)
	    55d0c0a10000 main (/usr/lib/postgresql/15/bin/postgres)

postgres 4242/4242  101.500000000:   10101010 cpu-clock: 
	    55d0c0a1b000 hash_search;x (/usr/lib/postgresql/15/bin/postgres)
	    55d0c0a1b2c3 PostgresMain (/usr/lib/postgresql/15/bin/postgres)
	    55d0c0a10000 main (/usr/lib/postgresql/15/bin/postgres)

bg worker 77/78  101.700000000:   10101010 cpu-clock: 
	           f8350 [unknown] (/usr/lib/x86_64-linux-gnu/libc.so.6)
	            5246 [unknown] ([unknown])
	  7f00000000 compare(int, int) const (/opt/lib/libfoo.so)

benchlab 90/90  101.800000000:   10101010 cpu-clock: 
	            5246 main.work (/usr/bin/benchlab)

:91 90/91  101.900000000:   10101010 cpu-clock: 
	            5246 main.work (/usr/bin/benchlab)

:93 92/93  102.000000000:   10101010 cpu-clock: 
	            5246 main.work (/usr/bin/benchlab)

postgres 4242/4242  103.000000000:   10101010 cpu-clock: 
	    55d0c0a1b000 memcpy (/usr/lib/x86_64-linux-gnu/libc.so.6)
`

func TestFold(t *testing.T) {
	st, err := Fold(strings.NewReader(script), Span(101e9, 103e9))
	if err != nil {
		t.Fatal(err)
	}
	got := string(st.Text())
	want := "[pid 92];main.work 1\n" +
		"benchlab;main.work 2\n" +
		"bg worker;compare(int, int) const;[unknown];[libc.so.6] 1\n" +
		"postgres;main;PostgresMain;hash_search:x 2\n"
	if got != want {
		t.Errorf("folded:\n%s\nwant:\n%s", got, want)
	}
	all, err := Fold(strings.NewReader(script), Span(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if n := all.Samples(); n != 8 {
		t.Errorf("all samples = %d, want 8", n)
	}
	self := all.Self()
	if self["hash_search:x"] != 2 || self["do_syscall_64"] != 1 || self["memcpy"] != 1 || self["[libc.so.6]"] != 1 {
		t.Errorf("self = %v", self)
	}
	back, err := Parse(all.Text())
	if err != nil {
		t.Fatal(err)
	}
	if string(back.Text()) != string(all.Text()) {
		t.Errorf("parse(text) changed the stacks:\n%s\nvs\n%s", back.Text(), all.Text())
	}
}

func TestFoldBadInput(t *testing.T) {
	for _, in := range []string{
		"\tffff foo (bar)\n",                                 // a frame before any header
		"not a header at all\n",                              // no pid/tid, no time
		"p 1/1 1.000000000: 1 cpu-clock:\n\tzzz foo (bar)\n", // ip not hex
	} {
		if _, err := Fold(strings.NewReader(in), Span(0, 0)); err == nil {
			t.Errorf("Fold(%q): no error", in)
		}
	}
	for _, in := range []string{"a;b\n", "a;b x\n", "a;b -1\n"} {
		if _, err := Parse([]byte(in)); err == nil {
			t.Errorf("Parse(%q): no error", in)
		}
	}
}

// TestSelfInclusive: a function's self samples are those where it is the
// leaf; its inclusive samples those where it is on the stack, once per
// sample even when it recurses.
func TestSelfInclusive(t *testing.T) {
	st, err := Parse([]byte("pg;main;exec;scan 5\npg;main;exec 2\npg;main;exec;exec;sort 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	self, incl := st.Self(), st.Inclusive()
	for f, want := range map[string][2]int64{"pg": {0, 10}, "main": {0, 10}, "exec": {2, 10}, "scan": {5, 5}, "sort": {3, 3}} {
		if self[f] != want[0] || incl[f] != want[1] {
			t.Errorf("%s: self %d inclusive %d, want %d and %d", f, self[f], incl[f], want[0], want[1])
		}
	}
}

// offScript is hand-written off-CPU output: a backend leaves its CPU in an
// fsync at 10.000 s and next at 10.004 s in a socket read; a second thread
// leaves once at 10.001 s and never again (a last switch counts nothing);
// a switch before the window is not counted, and the one at 10.010 s is
// the backend's last. A switch perf could not give a task (-1/-1) is
// skipped.
const offScript = `postgres 50/50  9.000000000:          1 sched:sched_switch: 
	ffffffff821facd8 __schedule ([kernel.kallsyms])
	ffffffff821fb643 schedule ([kernel.kallsyms])
	    55d0c0a1b2c3 PostgresMain (/usr/lib/postgresql/15/bin/postgres)

postgres 50/50  10.000000000:          1 sched:sched_switch: 
	ffffffff821facd8 __schedule ([kernel.kallsyms])
	ffffffff821fb643 schedule ([kernel.kallsyms])
	ffffffff821fb70f io_schedule ([kernel.kallsyms])
	ffffffff81afb813 blkdev_issue_flush ([kernel.kallsyms])
	    55d0c0a1b000 XLogFlush (/usr/lib/postgresql/15/bin/postgres)

:51 50/51  10.001000000:          1 sched:sched_switch: 
	ffffffff821facd8 __schedule ([kernel.kallsyms])
	    55d0c0a1b001 WaitLatch (/usr/lib/postgresql/15/bin/postgres)

:-1    -1/-1    10.002000000:          1 sched:sched_switch: 
	ffffffff821facd8 __schedule ([kernel.kallsyms])

postgres 50/50  10.004000000:          1 sched:sched_switch: 
	ffffffff821facd8 __schedule ([kernel.kallsyms])
	ffffffff821fb643 schedule ([kernel.kallsyms])
	ffffffff81000000 sock_recvmsg ([kernel.kallsyms])
	    55d0c0a1b002 secure_read (/usr/lib/postgresql/15/bin/postgres)

postgres 50/50  10.010000000:          1 sched:sched_switch: 
	ffffffff821facd8 __schedule ([kernel.kallsyms])
`

// TestFoldOffCPU: each switch in the window counts the microseconds to
// the thread's next switch, clipped at the window's end, under its stack
// without the scheduler's frames.
func TestFoldOffCPU(t *testing.T) {
	st, err := FoldOffCPU(strings.NewReader(offScript), Span(9_500_000_000, 10_007_000_000))
	if err != nil {
		t.Fatal(err)
	}
	want := Stacks{
		"postgres;XLogFlush;blkdev_issue_flush": 4000, // 10.000 -> 10.004
		"postgres;secure_read;sock_recvmsg":     3000, // 10.004 -> 10.010, clipped at 10.007
	}
	if len(st) != len(want) {
		t.Errorf("stacks %v, want %v", st, want)
	}
	for k, v := range want {
		if st[k] != v {
			t.Errorf("%s: %d us, want %d (all: %v)", k, st[k], v, st)
		}
	}
}

// TestFoldWindows: with several windows (one target's turns of an
// interleaved step) only the samples inside one count, and an off-CPU
// switch is clipped at the end of its own window, not the last one's.
func TestFoldWindows(t *testing.T) {
	st, err := Fold(strings.NewReader(script), Windows{{100.9e9, 101.2e9}, {101.75e9, 101.95e9}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(st.Text()), "benchlab;main.work 2\npostgres;main;PostgresMain;hash_search:x 1\n"; got != want {
		t.Errorf("folded:\n%s\nwant:\n%s", got, want)
	}
	off, err := FoldOffCPU(strings.NewReader(offScript), Windows{{9_999_000_000, 10_002_000_000}, {10_003_500_000, 10_005_000_000}})
	if err != nil {
		t.Fatal(err)
	}
	want := Stacks{
		"postgres;XLogFlush;blkdev_issue_flush": 2000, // 10.000 -> 10.004, clipped at 10.002
		"postgres;secure_read;sock_recvmsg":     1000, // 10.004 -> 10.010, clipped at 10.005
	}
	if len(off) != len(want) || off["postgres;XLogFlush;blkdev_issue_flush"] != 2000 || off["postgres;secure_read;sock_recvmsg"] != 1000 {
		t.Errorf("off-CPU stacks %v, want %v", off, want)
	}
}
