package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFlakyFailingPassing runs go test through testrun on a module of three
// tests: one passes, one fails the first time and passes after (it leaves a
// mark on its first run), one always fails. testrun must name the flaky one
// as flaky, in its output and its flake log, the failing one as failed, and
// exit 1; without the always-failing test it exits 0 and still names the
// flaky one.
func TestFlakyFailingPassing(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "mark")
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module flakes\n\ngo 1.21\n")
	write("f_test.go", `package flakes

import (
	"os"
	"testing"
)

func TestPasses(t *testing.T) {}

func TestFlaky(t *testing.T) {
	if _, err := os.Stat(`+"`"+mark+"`"+`); err != nil {
		os.WriteFile(`+"`"+mark+"`"+`, nil, 0o644)
		t.Fatal("first run fails")
	}
}

func TestAlwaysFails(t *testing.T) {
	if os.Getenv("TESTRUN_ALL_PASS") == "" {
		t.Fatal("always")
	}
}
`)
	t.Chdir(dir)
	log := filepath.Join(dir, "flakes.log")
	var out strings.Builder
	code := run([]string{"-count=1", "."}, 5, log, true, &out)
	got := out.String()
	if code != 1 || !strings.Contains(got, "FLAKY flakes TestFlaky") || !strings.Contains(got, "FAILED flakes TestAlwaysFails") ||
		strings.Contains(got, "FAILED flakes TestFlaky") || !strings.Contains(got, "tests: 2 passed, 1 failed, 0 skipped") ||
		!strings.Contains(got, "first run fails") || !strings.Contains(got, "slowest 3 tests:") {
		t.Errorf("exit %d, want 1 with TestFlaky flaky and TestAlwaysFails failed:\n%s", code, got)
	}
	if b, err := os.ReadFile(log); err != nil || !strings.Contains(string(b), "FLAKY flakes TestFlaky") {
		t.Errorf("flake log: %q, %v", b, err)
	}

	os.Remove(mark)
	t.Setenv("TESTRUN_ALL_PASS", "1")
	out.Reset()
	if code := run([]string{"-count=1", "."}, 5, "", true, &out); code != 0 || !strings.Contains(out.String(), "FLAKY flakes TestFlaky") ||
		!strings.Contains(out.String(), "tests: 3 passed, 0 failed, 0 skipped") {
		t.Errorf("exit %d, want 0 with TestFlaky named flaky:\n%s", code, out.String())
	}

	// A package that does not build has no test to rerun: it fails the run.
	write("f_test.go", "package flakes\n\nfunc broken( {\n")
	out.Reset()
	if code := run([]string{"-count=1", "."}, 5, "", true, &out); code != 1 || !strings.Contains(out.String(), "FAILED flakes") {
		t.Errorf("a package that does not build: exit %d, want 1 naming it:\n%s", code, out.String())
	}
}

// TestRerunArgs keeps go test's flags and their values, drops -run and the
// package list, and names the one test and package.
func TestRerunArgs(t *testing.T) {
	got := strings.Join(rerunArgs([]string{"-count=1", "-timeout", "25m", "-tags", "rocksdb", "-run", "X", "./a/...", "./b/"},
		testKey{"m/p", "TestA.B"}), " ")
	if want := `-count=1 -timeout 25m -tags rocksdb -run ^TestA\.B$ m/p`; got != want {
		t.Errorf("rerunArgs: %q, want %q", got, want)
	}
}
