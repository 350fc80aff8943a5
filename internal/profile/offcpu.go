package profile

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// sample is one sample of perf script's output: its process, thread,
// command name, time in nanoseconds and frames, leaf first.
type sample struct {
	pid, tid, comm string
	t              int64
	frames         []string
}

// eachSample calls fn with every sample of perf script's output (the
// fields Fold reads); fn must not keep s.frames.
func eachSample(r io.Reader, fn func(s sample)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	var cur sample
	in, skip := false, false
	flush := func() {
		if in && !skip {
			fn(cur)
		}
		in, cur.frames = false, cur.frames[:0]
	}
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if strings.TrimSpace(text) == "" {
			flush()
			continue
		}
		if text[0] == ' ' || text[0] == '\t' {
			if !in {
				return fmt.Errorf("perf script line %d: a frame outside a sample: %q", line, text)
			}
			f, err := frame(text)
			if err != nil {
				return fmt.Errorf("perf script line %d: %w", line, err)
			}
			cur.frames = append(cur.frames, f)
			continue
		}
		flush()
		m := header.FindStringSubmatch(text)
		if m == nil {
			return fmt.Errorf("perf script line %d: not a sample header (comm pid/tid time: period event:): %q", line, text)
		}
		secs, _ := strconv.ParseInt(m[4], 10, 64)
		nanos, _ := strconv.ParseInt(m[5], 10, 64)
		cur.pid, cur.tid, cur.comm, cur.t = m[2], m[3], clean(strings.TrimSpace(m[1])), secs*1e9+nanos
		if cur.comm == ":"+m[3] {
			cur.comm = ""
		}
		in, skip = true, m[3] == "-1" // -1: no task to give it to (one exiting)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read perf script output: %w", err)
	}
	flush()
	return nil
}

// schedulerFrame matches the kernel's frames that every switch passes
// through (__schedule, schedule, schedule_timeout, io_schedule, ...):
// dropped from an off-CPU stack's leaf end, so that its leaf is what the
// thread waited in (a futex, a socket read, an fsync's IO).
var schedulerFrame = regexp.MustCompile(`^(__)?(io_)?schedule(_timeout|_hrtimeout_range(_clock)?|_preempt_disabled|_idle)?$|^preempt_schedule(_common|_irq)?$|^__traceiter_sched_switch$`)

// FoldOffCPU reads `perf script` output of an off-CPU recording
// (StartOffCPU: a sample each time a thread left its CPU) and folds the
// switches in one of ws into stacks whose values are microseconds off
// CPU: the time from a switch to the same thread's next one (perf sees a
// thread leave its CPU, not come back, so this counts the run after the
// wake-up too: in a step that waits far more than it runs, mostly the
// wait), clipped at the end of the switch's window. A thread's last switch counts nothing: it may be
// its exit (a backend per connection), and a thread that never ran again
// in the window was idle, not part of the work. Scheduler frames are
// dropped from each stack's leaf end; the rest is named as Fold names it.
func FoldOffCPU(r io.Reader, ws Windows) (Stacks, error) {
	type pending struct {
		pid, comm, stack string
		t                int64
	}
	last := map[string]pending{} // by tid
	type key struct{ pid, comm, stack string }
	off := map[key]int64{}
	commOf := map[string]string{}
	add := func(p pending, until int64) {
		w, in := ws.holding(p.t)
		if !in {
			return
		}
		if w.To > 0 {
			until = min(until, w.To)
		}
		if until > p.t {
			off[key{p.pid, p.comm, p.stack}] += until - p.t
		}
	}
	err := eachSample(r, func(s sample) {
		if s.comm != "" {
			if _, ok := commOf[s.pid]; !ok {
				commOf[s.pid] = s.comm
			}
		}
		if p, ok := last[s.tid]; ok {
			add(p, s.t)
		}
		fr := s.frames
		for len(fr) > 1 && schedulerFrame.MatchString(fr[0]) {
			fr = fr[1:]
		}
		last[s.tid] = pending{pid: s.pid, comm: s.comm, stack: rootFirst(fr), t: s.t}
	})
	if err != nil {
		return nil, err
	}
	out := Stacks{}
	for k, ns := range off {
		if us := ns / 1000; us > 0 {
			out[nameOf(k.pid, k.comm, commOf)+k.stack] += us
		}
	}
	return out, nil
}
