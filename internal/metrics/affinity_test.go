package metrics

import (
	"os"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

func TestParseCPUList(t *testing.T) {
	got, err := ParseCPUList("0,2-4")
	if err != nil || !reflect.DeepEqual(got, []int{0, 2, 3, 4}) {
		t.Errorf("ParseCPUList = %v, %v", got, err)
	}
	if got, err := ParseCPUList("3,0-1,1"); err != nil || !reflect.DeepEqual(got, []int{0, 1, 3}) {
		t.Errorf("ParseCPUList(3,0-1,1) = %v, %v; want each CPU once, in order", got, err)
	}
	// A range that would list 666 million CPUs (found by FuzzProc, which it
	// ran out of memory) is refused, as is a CPU an affinity mask cannot hold.
	for _, bad := range []string{"", "a", "3-1", "-1", "1,", "0-666666661", "1024", "0-1024"} {
		if _, err := ParseCPUList(bad); err == nil {
			t.Errorf("ParseCPUList(%q) accepted", bad)
		}
	}
}

// TestPinSelf pins the test process to CPU 0 and reads the result back from
// /proc, then restores every CPU.
func TestPinSelf(t *testing.T) {
	all := "0-" + strconv.Itoa(runtime.NumCPU()-1)
	defer PinSelf(all)
	if err := PinSelf("0"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "Cpus_allowed_list:\t0\n") {
		t.Errorf("after PinSelf(\"0\"), /proc/self/status says:\n%s", b)
	}
	if HostFacts().Affinity != "0" {
		t.Errorf("HostFacts().Affinity = %q, want 0", HostFacts().Affinity)
	}
}
