// Command testrun runs `go test -json` and says what the run cost and what
// was flaky: each package's line as go test prints it, the output of every
// failed test, the slowest tests, each package's time, and one rerun of
// every failed test, which tells a flaky test (failed, then passed) from a
// failing one. A flaky test does not fail the run, but it is printed and
// appended to a flake log, so a rerun never hides it. make test runs the
// suite through it; it is a developer tool, not part of benchlab.
//
//	go run ./internal/testrun [-slowest N] [-flakes FILE] [-rerun=false] -- [go test flags] packages...
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"time"
)

// event is one line of `go test -json` (cmd/test2json's TestEvent).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// testKey names a test in a package.
type testKey struct{ pkg, test string }

// outcome is what one `go test -json` run said.
type outcome struct {
	passed, failed, skipped int
	// failedTop are the failed top-level tests, in the order they failed.
	failedTop []testKey
	// brokenPkgs failed with no failed test to name (a build error, a
	// panic outside a test, a timeout): nothing to rerun.
	brokenPkgs []string
	// elapsed is each top-level test's time, pkgTime each package's.
	elapsed map[testKey]float64
	pkgTime map[string]float64
	// failOutput is each failed top-level test's output.
	failOutput map[testKey]string
}

func main() {
	slowest := flag.Int("slowest", 10, "how many of the slowest tests to print")
	flakes := flag.String("flakes", "", "append each flaky test (failed, then passed on its rerun) to this file")
	rerun := flag.Bool("rerun", true, "rerun each failed test once to tell flaky from failing")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: testrun [-slowest N] [-flakes FILE] [-rerun=false] -- [go test flags] packages...")
		flag.PrintDefaults()
	}
	flag.Parse()
	args := flag.Args()
	if len(args) == 0 {
		flag.Usage()
		os.Exit(2)
	}
	os.Exit(run(args, *slowest, *flakes, *rerun, os.Stdout))
}

// run runs the tests and returns the exit code: 0 when every test passed
// (on its rerun for a flaky one), 1 otherwise.
func run(args []string, slowest int, flakeLog string, rerun bool, w io.Writer) int {
	start := time.Now()
	first, err := goTest(args, w, true)
	if err != nil {
		fmt.Fprintf(w, "testrun: %v\n", err)
		return 1
	}
	var flaky, failing []testKey
	for _, k := range first.failedTop {
		if !rerun {
			failing = append(failing, k)
			continue
		}
		fmt.Fprintf(w, "testrun: rerunning %s in %s once\n", k.test, k.pkg)
		again, err := goTest(rerunArgs(args, k), io.Discard, false)
		if err == nil && again.failed == 0 && again.passed > 0 && len(again.brokenPkgs) == 0 {
			flaky = append(flaky, k)
		} else {
			failing = append(failing, k)
		}
	}
	printSlowest(w, first, slowest)
	printPackages(w, first)
	if len(flaky) > 0 {
		fmt.Fprintf(w, "\nflaky (failed, then passed on a rerun; see the output above):\n")
		for _, k := range flaky {
			fmt.Fprintf(w, "  FLAKY %s %s\n", k.pkg, k.test)
		}
		if flakeLog != "" {
			if err := logFlakes(flakeLog, flaky, first.failOutput); err != nil {
				fmt.Fprintf(w, "testrun: %v\n", err)
			} else {
				fmt.Fprintf(w, "  (appended to %s)\n", flakeLog)
			}
		}
	}
	for _, k := range failing {
		fmt.Fprintf(w, "FAILED %s %s\n", k.pkg, k.test)
	}
	for _, p := range first.brokenPkgs {
		fmt.Fprintf(w, "FAILED %s (no test to name: build error, panic or timeout; see above)\n", p)
	}
	fmt.Fprintf(w, "\ntests in %s\n", time.Since(start).Round(time.Second))
	// The closing line, in the plain form any CI reads.
	fmt.Fprintf(w, "tests: %d passed, %d failed, %d skipped\n", first.passed+len(flaky), len(failing)+len(first.brokenPkgs),
		first.skipped)
	if len(failing) > 0 || len(first.brokenPkgs) > 0 {
		return 1
	}
	return 0
}

// goTest runs go test -json with args, printing package lines and failed
// tests' output to w when show is set, and reads its events.
func goTest(args []string, w io.Writer, show bool) (*outcome, error) {
	cmd := exec.Command("go", append([]string{"test", "-json"}, args...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("go test: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("go test: %w", err)
	}
	o, readErr := readEvents(out, w, show)
	waitErr := cmd.Wait()
	if readErr != nil {
		return nil, readErr
	}
	var exit *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exit) {
		return nil, fmt.Errorf("go test: %w", waitErr)
	}
	if waitErr != nil && o.failed == 0 && len(o.brokenPkgs) == 0 {
		// go test failed without a failed test or package in its events
		// (a bad flag, a package that does not exist).
		o.brokenPkgs = append(o.brokenPkgs, "(go test: "+waitErr.Error()+")")
	}
	return o, nil
}

// readEvents reads go test's JSON events.
func readEvents(r io.Reader, w io.Writer, show bool) (*outcome, error) {
	o := &outcome{elapsed: map[testKey]float64{}, pkgTime: map[string]float64{}, failOutput: map[testKey]string{}}
	testOut := map[testKey]*strings.Builder{}
	pkgOut := map[string]*strings.Builder{}
	failedIn := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			// Not an event (go test prints some build errors as text).
			if show {
				fmt.Fprintf(w, "%s\n", line)
			}
			continue
		}
		top := testKey{e.Package, strings.SplitN(e.Test, "/", 2)[0]}
		switch {
		case e.Action == "output" && e.Test != "":
			b := testOut[top]
			if b == nil {
				b = &strings.Builder{}
				testOut[top] = b
			}
			b.WriteString(e.Output)
		case e.Action == "output" || e.Action == "build-output":
			b := pkgOut[e.Package]
			if b == nil {
				b = &strings.Builder{}
				pkgOut[e.Package] = b
			}
			b.WriteString(e.Output)
		case e.Test != "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip"):
			switch e.Action {
			case "pass":
				o.passed++
			case "fail":
				o.failed++
			case "skip":
				o.skipped++
			}
			if e.Test != top.test {
				break // a subtest: its parent reports the top-level outcome
			}
			o.elapsed[top] = e.Elapsed
			if e.Action == "fail" {
				o.failedTop = append(o.failedTop, top)
				failedIn[e.Package] = true
				if b := testOut[top]; b != nil {
					o.failOutput[top] = b.String()
				}
				if show {
					fmt.Fprintf(w, "--- FAIL %s %s (%.2fs)\n%s", e.Package, e.Test, e.Elapsed, o.failOutput[top])
				}
			}
			delete(testOut, top)
		case e.Test == "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip"):
			o.pkgTime[e.Package] = e.Elapsed
			if !show {
				break
			}
			switch {
			case e.Action == "fail":
				if !failedIn[e.Package] {
					o.brokenPkgs = append(o.brokenPkgs, e.Package)
					// Whatever the package printed tells why (a build
					// error, a panic, a timeout's stacks: the tail).
					fmt.Fprint(w, tail(pkgOut[e.Package], 200))
					for k, b := range testOut {
						if k.pkg == e.Package {
							fmt.Fprintf(w, "--- output of %s (still running)\n%s", k.test, tail(b, 200))
						}
					}
				}
				fmt.Fprintf(w, "FAIL\t%s\t%.3fs\n", e.Package, e.Elapsed)
			case e.Action == "skip":
				fmt.Fprintf(w, "?   \t%s\t[no test files]\n", e.Package)
			default:
				fmt.Fprintf(w, "ok  \t%s\t%.3fs\n", e.Package, e.Elapsed)
			}
		case e.Action == "fail" && !show:
			if !failedIn[e.Package] {
				o.brokenPkgs = append(o.brokenPkgs, e.Package)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read go test's events: %w", err)
	}
	return o, nil
}

// tail is the last n lines of b.
func tail(b *strings.Builder, n int) string {
	if b == nil {
		return ""
	}
	lines := strings.SplitAfter(b.String(), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "")
}

// rerunArgs are args with the package list replaced by k's package and
// -run by k's test alone.
func rerunArgs(args []string, k testKey) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-run" || a == "-skip":
			i++ // and its value
		case strings.HasPrefix(a, "-run=") || strings.HasPrefix(a, "-skip="):
		case strings.HasPrefix(a, "-"):
			out = append(out, a)
			// Flags go test reads with a separate value.
			if flagTakesValue(a) && i+1 < len(args) {
				i++
				out = append(out, args[i])
			}
		}
	}
	return append(out, "-run", "^"+regexp.QuoteMeta(k.test)+"$", k.pkg)
}

// flagTakesValue says whether a go test flag given without "=" takes the
// next argument as its value.
func flagTakesValue(a string) bool {
	if strings.Contains(a, "=") {
		return false
	}
	switch strings.TrimLeft(a, "-") {
	case "count", "timeout", "tags", "p", "parallel", "cpu", "bench", "benchtime", "fuzz", "fuzztime", "ldflags",
		"gcflags", "coverprofile", "coverpkg", "covermode", "exec", "o", "outputdir", "shuffle":
		return true
	}
	return false
}

// printSlowest prints the n slowest top-level tests.
func printSlowest(w io.Writer, o *outcome, n int) {
	if n <= 0 || len(o.elapsed) == 0 {
		return
	}
	keys := make([]testKey, 0, len(o.elapsed))
	for k := range o.elapsed {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return o.elapsed[keys[i]] > o.elapsed[keys[j]] })
	fmt.Fprintf(w, "\nslowest %d tests:\n", min(n, len(keys)))
	for _, k := range keys[:min(n, len(keys))] {
		fmt.Fprintf(w, "  %7.1fs  %s %s\n", o.elapsed[k], k.pkg, k.test)
	}
}

// printPackages prints each package's time, slowest first.
func printPackages(w io.Writer, o *outcome) {
	if len(o.pkgTime) == 0 {
		return
	}
	pkgs := make([]string, 0, len(o.pkgTime))
	var sum float64
	for p, s := range o.pkgTime {
		pkgs = append(pkgs, p)
		sum += s
	}
	sort.Slice(pkgs, func(i, j int) bool { return o.pkgTime[pkgs[i]] > o.pkgTime[pkgs[j]] })
	fmt.Fprintf(w, "\npackage times (%.0f s in all; packages run in parallel):\n", sum)
	for _, p := range pkgs {
		if o.pkgTime[p] >= 0.05 {
			fmt.Fprintf(w, "  %7.1fs  %s\n", o.pkgTime[p], p)
		}
	}
}

// logFlakes appends the flaky tests, with the start of each one's first
// failure, to file.
func logFlakes(file string, flaky []testKey, output map[testKey]string) error {
	f, err := os.OpenFile(file, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("flake log: %w", err)
	}
	now := time.Now().UTC().Format(time.RFC3339)
	for _, k := range flaky {
		out := output[k]
		if len(out) > 4000 {
			out = out[len(out)-4000:]
		}
		fmt.Fprintf(f, "%s FLAKY %s %s\n%s\n", now, k.pkg, k.test, out)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("flake log: %w", err)
	}
	return nil
}
