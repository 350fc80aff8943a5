package meter

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// HostFacts reads what /proc says about this machine. Facts that cannot be
// read say "not readable" rather than being guessed.
func HostFacts() Host {
	h := Host{Cores: runtime.NumCPU(), CPUModel: "not readable", CPUMHz: "not readable",
		Governor: "not readable (no cpufreq)", Kernel: "not readable", Affinity: "not readable"}
	h.Hostname, _ = os.Hostname()
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		var mhz []string
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			k, v, ok := strings.Cut(sc.Text(), ":")
			if !ok {
				continue
			}
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			switch k {
			case "model name":
				h.CPUModel = v
			case "cpu MHz":
				mhz = append(mhz, v)
			}
		}
		f.Close()
		if len(mhz) > 0 {
			h.CPUMHz = strings.Join(mhz, ",")
		}
	}
	if b, err := os.ReadFile("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"); err == nil {
		h.Governor = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		h.Kernel = strings.TrimSpace(string(b))
	}
	mem := meminfo()
	h.MemTotalMB = mem["MemTotal"] / 1024
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				h.Affinity = strings.TrimSpace(v)
			}
		}
	}
	return h
}

func meminfo() map[string]int64 {
	out := map[string]int64{}
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) > 0 {
			n, _ := strconv.ParseInt(f[0], 10, 64)
			out[k] = n
		}
	}
	return out
}

// cpuTimes are the aggregate jiffies of /proc/stat's "cpu" line.
type cpuTimes struct{ total, idle, steal int64 }

func readCPUTimes() (cpuTimes, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{}, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return cpuTimes{}, false
	}
	var t cpuTimes
	for i, s := range f[1:] {
		n, _ := strconv.ParseInt(s, 10, 64)
		if i < 8 { // guest time is already counted in user
			t.total += n
		}
		switch i {
		case 3, 4: // idle, iowait
			t.idle += n
		case 7:
			t.steal = n
		}
	}
	return t, true
}

// MachineProbe takes load snapshots of the machine; each snapshot's CPU
// shares cover the time since the previous one.
type MachineProbe struct {
	last cpuTimes
	ok   bool
}

// Snapshot reads the load average, available memory and, from the second
// call on, the busy and steal shares of all CPUs since the previous call.
func (p *MachineProbe) Snapshot(when string) Machine {
	m := Machine{When: when, At: time.Now().UTC().Format(time.RFC3339)}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			m.LoadAvg1, _ = strconv.ParseFloat(f[0], 64)
		}
	}
	m.MemFreeMB = meminfo()["MemAvailable"] / 1024
	t, ok := readCPUTimes()
	if ok && p.ok {
		if d := t.total - p.last.total; d > 0 {
			m.BusyPct = 100 * float64(d-(t.idle-p.last.idle)) / float64(d)
			m.StealPct = 100 * float64(t.steal-p.last.steal) / float64(d)
		}
	}
	p.last, p.ok = t, ok
	return m
}
