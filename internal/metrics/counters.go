package metrics

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// CounterEvent is one perf event benchlab counts per operation: the
// hardware counters that explain a change in CPU per operation (more
// instructions: code bloat; more cycles per instruction: cache misses,
// branch misses) and two software ones that tell placement and memory
// churn (docs/method.md 3).
type CounterEvent struct {
	// Name is perf's name of the event (perf stat -e NAME).
	Name string
	// Hardware is true for events the CPU's PMU counts; virtual machines
	// often expose none.
	Hardware bool
	typ      uint32
	config   uint64
}

// CounterEvents are the events counted, in report order.
var CounterEvents = []CounterEvent{
	{Name: "instructions", Hardware: true, typ: unix.PERF_TYPE_HARDWARE, config: unix.PERF_COUNT_HW_INSTRUCTIONS},
	{Name: "cycles", Hardware: true, typ: unix.PERF_TYPE_HARDWARE, config: unix.PERF_COUNT_HW_CPU_CYCLES},
	{Name: "cache-misses", Hardware: true, typ: unix.PERF_TYPE_HARDWARE, config: unix.PERF_COUNT_HW_CACHE_MISSES},
	{Name: "branch-misses", Hardware: true, typ: unix.PERF_TYPE_HARDWARE, config: unix.PERF_COUNT_HW_BRANCH_MISSES},
	{Name: "cpu-migrations", typ: unix.PERF_TYPE_SOFTWARE, config: unix.PERF_COUNT_SW_CPU_MIGRATIONS},
	{Name: "page-faults", typ: unix.PERF_TYPE_SOFTWARE, config: unix.PERF_COUNT_SW_PAGE_FAULTS},
	// task-clock is the CPU time of the counted threads in nanoseconds:
	// cycles over it is the clock rate they ran at (GHz).
	{Name: "task-clock", typ: unix.PERF_TYPE_SOFTWARE, config: unix.PERF_COUNT_SW_TASK_CLOCK},
}

// Counters counts CounterEvents over a fixed set of threads with
// perf_event_open, one counter per thread and event, opened when the set
// is made and read whenever asked: the figures of a window are the
// difference of two reads, taken at the same moments as the /proc
// samples. The counters are inherited: threads and processes that a
// counted thread starts later are counted too (the kernel adds their
// counts into each read); a thread that ends keeps its final count.
type Counters struct {
	fds map[string][]int
	// Unsupported maps each event that could be counted on no thread to
	// why ("not supported": the kernel or the machine has no such counter,
	// typical of virtual machines for the hardware events).
	Unsupported map[string]string
	// Threads is the number of threads counted.
	Threads int
}

// CounterValues are event counts by event name, scaled for the time the
// kernel multiplexed a counter out.
type CounterValues map[string]float64

// OpenCounters opens every event of CounterEvents on each thread of tids.
// An event that could not be opened on one of them is counted on none and
// listed in Unsupported with the reason; threads that vanish while being
// opened are skipped.
func OpenCounters(tids []int) *Counters {
	c := &Counters{fds: map[string][]int{}, Unsupported: map[string]string{}}
	counted := map[int]bool{}
	for _, ev := range CounterEvents {
		var why error
		for _, tid := range tids {
			attr := unix.PerfEventAttr{Type: ev.typ, Config: ev.config,
				Size:        uint32(binary.Size(unix.PerfEventAttr{})),
				Bits:        unix.PerfBitInherit,
				Read_format: unix.PERF_FORMAT_TOTAL_TIME_ENABLED | unix.PERF_FORMAT_TOTAL_TIME_RUNNING}
			fd, err := unix.PerfEventOpen(&attr, tid, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
			if errors.Is(err, unix.ESRCH) { // the thread ended meanwhile
				continue
			}
			if err != nil {
				why = err
				break
			}
			c.fds[ev.Name] = append(c.fds[ev.Name], fd)
			counted[tid] = true
		}
		// An event counted on some threads only (out of file descriptors,
		// say) would be an undercount: it is not counted at all.
		if why != nil || len(c.fds[ev.Name]) == 0 {
			for _, fd := range c.fds[ev.Name] {
				unix.Close(fd)
			}
			delete(c.fds, ev.Name)
			c.Unsupported[ev.Name] = counterWhy(why)
		}
	}
	for _, fds := range c.fds {
		if len(fds) > 0 {
			c.Threads = len(counted)
		}
	}
	return c
}

// counterWhy says in a few words why perf_event_open refused an event.
func counterWhy(err error) string {
	switch {
	case err == nil:
		return "no thread to count"
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.ENODEV):
		return "not supported"
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
		return "not permitted (perf_event_paranoid; run as root)"
	}
	return fmt.Sprintf("not readable (%v)", err)
}

// Read returns the events' counts so far, summed over the threads.
func (c *Counters) Read() CounterValues {
	out := CounterValues{}
	buf := make([]byte, 24)
	for name, fds := range c.fds {
		var sum float64
		for _, fd := range fds {
			n, err := unix.Read(fd, buf)
			if err != nil || n != len(buf) {
				continue
			}
			value := binary.NativeEndian.Uint64(buf[0:])
			enabled := binary.NativeEndian.Uint64(buf[8:])
			running := binary.NativeEndian.Uint64(buf[16:])
			switch {
			case running == 0:
			case running < enabled:
				sum += float64(value) * float64(enabled) / float64(running)
			default:
				sum += float64(value)
			}
		}
		out[name] = sum
	}
	return out
}

// Sub returns v - o event by event (the events of v).
func (v CounterValues) Sub(o CounterValues) CounterValues {
	out := CounterValues{}
	for k, x := range v {
		out[k] = x - o[k]
	}
	return out
}

// Close releases the counters.
func (c *Counters) Close() {
	for _, fds := range c.fds {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}
	c.fds = nil
}

// UnsupportedText lists the events that could not be counted and why, in
// CounterEvents order: "instructions, cycles not supported".
func (c *Counters) UnsupportedText() string {
	byWhy := map[string][]string{}
	var whys []string
	for _, ev := range CounterEvents {
		if why, ok := c.Unsupported[ev.Name]; ok {
			if byWhy[why] == nil {
				whys = append(whys, why)
			}
			byWhy[why] = append(byWhy[why], ev.Name)
		}
	}
	var parts []string
	for _, why := range whys {
		parts = append(parts, strings.Join(byWhy[why], ", ")+" "+why)
	}
	return strings.Join(parts, "; ")
}

// ThreadsOf lists the threads (task IDs) of the processes pids, read from
// procDir (normally "/proc"), sorted; processes that are gone are skipped.
func ThreadsOf(procDir string, pids []int) []int {
	var out []int
	for _, pid := range pids {
		ents, err := os.ReadDir(filepath.Join(procDir, strconv.Itoa(pid), "task"))
		if err != nil {
			continue
		}
		for _, e := range ents {
			if tid, err := strconv.Atoi(e.Name()); err == nil {
				out = append(out, tid)
			}
		}
	}
	sort.Ints(out)
	return out
}
