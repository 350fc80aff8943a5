package report

import (
	"os"
	"slices"
	"strings"
	"testing"

	"benchlab/internal/spec"
	"benchlab/internal/store"
	_ "benchlab/internal/workload/sysbench"
)

// TestHeaderDescribesSuite checks the header's workload line: a suite that
// does not describe itself gets the generic line (tpcc's own words are
// checked in its package, which imports this one).
func TestHeaderDescribesSuite(t *testing.T) {
	for suite, want := range map[string]string{
		"sysbench": "workload: suite sysbench (all tests), 1 table(s) of 1000000 rows, threads [1 4]",
	} {
		spec := "name = \"h\"\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n[workload]\nsuite = \"" + suite +
			"\"\nthreads = [1, 4]\nwrite_time = \"30s\"\nwarmup = \"5s\"\nrepeats = 3\n"
		d := &Data{Experiment: store.Experiment{ID: 1, Name: "h", Base: "a", Targets: []string{"a"}, Spec: spec}}
		h := strings.Join(header(d), "\n")
		if !strings.Contains(h, want) {
			t.Errorf("%s: header\n%s\nlacks %q", suite, h, want)
		}
	}
}

// TestRunNotes gives each target's run notes (a cleanup part left out, from
// the manifest) one line however many runs had them, naming the runs.
func TestRunNotes(t *testing.T) {
	m := func(notes ...string) string { return store.Manifest{Notes: notes}.JSON() }
	const note = "postload: CHECKPOINT left out: user plain is neither superuser nor a member of pg_checkpoint"
	d := &Data{Experiment: store.Experiment{ID: 1, Name: "n", Base: "a", Targets: []string{"a", "b"}},
		Runs: []store.Run{{ID: 1, Target: "a", Status: "ok", Manifest: m(note)}, {ID: 2, Target: "b", Status: "ok", Manifest: m()},
			{ID: 3, Target: "a", Status: "ok", Manifest: m(note)}}}
	var got []string
	for _, n := range notes(d, nil) {
		if strings.Contains(n, "CHECKPOINT") {
			got = append(got, n)
		}
	}
	if want := "a: " + note + " (run 1, 3)"; len(got) != 1 || got[0] != want {
		t.Errorf("notes %q; want the one line %q", got, want)
	}
}

// TestHeaderOldStoredSpec reads an experiment stored before k_rand_type
// existed as what it ran: k "special", and the table drawn per transaction
// in a "workload as run" line (a stored run reads back as it ran).
func TestHeaderOldStoredSpec(t *testing.T) {
	spec := "name = \"h\"\n[[target]]\nname = \"a\"\nengine = \"sqlite\"\n[workload]\nsuite = \"sysbench\"\ntables = 8\n"
	d := &Data{Experiment: store.Experiment{ID: 1, Name: "h", Base: "a", Targets: []string{"a"}, Spec: spec}}
	h := strings.Join(header(d), "\n")
	for _, want := range []string{"k special (sysbench 1.0.20's default", "workload as run: stored before k_rand_type existed"} {
		if !strings.Contains(h, want) {
			t.Errorf("header\n%s\nlacks %q", h, want)
		}
	}
	d.Experiment.Spec += "[workload.sysbench]\nk_rand_type = \"uniform\"\n"
	if h := strings.Join(header(d), "\n"); !strings.Contains(h, "k uniform") || strings.Contains(h, "workload as run") {
		t.Errorf("header of a spec stored today\n%s\nwant k uniform and no note", h)
	}
}

// TestHeaderTargetLine checks each target's header line: engine, version
// and settings, and for a run whose server never started (no version, no
// settings read back) the engine alone, without a stray separator.
func TestHeaderTargetLine(t *testing.T) {
	ok := store.Manifest{}
	ok.Engine.Settings = map[string]string{"fsync": "on", "work_mem": "4MB"}
	d := &Data{Experiment: store.Experiment{ID: 1, Name: "h", Base: "a", Targets: []string{"a", "b"}},
		Runs: []store.Run{{ID: 1, Target: "a", Engine: "postgres", Version: "15.18", Status: "ok", Manifest: ok.JSON()},
			{ID: 2, Target: "b", Engine: "mariadb", Status: "failed", Manifest: store.Manifest{}.JSON()}}}
	h := header(d)
	for _, want := range []string{"target a: postgres 15.18; fsync=on work_mem=4MB", "target b: mariadb"} {
		if !slices.Contains(h, want) {
			t.Errorf("header\n%s\nlacks the line %q", strings.Join(h, "\n"), want)
		}
	}
}

// TestHeaderPresetOverridden: `run examples/sqlite-sync.toml --preset
// smoke` keeps the file's table_size of 1,000,000 (a file's values win over
// the preset) and loads 1,000,000 rows; the header warns that the spec
// overrode the preset, states the rows loaded, and no longer calls the
// table tiny. Without the override the smoke line stays as it was.
func TestHeaderPresetOverridden(t *testing.T) {
	src, err := os.ReadFile("../../examples/sqlite-sync.toml")
	if err != nil {
		t.Fatal(err)
	}
	sp, err := spec.Parse(src, "sqlite-sync.toml", "smoke")
	if err != nil {
		t.Fatal(err)
	}
	if sp.Workload.TableSize != 1_000_000 {
		t.Fatalf("table_size %d: the example no longer sets its own", sp.Workload.TableSize)
	}
	d := &Data{Experiment: store.Experiment{ID: 1, Name: "s", Base: "a", Targets: []string{"a"}, Preset: "smoke", Spec: sp.TOML()},
		Runs: []store.Run{{ID: 1, Target: "a", Status: store.StatusOK}},
		Results: map[int64][]store.Result{1: {{Test: "prepare", Action: true, Warm: true, Status: store.StatusOK,
			Seconds: 2, Rows: 1_000_000}}}}
	h := strings.Join(header(d), "\n")
	for _, want := range []string{"SMOKE PRESET: NOT FOR CONCLUSIONS", "PRESET SMOKE OVERRIDDEN by the spec's own values: table_size 1000000 (preset: 10000)",
		"loaded (rows the prepare step inserted, all tables): a 1000000 rows"} {
		if !strings.Contains(h, want) {
			t.Errorf("header lacks %q:\n%s", want, h)
		}
	}
	if strings.Contains(h, "tiny table") {
		t.Errorf("header calls a 1,000,000-row table tiny:\n%s", h)
	}
	plain := spec.Default()
	if err := spec.ApplyPreset(&plain, "smoke"); err != nil {
		t.Fatal(err)
	}
	d = &Data{Experiment: store.Experiment{ID: 1, Name: "s", Base: "a", Targets: []string{"a"}, Preset: "smoke", Spec: plain.TOML()}}
	h = strings.Join(header(d), "\n")
	if !strings.Contains(h, "(tiny table, 1-second tests)") || strings.Contains(h, "OVERRIDDEN") {
		t.Errorf("a plain smoke run's header:\n%s", h)
	}
}
