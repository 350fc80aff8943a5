package cli

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// FuzzRunFlags parses run's command line from arbitrary words (split at
// newlines) and builds the spec: an error or a spec, never a panic.
func FuzzRunFlags(f *testing.F) {
	for _, s := range []string{
		"--engine\nsqlite\n--threads\n1,2\n--time\n10s",
		"--engine=sqlite\n--rate\n100\n--events\n5\n--percentile\n99",
		"--pgsql-host\n::1\n--pgsql-port\n5432",
		"--dsn\nu:p@tcp(h:1)/d\n--engine\nmysql",
		"--engine\nsqlite\n--set\njournal_mode=wal\n--rand-type\nspecial",
		"--engine\nsqlite\n--suite\ninsert\n--rates\n1,2\n--query-time\n1s",
		"-engine\nsqlite\n-threads\nx",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Split(line, "\n")
		for _, a := range args {
			// Flags that read or write files are not what this fuzzes.
			if strings.Contains(a, "spec") || strings.Contains(a, "cpuprofile") {
				return
			}
		}
		fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
		fs.SetOutput(discard{})
		fl := newRunFlags(fs)
		if err := fs.Parse(args); err != nil {
			return
		}
		if len(fs.Args()) > 0 {
			return
		}
		_, _ = fl.buildSpec()
	})
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
