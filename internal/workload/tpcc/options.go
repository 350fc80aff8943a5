package tpcc

import (
	"github.com/spf13/pflag"

	"benchlab/internal/workload"
)

// Options are TPC-C's scale, read from [workload.tpcc].
type Options struct {
	// Warehouses is the scale: 10 districts, 30,000 customers and 100,000
	// stock rows each (clause 4.3).
	Warehouses int `toml:"warehouses"`
	// MaxTries is how many times a transaction runs before a conflict
	// (serialization failure, deadlock, lock wait timeout) fails it, as
	// pgbench's --max-tries; 1 never retries, 0 means the default, 10.
	MaxTries int `toml:"max_tries"`
}

// defaultTries is max_tries' default.
const defaultTries = 10

// tries is MaxTries with 0 as the default.
func (o *Options) tries() int {
	if o.MaxTries <= 0 {
		return defaultTries
	}
	return o.MaxTries
}

// NewOptions returns one warehouse and up to 10 tries per transaction.
func (Suite) NewOptions() workload.Options { return defaults() }

func defaults() *Options { return &Options{Warehouses: 1, MaxTries: defaultTries} }

// opts returns p's tpcc options, or the defaults.
func opts(p workload.Params) *Options { return workload.OptionsOf(p, defaults) }

// Preset sizes nothing: the scale is the user's choice.
func (o *Options) Preset(string) bool { return false }

// Flags binds --warehouses.
func (o *Options) Flags(fs *pflag.FlagSet) {
	fs.IntVar(&o.Warehouses, "warehouses", o.Warehouses, "tpcc suite: warehouses (the scale)")
	fs.IntVar(&o.MaxTries, "max-tries", o.MaxTries, "tpcc suite: tries per transaction on serialization failures and deadlocks (1: no retry)")
}

// FlatKeys are the keys older spec files wrote under [workload].
func (*Options) FlatKeys() []string { return []string{"warehouses"} }
