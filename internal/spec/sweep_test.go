package spec

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// sweepSpec has a hand-written target and a target sweeping SQLite's
// cache_size over three values.
const sweepSpec = `name = "sw"
[[target]]
name = "sq"
engine = "sqlite"
[target.settings]
journal_mode = "wal"
[target.sweep]
setting = "cache_size"
values = [-2000, -64000, 1000]
[[target]]
name = "plain"
engine = "sqlite"
[workload]
repeats = 2
`

func validSpec(t *testing.T, src string) Spec {
	t.Helper()
	s, err := Parse([]byte(src), "x.toml", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	return s
}

func targetNames(ts []Target) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

// TestSweepExpands: a sweep becomes one target per value where the swept
// target stood, each with the value in its settings (typed as written),
// the target's other settings, and its Swept mark; the base defaults to
// the first value; the stored spec keeps the expanded targets (no sweep),
// parses back to the same targets and validates again unchanged.
func TestSweepExpands(t *testing.T) {
	s := validSpec(t, sweepSpec)
	want := []string{"sq.cache_size=-2000", "sq.cache_size=-64000", "sq.cache_size=1000", "plain"}
	if got := targetNames(s.Targets); !slices.Equal(got, want) {
		t.Fatalf("targets %v, want %v", got, want)
	}
	if s.Base != want[0] {
		t.Errorf("base %q, want the first value's target %q", s.Base, want[0])
	}
	for i, v := range []int64{-2000, -64000, 1000} {
		tg := s.Targets[i]
		if tg.Settings["cache_size"] != v || tg.Settings["journal_mode"] != "wal" || tg.Sweep != nil {
			t.Errorf("target %s: settings %v sweep %v", tg.Name, tg.Settings, tg.Sweep)
		}
		if w := tg.Swept; w == nil || w.Of != "sq" || w.Setting != "cache_size" || w.Value != want[i][len("sq.cache_size="):] {
			t.Errorf("target %s: swept %+v", tg.Name, w)
		}
	}
	// Each value's target has settings of its own.
	s.Targets[0].Settings["journal_mode"] = "delete"
	if s.Targets[1].Settings["journal_mode"] != "wal" {
		t.Error("the values' targets share one settings map")
	}
	s.Targets[0].Settings["journal_mode"] = "wal"
	if s.Targets[3].Swept != nil {
		t.Errorf("hand-written target marked swept: %+v", s.Targets[3].Swept)
	}
	g := s.Sweeps()
	if len(g) != 1 || g[0].Of != "sq" || g[0].Setting != "cache_size" || !slices.Equal(g[0].Values, []string{"-2000", "-64000", "1000"}) ||
		!slices.Equal(g[0].Targets, want[:3]) {
		t.Errorf("sweeps %+v", g)
	}
	stored := s.TOML()
	if strings.Contains(stored, "[target.sweep]") || strings.Count(stored, "[target.swept]") != 3 {
		t.Errorf("stored spec should hold the expanded targets with their swept marks:\n%s", stored)
	}
	back, err := ParseStored([]byte(stored), "stored")
	if err != nil {
		t.Fatal(err)
	}
	if err := back.Validate(); err != nil {
		t.Fatalf("stored spec does not validate: %v\n%s", err, stored)
	}
	if got := targetNames(back.Targets); !slices.Equal(got, want) || back.Base != s.Base ||
		back.Targets[1].Settings["cache_size"] != int64(-64000) || back.Targets[1].Swept.Value != "-64000" {
		t.Errorf("stored spec read back: targets %v base %q settings %v", got, back.Base, back.Targets[1].Settings)
	}
	if bg := back.Sweeps(); len(bg) != 1 || !slices.Equal(bg[0].Targets, g[0].Targets) {
		t.Errorf("stored spec's sweeps %+v", bg)
	}
	var cells []string
	for _, c := range back.Expand() {
		cells = append(cells, c.Target.Name)
	}
	if len(cells) != 8 || cells[0] != want[0] || cells[4] != want[1] {
		t.Errorf("cells %v, want 2 rounds of 4 targets, rotated", cells)
	}
}

// TestSweepBase: base may name the swept target (its first value), a
// value's target, or come from the sweep's own base.
func TestSweepBase(t *testing.T) {
	for _, c := range []struct{ base, sweepBase, want string }{
		{"", "", "sq.cache_size=-2000"},
		{"sq", "", "sq.cache_size=-2000"},
		{"plain", "", "plain"},
		{"sq.cache_size=1000", "", "sq.cache_size=1000"},
		{"", "sweep_base = -64000", "sq.cache_size=-64000"},
		{"sq", "sweep_base = 1000", "sq.cache_size=1000"},
	} {
		src := sweepSpec
		if c.base != "" {
			src = "base = \"" + c.base + "\"\n" + src
		}
		if c.sweepBase != "" {
			src = strings.Replace(src, "values = [", strings.TrimPrefix(c.sweepBase, "sweep_")+"\nvalues = [", 1)
		}
		if s := validSpec(t, src); s.Base != c.want {
			t.Errorf("base %q, sweep %q: base %q, want %q", c.base, c.sweepBase, s.Base, c.want)
		}
	}
}

// TestSweepFields: memory and cpus sweep as target fields of a server
// target, values as strings.
func TestSweepFields(t *testing.T) {
	s := validSpec(t, `name = "m"
[[target]]
name = "pg"
engine = "postgres"
[target.sweep]
setting = "memory"
values = ["256MB", "1GB"]
`)
	if got := targetNames(s.Targets); !slices.Equal(got, []string{"pg.memory=256MB", "pg.memory=1GB"}) ||
		s.Targets[1].Memory != "1GB" || len(s.Targets[1].Settings) != 0 {
		t.Errorf("memory sweep: %v, %+v", got, s.Targets[1])
	}
	s = validSpec(t, `name = "c"
[[target]]
name = "pg"
engine = "postgres"
[target.sweep]
setting = "cpus"
values = ["0", "0-1"]
`)
	if s.Targets[1].CPUs != "0-1" || s.Targets[1].Name != "pg.cpus=0-1" {
		t.Errorf("cpus sweep: %+v", s.Targets[1])
	}
}

// TestSweepBadInput: every bad sweep is a validation error naming its
// field.
func TestSweepBadInput(t *testing.T) {
	head := "name = \"x\"\n[[target]]\nname = \"sq\"\nengine = \"sqlite\"\n"
	sweep := func(body string) string { return head + "[target.sweep]\n" + body + "\n" }
	for _, c := range []struct{ name, src, field, says string }{
		{"empty values", sweep(`setting = "cache_size"` + "\nvalues = []"), "target[0].sweep.values", "empty"},
		{"no values", sweep(`setting = "cache_size"`), "target[0].sweep.values", "empty"},
		{"duplicate values", sweep(`setting = "cache_size"` + "\nvalues = [-2000, \"-2000\"]"), "target[0].sweep.values",
			`"-2000" is given twice (values[0] and values[1])`},
		{"empty setting", sweep(`values = [1, 2]`), "target[0].sweep.setting", "empty"},
		{"name", sweep(`setting = "name"` + "\nvalues = [\"a\", \"b\"]"), "target[0].sweep.setting", "name is a field of the target"},
		{"engine", sweep(`setting = "engine"` + "\nvalues = [\"a\", \"b\"]"), "target[0].sweep.setting", "engine is a field of the target"},
		{"dsn", sweep(`setting = "DSN"` + "\nvalues = [\"a\", \"b\"]"), "target[0].sweep.setting", "DSN is a field of the target"},
		{"basedir", sweep(`setting = "basedir"` + "\nvalues = [\"a\", \"b\"]"), "target[0].sweep.setting", "basedir is a field"},
		{"fixed in settings", head + "[target.settings]\ncache_size = -2000\n[target.sweep]\nsetting = \"cache_size\"\nvalues = [1, 2]\n",
			"target[0].sweep.setting", "cache_size is also fixed in [target.settings]"},
		{"fixed field", strings.Replace(head, "sqlite", "postgres", 1) + "memory = \"1GB\"\n[target.sweep]\nsetting = \"memory\"\nvalues = [\"2GB\"]\n",
			"target[0].sweep.setting", "memory is also fixed in the target"},
		{"two sweeps", head + "[[target.sweep]]\nsetting = \"cache_size\"\nvalues = [1]\n[[target.sweep]]\nsetting = \"synchronous\"\nvalues = [\"off\"]\n",
			"target[0].sweep", "more than one sweep"},
		{"values not an array", sweep(`setting = "cache_size"` + "\nvalues = \"1,2\""), "target[0].sweep.values", "is not an array"},
		{"value a table", sweep(`setting = "cache_size"` + "\nvalues = [1, {a = 2}]"), "target[0].sweep.values[1]", "a table is not allowed"},
		{"memory as number", strings.Replace(head, "sqlite", "postgres", 1) + "[target.sweep]\nsetting = \"memory\"\nvalues = [1024]\n",
			"target[0].sweep.values[0]", "memory takes a string"},
		{"bad value", sweep(`setting = "synchronous"` + "\nvalues = [\"full\", \"fast\"]"), "target[0].sweep.values[1]", `synchronous = "fast"`},
		{"unknown setting", sweep(`setting = "turbo"` + "\nvalues = [1]"), "target[0].sweep.values[0]", `unknown sqlite setting "turbo"`},
		{"embedded memory", sweep(`setting = "memory"` + "\nvalues = [\"1GB\"]"), "target[0].sweep.values[0]", "engine sqlite is embedded"},
		{"value makes a bad name", sweep(`setting = "cache_size"` + "\nvalues = [\"1 000\"]"), "target[0].sweep.values[0]", `makes the target name "sq.cache_size=1 000"`},
		{"cpu list with a comma", strings.Replace(head, "sqlite", "postgres", 1) + "[target.sweep]\nsetting = \"cpus\"\nvalues = [\"0,1\"]\n",
			"target[0].sweep.values[0]", "a CPU list as a range"},
		{"base not a value", sweep(`setting = "cache_size"` + "\nvalues = [1, 2]\nbase = 3"), "target[0].sweep.base", `"3" is not one of the values`},
		{"base twice", "base = \"other\"\n" + sweep(`setting = "cache_size"`+"\nvalues = [1, 2]\nbase = 2") + "[[target]]\nname = \"other\"\nengine = \"sqlite\"\n",
			"target[0].sweep.base", `the spec's base = "other" chooses another target`},
		{"unknown key", sweep(`setting = "cache_size"` + "\nvalues = [1]\nstep = 2"), "x.toml", "target.sweep.step"},
		{"clash between sweeps", `name = "x"
[[target]]
name = "a"
engine = "sqlite"
[target.sweep]
setting = "b.c"
values = [1]
[[target]]
name = "a.b"
engine = "sqlite"
[target.sweep]
setting = "c"
values = [1]
`, "target[1].sweep.values[0]", `makes the target "a.b.c=1", a name target[0] gives too`},
		{"clash with a target", head + "[target.sweep]\nsetting = \"cache_size\"\nvalues = [1]\n[[target]]\nname = \"sq.cache_size=1\"\nengine = \"sqlite\"\n",
			"target[0].sweep.values[0]", `a name target[1] gives too`},
		{"same name swept and plain", head + "[target.sweep]\nsetting = \"cache_size\"\nvalues = [1]\n[[target]]\nname = \"sq\"\nengine = \"sqlite\"\n",
			"target[1].name", `"sq" is used by two targets`},
		{"swept mark that lies", head + "[target.settings]\ncache_size = 5\n[target.swept]\nof = \"x\"\nsetting = \"cache_size\"\nvalue = \"6\"\n",
			"target[0].swept", `says cache_size = "6" but the target has "5"`},
		{"other target bad after expansion", sweep(`setting = "cache_size"`+"\nvalues = [1, 2]") + "[[target]]\nname = \"b\"\nengine = \"sqlite\"\n[target.settings]\nsynchronous = \"fast\"\n",
			"target[1].settings", "fast"},
		{"bad shared setting", head + "[target.settings]\nsynchronous = \"fast\"\n[target.sweep]\nsetting = \"cache_size\"\nvalues = [1, 2]\n",
			"target[0].settings", "fast"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := Parse([]byte(c.src), "x.toml", "")
			if err == nil {
				err = s.Validate()
			}
			var e *Error
			if !errors.As(err, &e) || e.Field != c.field || !strings.Contains(e.Msg, c.says) {
				t.Errorf("error %v, want field %s saying %q", err, c.field, c.says)
			}
		})
	}
}
