package meter

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

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
