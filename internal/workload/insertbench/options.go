package insertbench

import (
	"time"

	"github.com/spf13/pflag"

	"benchlab/internal/workload"
)

// Options are the Insert Benchmark's sizes (docs/method.md 1.8), read from
// [workload.insert].
type Options struct {
	// Clients is the client count: each client has its own table and its
	// own inserter, deleter and query connections.
	Clients int `toml:"clients"`
	// Rows is the l.i0 row count over all clients; Inserts the l.i1 + l.i2
	// inserts over all clients, split 4:1.
	Rows    int64 `toml:"rows"`
	Inserts int64 `toml:"inserts"`
	// QueryTime is how long each qr/qp step lasts when its background insert
	// rate is met; Rates are those rates, in inserts per second per client.
	QueryTime workload.Duration `toml:"query_time"`
	Rates     []int             `toml:"rates"`
	// Pacing is how background inserts are paced: "iibench" (the original
	// client's limiter, which never makes up time lost to a stall; docs/method.md
	// 1.5), "even" or "bursty" (fixed schedules that a stalled inserter
	// catches up back to back).
	Pacing string `toml:"pacing"`
	// Bursty is the older spelling of pacing = "bursty", read from specs
	// stored before pacing existed.
	Bursty bool `toml:"bursty,omitempty"`
}

// NewOptions returns the faithful defaults: one client, 1M rows loaded,
// 500k inserts, 60 s query steps at 100, 500 and 1000 inserts/s.
func (Suite) NewOptions() workload.Options { return defaults() }

func defaults() *Options {
	return &Options{Clients: 1, Rows: 1_000_000, Inserts: 500_000,
		QueryTime: workload.Duration{Duration: 60 * time.Second}, Rates: []int{100, 500, 1000},
		Pacing: "iibench"}
}

// opts returns p's insert options, or the defaults.
func opts(p workload.Params) *Options { return workload.OptionsOf(p, defaults) }

// Presets describes the suite's own presets for `benchlab list`.
func (Suite) Presets() map[string]string {
	return map[string]string{
		"cached": "Insert Benchmark sized as the published cached runs: 30M rows loaded, 40M + 10M inserts, " +
			"1800 s query steps (hours; the database must fit in memory)",
		"io-bound": "Insert Benchmark sized as the published IO-bound runs: 800M rows loaded, 4M + 1M inserts, " +
			"1800 s query steps (needs a server memory limit well below the database size)",
	}
}

// Preset applies the sizes of a preset.
func (o *Options) Preset(name string) bool {
	switch name {
	case "smoke":
		o.Rows, o.Inserts, o.QueryTime = 20_000, 5_000, workload.Duration{Duration: 2 * time.Second}
	case "cached":
		o.Rows, o.Inserts, o.QueryTime = 30_000_000, 50_000_000, workload.Duration{Duration: 1800 * time.Second}
	case "io-bound":
		o.Rows, o.Inserts, o.QueryTime = 800_000_000, 5_000_000, workload.Duration{Duration: 1800 * time.Second}
	default:
		return false
	}
	return true
}

// Flags binds the options to --clients, --rows, --inserts, --query-time,
// --rates and --pacing.
func (o *Options) Flags(fs *pflag.FlagSet) {
	fs.IntVar(&o.Clients, "clients", o.Clients, "insert suite: clients, one table each")
	fs.Int64Var(&o.Rows, "rows", o.Rows, "insert suite: rows loaded by l.i0 over all clients")
	fs.Int64Var(&o.Inserts, "inserts", o.Inserts, "insert suite: inserts of l.i1 + l.i2 over all clients")
	fs.Var(&o.QueryTime, "query-time", "insert suite: duration of each qr/qp step when its rate is met")
	fs.IntSliceVar(&o.Rates, "rates", o.Rates, "insert suite: comma-separated background insert rates per client, e.g. 100,500,1000")
	fs.StringVar(&o.Pacing, "pacing", o.Pacing, "insert suite: background insert pacing, iibench (the original client's limiter), even or bursty")
}

// EffectivePacing is the pacing the options ask for: "bursty" for the older
// bursty = true, "iibench" when unset.
func (o *Options) EffectivePacing() string {
	switch {
	case o.Bursty:
		return "bursty"
	case o.Pacing == "":
		return "iibench"
	}
	return o.Pacing
}

// FlatKeys are the keys older spec files wrote under [workload].
func (*Options) FlatKeys() []string {
	return []string{"clients", "rows", "inserts", "query_time", "rates", "pacing", "bursty"}
}

// StoredDefaults reads a spec stored before pacing existed as what its runs
// did: background inserts on a fixed schedule that a stalled inserter caught
// up, evenly spread ("even"), or each second's quota at its start with
// bursty = true ("bursty"); iibench's limiter came with the pacing option.
func (o *Options) StoredDefaults(has func(string) bool) []string {
	if has("pacing") {
		return nil
	}
	o.Pacing = "even"
	if o.Bursty {
		o.Pacing, o.Bursty = "bursty", false
	}
	return nil
}
