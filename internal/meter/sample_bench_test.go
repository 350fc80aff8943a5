package meter

import (
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// BenchmarkTreeSample times one sample of a server-like process tree (a
// shell and 64 children, as a PostgreSQL server at 64 threads has a backend
// per client): full, as every sample was (every /proc pid's stat, then each
// tree process's io, status and threads), and light, as the per-second
// samples between full ones are (the known processes' stat and the
// children files of known parents).
func BenchmarkTreeSample(b *testing.B) {
	cmd := exec.Command("sh", "-c", "for i in $(seq 64); do sleep 120 & done; wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its own group, killed at the end
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer cmd.Wait()
	defer syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	roots := []int{cmd.Process.Pid}
	var tree treeSample
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if tree = readTree("/proc", roots); len(tree.procs) == 65 {
			break
		}
	}
	if len(tree.procs) != 65 {
		b.Fatalf("tree of %d processes, want 65", len(tree.procs))
	}
	b.Run("full", func(b *testing.B) {
		defer cpuPerOp(b)()
		for range b.N {
			readTree("/proc", roots)
		}
	})
	b.Run("light", func(b *testing.B) {
		defer cpuPerOp(b)()
		for range b.N {
			if _, ok := readKnown("/proc", roots, tree); !ok {
				b.Skip("no children files")
			}
		}
	})
}

// cpuPerOp reports the process's CPU time (user+system, getrusage) per
// operation as cpu_us/op when the returned function is called: on a loaded
// machine wall time per operation says more about the load than the work.
func cpuPerOp(b *testing.B) func() {
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	start := cpu()
	return func() { b.ReportMetric(float64(cpu()-start)/1e3/float64(b.N), "cpu_us/op") }
}
