package spec_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	_ "benchlab/internal/workload/insertbench"
	_ "benchlab/internal/workload/kv"

	. "benchlab/internal/spec"
	"benchlab/internal/workload"
	"benchlab/internal/workload/insertbench"
	"benchlab/internal/workload/kv"
)

const insertHead = `name = "x"
[[target]]
name = "a"
engine = "sqlite"
[workload]
suite = "insert"
`

// TestSuiteTable reads a suite's options from its own table, over its
// defaults and the preset, and stores them back in the same place.
func TestSuiteTable(t *testing.T) {
	s, err := Parse([]byte(insertHead+"[workload.insert]\nclients = 3\nrates = [7]\n"), "x.toml", "smoke")
	if err != nil {
		t.Fatal(err)
	}
	o := s.Params().Options.(*insertbench.Options)
	// clients and rates from the file; rows and query_time from the smoke preset.
	if o.Clients != 3 || len(o.Rates) != 1 || o.Rates[0] != 7 || o.Rows != 20_000 || o.QueryTime.Duration != 2*time.Second {
		t.Errorf("options %+v", *o)
	}
	stored := s.TOML()
	if !strings.Contains(stored, "[workload.insert]") || strings.Contains(stored, "[workload.kv]") {
		t.Errorf("stored spec lacks the suite's table or has another suite's:\n%s", stored)
	}
	back, err := Parse([]byte(stored), "stored", "")
	if err != nil {
		t.Fatalf("stored spec does not parse: %v\n%s", err, stored)
	}
	if b := back.Params().Options.(*insertbench.Options); b.Clients != 3 || b.Rows != 20_000 || b.Rates[0] != 7 {
		t.Errorf("options after a round trip %+v", *b)
	}
}

// TestFlatKeysStillRead keeps older files working: suite options written
// directly under [workload], including other suites' (as stored specs have
// them), are read into their suite's options; the suite's table wins.
func TestFlatKeysStillRead(t *testing.T) {
	src := insertHead + "clients = 2\nnum_keys = 5000\n[workload.insert]\nrows = 9000\n"
	s, err := Parse([]byte(src), "old.toml", "")
	if err != nil {
		t.Fatal(err)
	}
	if o := s.Params().Options.(*insertbench.Options); o.Clients != 2 || o.Rows != 9000 {
		t.Errorf("insert options %+v", *o)
	}
	s.Workload.Suite = "kv"
	if o := s.Params().Options.(*kv.Options); o.NumKeys != 5000 {
		t.Errorf("kv options %+v", *o)
	}
	src = insertHead + "[workload.insert]\nclients = 2\n[workload.insert]\nrows = 1\n"
	if _, err := Parse([]byte(src), "twice.toml", ""); err == nil {
		t.Error("a table defined twice was accepted")
	}
}

// TestOptionErrors names the field's place: unknown keys inside a suite's
// table, a wrong type in a flat key (with its new place), and a bad value
// reported by the suite as a typed field error.
func TestOptionErrors(t *testing.T) {
	for _, c := range []struct {
		src, want string
	}{
		{insertHead + "[workload.insert]\nclient = 2\n", "unknown field workload.insert.client"},
		{insertHead + "[workload.sysbench]\ntables = 2\n", "unknown field workload.sysbench"},
		{insertHead + "colour = 1\n", "unknown field workload.colour"},
		{insertHead + "clients = \"two\"\n", "its place is now [workload.insert]"},
		{insertHead + "[workload.insert]\nclients = \"two\"\n", "workload.insert:"},
	} {
		_, err := Parse([]byte(c.src), "x.toml", "")
		if err == nil || !strings.Contains(err.Error(), c.want) || !IsInvalid(err) {
			t.Errorf("%q: got %v, want a validation error containing %q", c.src, err, c.want)
		}
	}
	s, err := Parse([]byte(insertHead+"[workload.insert]\nclients = 0\n"), "x.toml", "")
	if err != nil {
		t.Fatal(err)
	}
	err = s.Validate()
	var e *Error
	if !errors.As(err, &e) || e.Field != "workload.insert.clients" {
		t.Errorf("got %v, want an error of field workload.insert.clients", err)
	}
	var fe *workload.FieldError
	if errors.As(err, &fe) {
		t.Errorf("the spec's error should replace the suite's, not wrap it: %v", err)
	}
}

// TestSuitePresets accepts a suite's own preset and lists it.
func TestSuitePresets(t *testing.T) {
	if _, ok := AllPresets()["io-bound"]; !ok {
		t.Fatalf("io-bound missing from %v", AllPresets())
	}
	s, err := Parse([]byte(insertHead), "x.toml", "io-bound")
	if err != nil {
		t.Fatal(err)
	}
	if o := s.Params().Options.(*insertbench.Options); o.Rows != 800_000_000 {
		t.Errorf("io-bound rows %d", o.Rows)
	}
	if _, err := Parse([]byte(insertHead), "x.toml", "huge"); err == nil || !strings.Contains(err.Error(), "io-bound") {
		t.Errorf("unknown preset: %v", err)
	}
}

// TestPacing defaults the insert suite to the original client's limiter,
// takes the catch-up pacings by name, reads the older bursty = true, and
// rejects an unknown pacing naming the field.
func TestPacing(t *testing.T) {
	insert := insertHead + "rows = 1000\ninserts = 1000\n"
	for _, c := range []struct {
		extra, want, field string
	}{
		{"", "iibench", ""},
		{"pacing = \"even\"\n", "even", ""},
		{"bursty = true\n", "bursty", ""},
		{"pacing = \"even\"\nbursty = true\n", "", "workload.insert.bursty"},
		{"pacing = \"sometimes\"\n", "", "workload.insert.pacing"},
	} {
		s, err := Parse([]byte(insert+c.extra), "x", "")
		if err == nil {
			err = s.Validate()
		}
		if c.field != "" {
			if err == nil || !strings.Contains(err.Error(), c.field) || !IsInvalid(err) {
				t.Errorf("%q: err %v, want one naming %s", c.extra, err, c.field)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", c.extra, err)
		}
		if got := s.Params().Options.(*insertbench.Options).EffectivePacing(); got != c.want {
			t.Errorf("%q: pacing %q, want %q", c.extra, got, c.want)
		}
		if c.extra == "" && !strings.Contains(s.TOML(), `pacing = "iibench"`) {
			t.Errorf("stored spec does not state the pacing:\n%s", s.TOML())
		}
	}
}
