package cpulist

import (
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	got, err := Parse("0,2-4")
	if err != nil || !reflect.DeepEqual(got, []int{0, 2, 3, 4}) {
		t.Errorf("Parse = %v, %v", got, err)
	}
	if got, err := Parse("3,0-1,1"); err != nil || !reflect.DeepEqual(got, []int{0, 1, 3}) {
		t.Errorf("Parse(3,0-1,1) = %v, %v; want each CPU once, in order", got, err)
	}
	// A range that would list 666 million CPUs (found by fuzzing, which it
	// ran out of memory) is refused, as is a CPU an affinity mask cannot hold.
	for _, bad := range []string{"", "a", "3-1", "-1", "1,", "0-666666661", "1024", "0-1024"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

// FuzzParse: any text is a list of CPUs below MaxCPUs, in order, or an error.
func FuzzParse(f *testing.F) {
	f.Add("0-3,8,10-11")
	f.Add("0-666666661")
	f.Fuzz(func(t *testing.T, s string) {
		cpus, err := Parse(s)
		if err != nil {
			return
		}
		for i, c := range cpus {
			if c < 0 || c >= MaxCPUs || (i > 0 && c <= cpus[i-1]) {
				t.Fatalf("Parse(%q) = %v", s, cpus)
			}
		}
	})
}
