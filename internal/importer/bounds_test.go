package importer_test

import (
	"bytes"
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"

	"benchlab/internal/importer"
)

// TestSysbenchCutAnywhere cuts a real sysbench output at every byte before
// the end of its summary: each cut is refused. A file cut inside its
// "95th percentile:" line was imported with p95 = 0.
func TestSysbenchCutAnywhere(t *testing.T) {
	for _, name := range []string{"sysbench-point-select.txt", "sysbench-read-write-p99.txt"} {
		data := read(t, name)
		end := bytes.Index(data, []byte("execution time (avg/stddev):"))
		end += bytes.IndexByte(data[end:], '\n') + 1
		if _, err := importer.Parse(importer.Sysbench, name, data[:end], importer.Options{}); err != nil {
			t.Fatalf("%s: the whole summary is refused: %v", name, err)
		}
		for k := 1; k < end; k++ {
			out, err := importer.Parse(importer.Sysbench, name, data[:k], importer.Options{})
			var ie *importer.Error
			if !errors.As(err, &ie) {
				r := out.Results[0]
				t.Fatalf("%s cut after %d bytes (%q): imported with p95 %v, p99 %v, max %v; want it refused as truncated",
					name, k, data[max(0, k-30):k], r.Latency.P95, r.Latency.P99, r.Latency.Max)
			}
		}
	}
	// The percentile line itself, cut inside its figure.
	data := read(t, "sysbench-point-select.txt")
	i := bytes.Index(data, []byte("95th percentile:"))
	i += bytes.IndexByte(data[i:], '.') + 1
	_, err := importer.Parse(importer.Sysbench, "p.txt", data[:i], importer.Options{})
	if err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("cut inside the 95th percentile: %v; want truncated", err)
	}
	cut := append(append([]byte{}, data[:i]...), '\n')
	_, err = importer.Parse(importer.Sysbench, "p.txt", cut, importer.Options{})
	if err == nil || !strings.Contains(err.Error(), `ends before its "sum:" line: the file is truncated`) {
		t.Fatalf("cut inside the 95th percentile, with a newline: %v; want the missing sum: line named", err)
	}
}

// endless reads as text without end.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = "sysbench 1.0.20\n"[i%16]
	}
	return len(p), nil
}

// TestReadInputBounded reads /dev/zero and endless text: the first stops
// at its first NUL, the second at MaxInputBytes, neither reads more.
func TestReadInputBounded(t *testing.T) {
	if f, err := os.Open("/dev/zero"); err == nil {
		var ms0, ms1 runtime.MemStats
		runtime.ReadMemStats(&ms0)
		_, err := importer.ReadInput("/dev/zero", importer.Sysbench, f)
		runtime.ReadMemStats(&ms1)
		f.Close()
		if err == nil || !strings.Contains(err.Error(), "/dev/zero line 1: a NUL byte: not a text file") {
			t.Fatalf("/dev/zero: %v; want a NUL byte on line 1", err)
		}
		if n := ms1.TotalAlloc - ms0.TotalAlloc; n > 1<<20 {
			t.Fatalf("/dev/zero: allocated %d bytes; want at most 1 MiB", n)
		}
	}
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	_, err := importer.ReadInput("big.txt", importer.Sysbench, endless{})
	runtime.ReadMemStats(&ms1)
	if err == nil || !strings.Contains(err.Error(), "big.txt: more than 33554432 bytes (32 MiB): too large") {
		t.Fatalf("endless text: %v; want the size limit named", err)
	}
	if n := ms1.TotalAlloc - ms0.TotalAlloc; n > 4*importer.MaxInputBytes {
		t.Fatalf("endless text: allocated %d bytes; want at most %d", n, 4*importer.MaxInputBytes)
	}
	data, err := importer.ReadInput("ok.txt", importer.Sysbench, bytes.NewReader(read(t, "sysbench-point-select.txt")))
	if err != nil || !bytes.Equal(data, read(t, "sysbench-point-select.txt")) {
		t.Fatalf("a real file: %v", err)
	}
}
