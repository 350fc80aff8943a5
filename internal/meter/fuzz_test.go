package meter

import "testing"

// FuzzProc feeds arbitrary text to the parsers of /proc files: a value or
// an error, never a panic.
func FuzzProc(f *testing.F) {
	f.Add("1234 (postgres: walwriter) S 1 2 3 0 -1 4194368 100 0 0 0 12 34 0 0 20 0 1 0 500 1000 200 18446744073709551615\n")
	f.Add("rchar: 1\nwchar: 2\nsyscr: 3\nsyscw: 4\nread_bytes: 5\nwrite_bytes: 6\ncancelled_write_bytes: 0\n")
	f.Add("Name:\tpostgres\nVmRSS:\t  1024 kB\nvoluntary_ctxt_switches:\t5\nnonvoluntary_ctxt_switches:\t6\n")
	f.Add(" 253       0 vda 100 0 2000 30 40 0 800 50 0 60 80 0 0 0 0\n")
	f.Add("cpu  1 2 3 4 5 6 7 8 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\nctxt 99\n")
	f.Fuzz(func(t *testing.T, s string) {
		b := []byte(s)
		_, _ = ParsePidStat(b)
		_, _ = ParsePidIO(b)
		_, _ = ParsePidStatus(b)
		_, _, _ = ParseDiskstats(b, 253, 0)
		_, _ = ParseCPUStat(b)
	})
}
