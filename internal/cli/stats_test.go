package cli

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// stallNamed says whether a report's text names the stall of test at
// threads on target (a measured step that completed no operation), however
// its notes wrap.
func stallNamed(report, test string, threads int, target string) bool {
	flat := strings.Join(strings.Fields(report), " ")
	return regexp.MustCompile(regexp.QuoteMeta(fmt.Sprintf("stalled: %s @%d on %s ", test, threads, target)) +
		`\(repeat \d+\) completed no operation`).MatchString(flat)
}

// experimentAttempts runs try, one whole fresh experiment per call, until
// an attempt meets every condition (try returns no misses) or attempts
// have missed in a row, which fails the test. A miss is an outcome the
// statistics allow on a noisy machine at a rate the calling test computes
// (so that missing attempts times in a row stays below 1 in 10,000);
// try fails the test itself (t.Fatal) on what no noise can explain.
func experimentAttempts(t *testing.T, attempts int, try func(attempt int) (misses []string)) {
	t.Helper()
	for attempt := 1; attempt <= attempts; attempt++ {
		misses := try(attempt)
		if len(misses) == 0 {
			return
		}
		t.Logf("attempt %d of %d missed (a noisy machine; see the test's comment for the rate): %s", attempt, attempts,
			strings.Join(misses, "; "))
	}
	t.Fatalf("%d fresh experiments in a row missed the expected verdicts", attempts)
}
