package tpcc

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"benchlab/internal/workload"
	"benchlab/internal/workload/tpcc/tpccdoc"
	"benchlab/internal/workload/tpcc/tpccgen"
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
	// Isolation is the isolation level each terminal sets on its session,
	// as sysbench-tpcc's --trx_level does: "rc", "rr" or "ser" (its names),
	// or "read-committed", "repeatable-read", "serializable". Empty keeps
	// the server's default (PostgreSQL's default_transaction_isolation,
	// MySQL's transaction_isolation), which sysbench-tpcc would replace with
	// its own default, RR.
	Isolation string `toml:"isolation"`
	// Denormalize, Transactions, FindAndModify and ReadPreference are
	// py-tpcc's MongoDB options, for document targets only (package
	// tpccdoc): order lines embedded in their orders, multi-document
	// transactions, findAndModify for the counters, the clients' read
	// preference ("" is primary).
	// ScaleFactor is py-tpcc's scalefactor, for every target: items,
	// customers per district and initial new orders per district divided
	// by it, and the keys the terminals draw kept within them (1, the
	// default, is TPC-C's population; 0 means 1). Any other value is not a
	// TPC-C population.
	ScaleFactor    float64 `toml:"scalefactor"`
	Denormalize    bool    `toml:"denormalize"`
	Transactions   bool    `toml:"transactions"`
	FindAndModify  bool    `toml:"find_and_modify"`
	ReadPreference string  `toml:"read_preference"`
}

// doc is the options of a document run.
func (o *Options) doc() tpccdoc.Config {
	return tpccdoc.Config{Warehouses: o.Warehouses, Scale: o.population(), MaxTries: o.tries(), Denormalize: o.Denormalize,
		Transactions: o.Transactions, FindAndModify: o.FindAndModify, ReadPreference: o.ReadPreference}
}

// levelOf reads an isolation option: sysbench-tpcc's trx_level names (RC,
// RR, SER) or the SQL names with '-' or ' ' between words, any case;
// IsolationUnknown for anything else, and for the empty string.
func levelOf(s string) Isolation {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "rc":
		return ReadCommitted
	case "rr":
		return RepeatableRead
	case "ser":
		return Serializable
	}
	if l := parseIsolation(s); l != ReadUncommitted {
		return l
	}
	return IsolationUnknown
}

// scale is ScaleFactor with 0 (options built before it existed) as 1.
func (o *Options) scale() float64 {
	if o.ScaleFactor == 0 {
		return 1
	}
	return o.ScaleFactor
}

// population is a warehouse's population at the scale factor, the same
// for the SQL and the document terminals.
func (o *Options) population() tpccgen.Scale { return tpccgen.ScaleOf(o.scale()) }

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

func defaults() *Options {
	return &Options{Warehouses: 1, ScaleFactor: 1, MaxTries: defaultTries, FindAndModify: true}
}

// opts returns p's tpcc options, or the defaults.
func opts(p workload.Params) *Options { return workload.OptionsOf(p, defaults) }

// Preset sizes nothing: the scale is the user's choice.
func (o *Options) Preset(string) bool { return false }

// Flags binds --warehouses, --max-tries and --isolation, and --trx_level,
// sysbench-tpcc's name for --isolation with its values (RC, RR, SER).
func (o *Options) Flags(fs *pflag.FlagSet) {
	fs.IntVar(&o.Warehouses, "warehouses", o.Warehouses, "tpcc suite: warehouses (the scale)")
	fs.IntVar(&o.MaxTries, "max-tries", o.MaxTries, "tpcc suite: tries per transaction on serialization failures and deadlocks (1: no retry)")
	fs.Var(isolationFlag{&o.Isolation, false}, "isolation", "tpcc suite: isolation level each terminal sets, rc, rr or ser (sysbench-tpcc's --trx_level); empty: the server's default")
	fs.Float64Var(&o.ScaleFactor, "scalefactor", o.ScaleFactor, "tpcc suite: py-tpcc's scale factor (items, customers and new orders per district divided by it; 1 is TPC-C's population, "+
		"any other is not a TPC-C-compliant run)")
	fs.BoolVar(&o.Denormalize, "denormalize", o.Denormalize, "tpcc suite, document targets: embed order lines in their orders (py-tpcc's denormalize)")
	fs.BoolVar(&o.Transactions, "transactions", o.Transactions, "tpcc suite, document targets: run each transaction as a multi-document transaction")
	fs.BoolVar(&o.FindAndModify, "find-and-modify", o.FindAndModify, "tpcc suite, document targets: findAndModify for the counters and the oldest new order")
	fs.StringVar(&o.ReadPreference, "read-preference", o.ReadPreference, "tpcc suite, document targets: the clients' read preference (primary, nearest, ...)")
	fs.Var(isolationFlag{&o.Isolation, true}, "trx_level", "tpcc suite: sysbench-tpcc's name for --isolation, with its values RC, RR or SER")
}

// isolationFlag is the isolation option on the command line: a level
// levelOf reads, or for --trx_level (short) one of sysbench-tpcc's names
// (tpcc.lua's RC, RR and SER; any case). A value it cannot read is an
// error, which the command line reports naming the flag.
type isolationFlag struct {
	level *string
	short bool
}

func (f isolationFlag) String() string {
	if f.level == nil {
		return ""
	}
	return *f.level
}

func (f isolationFlag) Set(v string) error {
	switch {
	case f.short && !slices.Contains([]string{"rc", "rr", "ser"}, strings.ToLower(v)):
		return fmt.Errorf("%q is not one of sysbench-tpcc's levels; want RC, RR or SER", v)
	case !f.short && v != "" && levelOf(v) == IsolationUnknown:
		return fmt.Errorf("%q is not an isolation level; want rc, rr or ser, read-committed, repeatable-read or "+
			"serializable, or leave it out for the server's default", v)
	}
	*f.level = v
	return nil
}

func (isolationFlag) Type() string { return "level" }

// FlatKeys are the keys older spec files wrote under [workload].
func (*Options) FlatKeys() []string { return []string{"warehouses"} }

// StoredDefaults reads a spec stored before max_tries existed as what its
// runs did: a transaction failing on a conflict was not run again (max_tries
// 1), and it was counted in TPS and tpmC as if it had committed, which the
// runner no longer does.
func (o *Options) StoredDefaults(has func(string) bool) []string {
	if has("max_tries") {
		return nil
	}
	o.MaxTries = 1
	return []string{"stored before max_tries existed: conflicts were not retried, and transactions that failed " +
		"were counted in TPS and tpmC as committed ones (today they are errors and count in no throughput)"}
}
