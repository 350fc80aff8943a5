package workload

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// Options is a suite's own typed configuration. The spec reads it from the
// suite's table, [workload.<suite>] (e.g. [workload.insert]), after the
// suite's faithful defaults (Configurable.NewOptions) and the size preset;
// command-line flags come last. Options are a pointer to a struct whose
// fields carry `toml` tags; the spec stores them back with every experiment.
// Field names in errors (FieldError) are the TOML keys, so a user can find
// the field in the file.
type Options interface {
	// Preset applies the sizes of the named preset ("smoke", "credible", or
	// one of the suite's own Presets) and reports whether the suite sizes
	// anything for it.
	Preset(name string) bool
	// Flags binds each option to a flag of fs, named after the TOML key with
	// '-' for '_' (--query-time for query_time), as CockroachDB's Flagser.
	Flags(fs *pflag.FlagSet)
}

// Configurable is a Suite with options of its own. Suites without it use
// only the shared Params.
type Configurable interface {
	Suite
	// NewOptions returns the suite's options at their faithful defaults.
	NewOptions() Options
}

// Presetter is a Suite that defines size presets of its own besides the
// shared "smoke" and "credible"; the map says what each one is for
// (`benchlab list`).
type Presetter interface {
	Presets() map[string]string
}

// FlatKeys is Options whose fields older spec files wrote directly under
// [workload] (clients = 4 instead of [workload.insert] clients = 4). The
// spec still reads those keys into the options, so old files and stored
// experiments keep working; new options never go here.
type FlatKeys interface {
	FlatKeys() []string
}

// Legacy is Options of which some default changed after runs were stored
// with it. Every stored spec writes every key its options had then, so a
// key missing from a stored spec means the run predates the option and ran
// with the older behaviour; spec.ParseStored calls StoredDefaults so that a
// report or rerun of such a run reads back what it ran, while a spec file a
// user writes gets today's defaults.
type Legacy interface {
	// StoredDefaults sets each option whose key has(key) says the stored
	// spec lacks to the value runs stored without it used, and returns one
	// line for each thing those runs did that the current code cannot
	// redo (for the report header and rerun), none when there is none.
	StoredDefaults(has func(key string) bool) []string
}

// OptionsOf returns p's options as the suite's type T, or def() when p has
// none of that type (Params built by hand in tests of another suite).
func OptionsOf[T Options](p Params, def func() T) T {
	if o, ok := p.Options.(T); ok {
		return o
	}
	return def()
}

// FieldError is a bad value of one workload field. The spec reports it under
// the field's place in the file; the command line under its flag. It is a
// typed value so that no one recovers the field by cutting error text.
type FieldError struct {
	// Field is the key under [workload]: "tests" for a shared field,
	// "insert.clients" for an option of the insert suite,
	// "custom.test[0].args" for a nested one.
	Field string
	// Value is the bad value; nil when the problem is that it is missing.
	Value any
	// Msg says what is wrong and what is allowed, e.g. "2000 is not
	// allowed; want 1 to 1024".
	Msg string
}

// Error returns "workload.<field>: <msg>".
func (e *FieldError) Error() string { return "workload." + e.Field + ": " + e.Msg }

// Bad returns a FieldError for field with value v and the message
// format; the message should name the value and what is allowed.
func Bad(field string, v any, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Value: v, Msg: fmt.Sprintf(format, args...)}
}

// Duration is a time.Duration written "30s", "5m" or "500ms" in spec files
// and given as a duration or plain seconds ("10", as sysbench) to flags.
type Duration struct{ time.Duration }

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("%q is not a duration; want a number with a unit, like \"30s\" or \"500ms\"", b)
	}
	d.Duration = v
	return nil
}

// MarshalText writes the duration back in Go's notation.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// Set parses a flag value: seconds ("10", "0.5") or a duration ("30s"),
// never negative.
func (d *Duration) Set(v string) error {
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		if !(n >= 0) {
			return fmt.Errorf("%q is negative or not a number; want seconds >= 0 or a duration like 30s", v)
		}
		// time.Duration counts nanoseconds in an int64: more would wrap
		// round to a negative duration.
		if n*float64(time.Second) >= float64(math.MaxInt64) {
			return fmt.Errorf("%q is too long: a duration holds at most %.0f seconds (292 years); want seconds or a duration like 30s",
				v, math.Floor(float64(math.MaxInt64)/float64(time.Second)))
		}
		d.Duration = time.Duration(n * float64(time.Second))
		return nil
	}
	x, err := time.ParseDuration(v)
	if err != nil {
		return fmt.Errorf("%q is not a duration; want seconds or a duration like 30s", v)
	}
	if x < 0 {
		return fmt.Errorf("%q is negative; want a duration >= 0", v)
	}
	d.Duration = x
	return nil
}

// Type names the flag's value kind for help text.
func (d *Duration) Type() string { return "duration" }

// SelectTests resolves a selection (workload.tests) against a suite's tests:
// each name selects the test of that name, or every test of that family. It
// returns the selected test names, nil when names is empty (every test), or
// a FieldError on "tests" listing the families and tests known. It is the
// one test-selection helper of the suites.
func SelectTests(names []string, tests []Test) (map[string]bool, error) {
	if len(names) == 0 {
		return nil, nil
	}
	sel := map[string]bool{}
	for _, n := range names {
		found := false
		for _, t := range tests {
			if t.Name == n || t.Family == n {
				sel[t.Name] = true
				found = true
			}
		}
		if !found {
			var known []string
			for _, t := range tests {
				if t.Family != "" && !slices.Contains(known, t.Family) {
					known = append(known, t.Family)
				}
				if t.Family != t.Name && !slices.Contains(known, t.Name) {
					known = append(known, t.Name)
				}
			}
			return nil, Bad("tests", n, "unknown test %q; known: %s", n, strings.Join(known, ", "))
		}
	}
	return sel, nil
}
