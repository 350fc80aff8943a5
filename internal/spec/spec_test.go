package spec

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	_ "benchlab/internal/engine/sqlite"
	_ "benchlab/internal/workload/sysbench"
)

const two = `name = "x"
base = "b"
[[target]]
name = "a"
engine = "sqlite"
[[target]]
name = "b"
engine = "sqlite"
[target.settings]
cache_size = -2000
[workload]
repeats = 3
`

func TestDefaultsPresetsAndExpand(t *testing.T) {
	s, err := Parse([]byte(two), "x.toml", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	w := s.Workload
	if w.ReadTime.Duration != 600*time.Second || w.WriteTime.Duration != 900*time.Second || !w.PostwriteWait.Auto ||
		w.Warmup.Duration != 5*time.Second || w.WarmTime.Duration != 60*time.Second || !w.Prepared {
		t.Errorf("faithful defaults not applied: %+v", w)
	}
	if got := s.Targets[1].TargetSettings()["cache_size"]; got != "-2000" {
		t.Errorf("integer setting = %q", got)
	}
	var order []string
	for _, c := range s.Expand() {
		order = append(order, c.Target.Name)
	}
	if got := strings.Join(order, " "); got != "a b b a a b" {
		t.Errorf("cells %q, want rounds rotated across targets", got)
	}
	s, err = Parse([]byte(two+"read_time = \"7s\"\n"), "x.toml", "smoke")
	if err != nil {
		t.Fatal(err)
	}
	if s.Preset != "smoke" || s.Workload.TableSize != 10000 || s.Workload.ReadTime.Duration != 7*time.Second ||
		s.Workload.WriteTime.Duration != time.Second || s.Workload.PostwriteWait.Auto {
		t.Errorf("smoke preset then file values: %+v", s.Workload)
	}
	p := s.Params()
	if p.PostwriteWait != 0 || p.Unprepared {
		t.Errorf("params %+v", p)
	}
	round := s.TOML()
	back, err := Parse([]byte(round), "round", "")
	if err != nil {
		t.Fatalf("stored spec does not parse back: %v\n%s", err, round)
	}
	if back.Workload.ReadTime != s.Workload.ReadTime || back.Workload.TableSize != 10000 {
		t.Errorf("round trip lost values: %+v", back.Workload)
	}
}

func TestEmbeddedRejectsServerFields(t *testing.T) {
	s, err := Parse([]byte(strings.Replace(two, `engine = "sqlite"`, "engine = \"sqlite\"\nbasedir = \"/opt/pg\"", 1)), "x", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "target[0]") || !IsInvalid(err) {
		t.Errorf("err = %v", err)
	}
}

func TestPostwriteWait(t *testing.T) {
	for _, c := range []struct {
		v    string
		ok   bool
		auto bool
	}{{"auto", true, true}, {"0s", true, false}, {"90s", true, false}, {"-1s", false, false}, {"later", false, false}} {
		s, err := Parse([]byte(two+"postwrite_wait = \""+c.v+"\"\n"), "x", "")
		if err == nil {
			err = s.Validate()
		}
		if (err == nil) != c.ok {
			t.Errorf("%s: err %v", c.v, err)
		}
		if err == nil && s.Workload.PostwriteWait.Auto != c.auto {
			t.Errorf("%s: auto %v", c.v, s.Workload.PostwriteWait.Auto)
		}
	}
}

// TestSettingsMustBeATable checks that target settings given as something
// other than a table of plain values are errors naming the field, not
// silently dropped.
func TestSettingsMustBeATable(t *testing.T) {
	head := "name = \"x\"\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n"
	for _, c := range []struct{ src, field, says string }{
		{head + "settings = 5\n", "target[0].settings", "the number 5 is not a table"},
		{head + "settings = \"wal\"\n", "target[0].settings", "is not a table"},
		{head + "settings = [1, 2]\n", "target[0].settings", "an array is not a table"},
		{head + "[[target]]\nname = \"b\"\nengine = \"sqlite\"\nsettings = true\n", "target[1].settings", "the boolean true"},
		{head + "[target.settings]\njournal_mode = { a = 1 }\n", "target[0].settings.journal_mode", "a table is not allowed"},
	} {
		_, err := Parse([]byte(c.src), "x.toml", "")
		var e *Error
		if !errors.As(err, &e) || e.Field != c.field || !strings.Contains(e.Msg, c.says) {
			t.Errorf("%q: error %v, want field %s saying %q", c.src, err, c.field, c.says)
		}
	}
	s, err := Parse([]byte(head+"[target.settings]\njournal_mode = \"wal\"\ncache_size = -2000\n"), "x.toml", "")
	if err != nil || s.Targets[0].TargetSettings()["cache_size"] != "-2000" {
		t.Errorf("a table of settings: %v %v", err, s.Targets)
	}
}

// TestTargetFieldInSettings: a target's own field (basedir, dsn, ...)
// under [target.settings] is refused when the spec is validated, naming the
// key and where it belongs, for a server engine and an embedded one alike;
// a setting that is no target field passes.
func TestTargetFieldInSettings(t *testing.T) {
	for _, c := range []struct{ engine, key, field string }{
		{"postgres", "basedir", "basedir"}, {"postgres", "DSN", "dsn"}, {"mariadb", "version", "version"},
		{"sqlite", "cpus", "cpus"}, {"sqlite", "engine", "engine"}, {"postgres", "Config", "config"},
	} {
		src := "name = \"x\"\n[[target]]\nname = \"a\"\nengine = \"" + c.engine + "\"\n[target.settings]\n" + c.key + " = \"/x\"\n"
		s, err := Parse([]byte(src), "x.toml", "")
		if err == nil {
			err = s.Validate()
		}
		var e *Error
		if !errors.As(err, &e) || e.Field != "target[0].settings."+c.key ||
			!strings.Contains(e.Msg, "is a field of the target, not an engine setting; want "+c.field+" = ... directly under [[target]]") {
			t.Errorf("%s %s: error %v, want target[0].settings.%s naming %s under [[target]]", c.engine, c.key, err, c.key, c.field)
		}
	}
	if _, ok := TargetField("work_mem"); ok {
		t.Error("work_mem is a server setting, not a target field")
	}
}

// TestGateSection: [gate] values out of range are errors naming the field;
// good ones round-trip through the stored TOML.
func TestGateSection(t *testing.T) {
	for _, c := range []struct {
		gate, field string
	}{
		{"alpha = 1.5", "gate.alpha"},
		{"alpha = -0.01", "gate.alpha"},
		{"threshold = 1", "gate.threshold"},
		{"threshold = 0", "gate.threshold"},
		{"min_effect = -0.2", "gate.min_effect"},
		{`correction = "bonferroni"`, "gate.correction"},
	} {
		s, err := Parse([]byte(two+"[gate]\nfail_on_regression = true\n"+c.gate+"\n"), "x", "")
		if err != nil {
			t.Fatalf("%s: %v", c.gate, err)
		}
		err = s.Validate()
		if err == nil || !IsInvalid(err) || !strings.HasPrefix(err.Error(), c.field+": ") {
			t.Errorf("%s: err %v, want a validation error naming %s", c.gate, err, c.field)
		}
	}
	if err := func() error {
		s, err := Parse([]byte(two+"[gate]\nfail_on_regression = true\nalpha = 0.05\ncorrection = \"bh\"\n"), "x", "")
		if err != nil {
			return err
		}
		return s.Validate()
	}(); err != nil {
		t.Fatal(err)
	}
	s, _ := Parse([]byte(two+"[gate]\nfail_on_regression = true\nalpha = 0.05\ncorrection = \"bh\"\n"), "x", "")
	back, err := Parse([]byte(s.TOML()), "round", "")
	if err != nil {
		t.Fatal(err)
	}
	o := back.Gate.Options()
	if !back.Gate.FailOnRegression || o.Alpha != 0.05 || o.Correction != "bh" || o.Threshold != 0.05 || o.MinEffect != 0.02 {
		t.Errorf("gate after round trip: %+v, options %+v", back.Gate, o)
	}
	if s, _ := Parse([]byte(two), "x", ""); s.Gate.FailOnRegression || s.Gate.Options().Correction != "holm" {
		t.Errorf("no [gate]: %+v, want the gate off with Holm as its default", s.Gate)
	}
}

// TestRepeatSeed: each repeat gets its own positive int64 seed, the same
// every time for the same experiment seed and repeat.
func TestRepeatSeed(t *testing.T) {
	seen := map[uint64]int{}
	for r := 1; r <= 1000; r++ {
		s := RepeatSeed(42, r)
		if s == 0 || s > math.MaxInt64 || s == 42 {
			t.Fatalf("RepeatSeed(42, %d) = %d, want a positive int64 other than the experiment seed", r, s)
		}
		if prev, dup := seen[s]; dup {
			t.Fatalf("repeats %d and %d share seed %d", prev, r, s)
		}
		seen[s] = r
		if RepeatSeed(42, r) != s {
			t.Fatalf("RepeatSeed(42, %d) not deterministic", r)
		}
	}
	if RepeatSeed(43, 1) == RepeatSeed(42, 1) {
		t.Error("different experiment seeds give the same repeat seed")
	}
}

// TestTargetMemory: a target's memory limit is checked before anything
// runs: a size that is not one, or too small, is an error naming
// target[i] and memory; an embedded engine cannot take it (it runs inside
// benchlab); a server target with a good size passes and keeps it.
func TestTargetMemory(t *testing.T) {
	for _, c := range []struct{ engine, memory, want string }{
		{"postgres", "lots", "memory: \"lots\" is not a size"},
		{"postgres", "10MB", "under 64MB"},
		{"sqlite", "1GB", "engine sqlite is embedded; basedir, version, dsn, config, cpus and memory are for servers"},
	} {
		src := "name = \"x\"\n[[target]]\nname = \"a\"\nengine = \"" + c.engine + "\"\nmemory = \"" + c.memory + "\"\n"
		s, err := Parse([]byte(src), "x.toml", "")
		if err == nil {
			err = s.Validate()
		}
		var e *Error
		if !errors.As(err, &e) || !strings.HasPrefix(e.Field, "target[0]") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s memory %q: error %v, want one naming target[0] and %q", c.engine, c.memory, err, c.want)
		}
	}
	s, err := Parse([]byte("name = \"x\"\n[[target]]\nname = \"a\"\nengine = \"postgres\"\nmemory = \"2GB\"\n"), "x.toml", "")
	if err == nil {
		err = s.Validate()
	}
	if err != nil || s.Targets[0].EngineTarget(nil).Memory != "2GB" || !strings.Contains(s.TOML(), `memory = "2GB"`) {
		t.Errorf("postgres memory 2GB: %v; target %+v", err, s.Targets[0])
	}
}

// TestInterleave checks workload.interleave: a turn within 1 ms-10 s and at
// most half the shortest test, two targets or more, no paced or counted
// steps; a valid one is kept in the stored spec, and none is not written.
func TestInterleave(t *testing.T) {
	two := "name = \"x\"\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n[[target]]\nname = \"b\"\nengine = \"sqlite\"\n"
	one := "name = \"x\"\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n"
	byDSN := func(engine, a, b string) string {
		return "name = \"x\"\n[[target]]\nname = \"a\"\nengine = \"" + engine + "\"\ndsn = \"" + a + "\"\n" +
			"[[target]]\nname = \"b\"\nengine = \"" + engine + "\"\ndsn = \"" + b + "\"\n"
	}
	pgs := func(a, b string) string { return byDSN("postgres", a, b) }
	mys := func(a, b string) string { return byDSN("mariadb", a, b) }
	for _, c := range []struct{ targets, workload, want string }{
		{two, `interleave = "500us"`, "want a turn of 1ms to 10s"},
		{two, `interleave = "11s"`, "want a turn of 1ms to 10s"},
		{two, "interleave = \"300ms\"\nread_time = \"500ms\"", "more than half the shortest test time (500ms)"},
		{one, `interleave = "20ms"`, "needs two targets or more"},
		{two, "interleave = \"20ms\"\nrate = 100.0", "paced (workload.rate)"},
		{two, "interleave = \"20ms\"\nevents = 10", "counted (workload.events)"},
		// Two DSNs of one database (5432 is PostgreSQL's default port).
		{pgs("postgres://u@127.0.0.1/db", "host=127.0.0.1 port=5432 user=v dbname=db"), `interleave = "20ms"`,
			"targets a and b reach one database (postgres 127.0.0.1:5432/db) by dsn"},
		{mys("u:p@tcp(127.0.0.1:3306)/sbtest", "v@tcp(127.0.0.1:3306)/sbtest"), `interleave = "20ms"`,
			"targets a and b reach one database (mysql 127.0.0.1:3306/sbtest) by dsn"},
	} {
		s, err := Parse([]byte(c.targets+"[workload]\n"+c.workload+"\n"), "x.toml", "")
		if err == nil {
			err = s.Validate()
		}
		var e *Error
		if !errors.As(err, &e) || e.Field != "workload.interleave" || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one naming workload.interleave and %q", c.workload, err, c.want)
		}
	}
	// Two databases of one server take turns.
	if s, err := Parse([]byte(pgs("postgres://u@127.0.0.1/a", "postgres://u@127.0.0.1/b")+"[workload]\ninterleave = \"20ms\"\n"),
		"x.toml", ""); err != nil || s.InterleaveError(20*time.Millisecond) != nil {
		t.Errorf("two databases of one server: %v %v", err, s.InterleaveError(20*time.Millisecond))
	}
	s, err := Parse([]byte(two+"[workload]\ninterleave = \"20ms\"\n"), "x.toml", "")
	if err == nil {
		err = s.Validate()
	}
	if err != nil || s.Workload.Interleave.Duration != 20*time.Millisecond || !strings.Contains(s.TOML(), `interleave = "20ms"`) {
		t.Errorf("interleave 20ms: %v, stored spec:\n%s", err, s.TOML())
	}
	if d := Default(); strings.Contains(d.TOML(), "interleave") || !d.Workload.Interleave.Unset() {
		t.Error("a spec without interleave stores one")
	}
	// "off" and 0 ask for one target after the other, and the stored
	// spec says so; a stored spec without the key ran that way too.
	for _, v := range []string{`"off"`, `"0"`, `"0s"`} {
		s, err := Parse([]byte(two+"[workload]\ninterleave = "+v+"\n"), "x.toml", "")
		if err == nil {
			err = s.Validate()
		}
		if err != nil || !s.Workload.Interleave.Off || s.Workload.Interleave.Duration != 0 || !strings.Contains(s.TOML(), `interleave = "off"`) {
			t.Errorf("interleave = %s: %v %+v, stored spec:\n%s", v, err, s.Workload.Interleave, s.TOML())
		}
	}
	if _, err := Parse([]byte(two+"[workload]\ninterleave = \"sometimes\"\n"), "x.toml", ""); err == nil ||
		!strings.Contains(err.Error(), `"sometimes" is not a duration`) || !strings.Contains(err.Error(), `or "off"`) {
		t.Errorf("interleave = sometimes: %v, want an error naming the value and off", err)
	}
	if s, err := ParseStored([]byte(two+"[workload]\n"), "stored"); err != nil || !s.Workload.Interleave.Off {
		t.Errorf("stored spec without interleave: %v %+v, want off (it ran one target after the other)", err, s.Workload.Interleave)
	}
	if err := Default().InterleaveError(20 * time.Millisecond); err == nil || !strings.Contains(err.Error(), "two targets") {
		t.Errorf("one target's InterleaveError: %v", err)
	}
}

// TestNameControlCharacters: an experiment name with a control character
// (an escape sequence that would repaint a terminal listing runs) is
// refused, naming the field; printable non-ASCII text is kept.
func TestNameControlCharacters(t *testing.T) {
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{`"nightly \u001b[2J"`, false},
		{`"a\tb"`, false},
		{`"base\u0085line"`, false},
		{`"nächtlich – 16 vs 17"`, true},
	} {
		src := strings.Replace(two, `name = "x"`, "name = "+c.name, 1)
		s, err := Parse([]byte(src), "x", "")
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		err = s.Validate()
		if c.ok != (err == nil) {
			t.Errorf("%s: err %v, want ok %v", c.name, err, c.ok)
		}
		if err != nil && (!IsInvalid(err) || !strings.HasPrefix(err.Error(), "name: ")) {
			t.Errorf("%s: err %v, want a validation error naming name", c.name, err)
		}
	}
}
