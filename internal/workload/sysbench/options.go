package sysbench

import (
	"github.com/spf13/pflag"

	"benchlab/internal/workload"
)

// Options are the sysbench suite's own options, read from
// [workload.sysbench]. The table count and size stay shared fields
// (workload.tables, workload.table_size), as the kv suite sizes its keys
// from table_size too.
type Options struct {
	// KRandType is the distribution of k in the load: "uniform" (sysbench
	// 1.1, as the articles ran it; docs/method.md 2.2) or "special" (sysbench
	// 1.0.20's default prepare, for comparisons with Debian's sysbench).
	KRandType string `toml:"k_rand_type"`
}

// NewOptions returns the articles' load: k uniform.
func (Suite) NewOptions() workload.Options { return defaults() }

func defaults() *Options { return &Options{KRandType: KUniform} }

// opts returns p's sysbench options, or the defaults.
func opts(p workload.Params) *Options { return workload.OptionsOf(p, defaults) }

// Preset sizes nothing of the suite's own: the presets set the shared sizes.
func (o *Options) Preset(string) bool { return false }

// Flags binds --k-rand-type.
func (o *Options) Flags(fs *pflag.FlagSet) {
	fs.StringVar(&o.KRandType, "k-rand-type", o.KRandType, "sysbench suite: distribution of k in the load, uniform (sysbench 1.1) or special (1.0.20)")
}

// FlatKeys are the keys older spec files wrote under [workload].
func (*Options) FlatKeys() []string { return []string{"k_rand_type"} }

// StoredDefaults reads a spec stored before k_rand_type existed as what its
// runs did: benchlab loaded k from sysbench 1.0.20's "special"
// distribution then, and its transactions drew one table per transaction
// (oltp_common.lua draws one per group of statements; benchlab has done so
// since k_rand_type came, and cannot do otherwise).
func (o *Options) StoredDefaults(has func(string) bool) []string {
	if has("k_rand_type") {
		return nil
	}
	o.KRandType = KSpecial
	return []string{"stored before k_rand_type existed: k was loaded from sysbench 1.0.20's \"special\" distribution, " +
		"and with several tables each transaction read and wrote one table (today a table per group of statements, as oltp_common.lua)"}
}
