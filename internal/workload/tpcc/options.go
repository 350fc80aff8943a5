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
}

// NewOptions returns one warehouse.
func (Suite) NewOptions() workload.Options { return defaults() }

func defaults() *Options { return &Options{Warehouses: 1} }

// opts returns p's tpcc options, or the defaults.
func opts(p workload.Params) *Options { return workload.OptionsOf(p, defaults) }

// Preset sizes nothing: the scale is the user's choice.
func (o *Options) Preset(string) bool { return false }

// Flags binds --warehouses.
func (o *Options) Flags(fs *pflag.FlagSet) {
	fs.IntVar(&o.Warehouses, "warehouses", o.Warehouses, "tpcc suite: warehouses (the scale)")
}

// FlatKeys are the keys older spec files wrote under [workload].
func (*Options) FlatKeys() []string { return []string{"warehouses"} }
