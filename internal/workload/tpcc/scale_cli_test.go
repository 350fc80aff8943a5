package tpcc_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"benchlab/internal/cli"
)

// TestBadScaleFactorExits2 runs specs whose scale factor is not one,
// on an SQL target: benchlab exits 2 naming workload.tpcc.scalefactor
// before anything is stored.
func TestBadScaleFactorExits2(t *testing.T) {
	for _, v := range []string{"0.5", "-3", "100001", "nan"} {
		dir := t.TempDir()
		file := filepath.Join(dir, "spec.toml")
		spec := "name = \"s\"\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n[workload]\nsuite = \"tpcc\"\nthreads = [1]\n" +
			"write_time = \"1s\"\n[workload.tpcc]\nscalefactor = " + v + "\n"
		if err := os.WriteFile(file, []byte(spec), 0o644); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		store := filepath.Join(dir, "r.db")
		code := cli.Main(cli.Env{Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }},
			[]string{"run", file, "--store", store, "--workdir", filepath.Join(dir, "work")})
		if code != cli.ExitUsage || !strings.Contains(out.String(), "workload.tpcc.scalefactor") {
			t.Errorf("scalefactor = %s: exit %d\n%s\nwant exit 2 naming workload.tpcc.scalefactor", v, code, out.String())
		}
		if _, err := os.Stat(store); err == nil {
			t.Errorf("scalefactor = %s: a store was written", v)
		}
	}
}
