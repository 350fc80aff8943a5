package spec_test

import (
	"strings"
	"testing"

	. "benchlab/internal/spec"
	"benchlab/internal/workload/insertbench"
	"benchlab/internal/workload/sysbench"
	"benchlab/internal/workload/tpcc"
)

// oldStored is a spec as benchlab stored it with every experiment before
// the suites had options of their own (the encoder's layout, every field of
// the time written, suite options flat under [workload]): no k_rand_type,
// pacing nor max_tries existed yet.
const oldStored = `name = "old"
base = "a"
preset = ""
workdir = ""
seed = 42
client_cpus = ""
sequence = false

[[target]]
  name = "a"
  engine = "sqlite"
  basedir = ""
  version = ""
  dsn = ""
  config = ""
  cpus = ""
  [target.settings]

[workload]
  suite = "%s"
  tests = []
  tables = 8
  table_size = 10000
  threads = [1]
  read_time = "1s"
  write_time = "1s"
  warmup = "0s"
  warm_time = "1s"
  postwrite_wait = "0s"
  prepared = true
  repeats = 1
  report_interval = "1s"
  num_keys = 0
  key_size = 20
  value_size = 400
  compression_ratio = 0.5
  mb_write_per_sec = 2.0
  drain_time = "0s"
  clients = 1
  rows = 1000
  inserts = 1000
  query_time = "1s"
  rates = [100]
  bursty = %v
  warehouses = 1
`

func stored(suite string, bursty bool) []byte {
	return []byte(strings.NewReplacer("%s", suite, "%v", map[bool]string{true: "true", false: "false"}[bursty]).Replace(oldStored))
}

// TestStoredSpecOldDefaults reads specs stored before options whose default
// changed (a stored run must read back, and rerun, as it ran): a stored spec without k_rand_type ran with k from
// sysbench 1.0.20's "special" distribution, one without pacing ran the
// catch-up schedule (even, or bursty with bursty = true), one without
// max_tries never retried; each reads back as that, with a note on what can
// no longer be redone, while the same text given as a spec file gets
// today's defaults, and a spec stored today reads back unchanged.
func TestStoredSpecOldDefaults(t *testing.T) {
	s, err := ParseStored(stored("sysbench", false), "stored spec")
	if err != nil {
		t.Fatal(err)
	}
	if k := s.Params().Options.(*sysbench.Options).KRandType; k != sysbench.KSpecial {
		t.Errorf("old stored sysbench spec: k_rand_type %q, want %q (what runs before the option loaded)", k, sysbench.KSpecial)
	}
	if n := strings.Join(s.Workload.StoredNotes(), "\n"); !strings.Contains(n, "one table") {
		t.Errorf("old stored sysbench spec: notes %q; want one on the table drawn per transaction", n)
	}
	if !strings.Contains(s.TOML(), `k_rand_type = "special"`) {
		t.Errorf("a rerun of the old spec would not store k special:\n%s", s.TOML())
	}
	file, err := Parse(stored("sysbench", false), "old.toml", "")
	if err != nil {
		t.Fatal(err)
	}
	if k := file.Params().Options.(*sysbench.Options).KRandType; k != sysbench.KUniform || len(file.Workload.StoredNotes()) != 0 {
		t.Errorf("spec file without k_rand_type: %q, notes %q; want uniform and no notes", k, file.Workload.StoredNotes())
	}
	back, err := ParseStored([]byte(file.TOML()), "stored spec")
	if err != nil {
		t.Fatal(err)
	}
	if k := back.Params().Options.(*sysbench.Options).KRandType; k != sysbench.KUniform || len(back.Workload.StoredNotes()) != 0 {
		t.Errorf("spec stored today: k_rand_type %q, notes %q; want uniform and no notes", k, back.Workload.StoredNotes())
	}

	for bursty, want := range map[bool]string{false: "even", true: "bursty"} {
		s, err := ParseStored(stored("insert", bursty), "stored spec")
		if err == nil {
			err = s.Validate()
		}
		if err != nil {
			t.Fatal(err)
		}
		if p := s.Params().Options.(*insertbench.Options).EffectivePacing(); p != want {
			t.Errorf("old stored insert spec with bursty = %v: pacing %q, want %q", bursty, p, want)
		}
	}
	file, err = Parse(stored("insert", false), "old.toml", "")
	if err != nil {
		t.Fatal(err)
	}
	if p := file.Params().Options.(*insertbench.Options).EffectivePacing(); p != "iibench" {
		t.Errorf("spec file without pacing: %q, want iibench", p)
	}

	s, err = ParseStored(stored("tpcc", false), "stored spec")
	if err != nil {
		t.Fatal(err)
	}
	if n := s.Params().Options.(*tpcc.Options).MaxTries; n != 1 || len(s.Workload.StoredNotes()) != 1 {
		t.Errorf("old stored tpcc spec: max_tries %d, notes %q; want 1 and a note on failed transactions counted", n, s.Workload.StoredNotes())
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
}
