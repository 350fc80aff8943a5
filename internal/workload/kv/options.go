package kv

import (
	"github.com/spf13/pflag"

	"benchlab/internal/workload"
)

// Options are the kv suite's sizes, read from [workload.kv]: db_bench's
// --num, --key_size, --value_size, --compression_ratio, MB_WRITE_PER_SEC
// and the revrange drain (docs/method.md 4.1 and 4.2).
type Options struct {
	// NumKeys is the key count; 0 means the shared workload.table_size.
	NumKeys int64 `toml:"num_keys"`
	// KeySize and ValueSize are bytes per key and value.
	KeySize   int `toml:"key_size"`
	ValueSize int `toml:"value_size"`
	// CompressionRatio is how compressible generated values are.
	CompressionRatio float64 `toml:"compression_ratio"`
	// MBWritePerSec limits the writer of the *whilewriting steps.
	MBWritePerSec float64 `toml:"mb_write_per_sec"`
	// DrainTime is the revrange step, run to let the compaction debt of the
	// load drain; 0 means read_time capped at 300 s.
	DrainTime workload.Duration `toml:"drain_time"`
}

// NewOptions returns benchmark_compare.sh's defaults: 20-byte keys,
// 400-byte values compressible to half, 2 MB/s for the background writer.
func (Suite) NewOptions() workload.Options { return defaults() }

func defaults() *Options {
	return &Options{KeySize: 20, ValueSize: 400, CompressionRatio: 0.5, MBWritePerSec: 2}
}

// opts returns p's kv options, or the defaults.
func opts(p workload.Params) *Options { return workload.OptionsOf(p, defaults) }

// Preset sizes nothing of its own: num_keys follows the shared table_size,
// which the presets set.
func (o *Options) Preset(string) bool { return false }

// Flags binds the options to --num-keys, --key-size, --value-size,
// --compression-ratio, --mb-write-per-sec and --drain-time.
func (o *Options) Flags(fs *pflag.FlagSet) {
	fs.Int64Var(&o.NumKeys, "num-keys", o.NumKeys, "kv suite: keys loaded (db_bench --num; 0: --table-size)")
	fs.IntVar(&o.KeySize, "key-size", o.KeySize, "kv suite: bytes per key")
	fs.IntVar(&o.ValueSize, "value-size", o.ValueSize, "kv suite: bytes per value")
	fs.Float64Var(&o.CompressionRatio, "compression-ratio", o.CompressionRatio, "kv suite: compressibility of generated values")
	fs.Float64Var(&o.MBWritePerSec, "mb-write-per-sec", o.MBWritePerSec, "kv suite: MB/s of the *whilewriting writer")
	fs.Var(&o.DrainTime, "drain-time", "kv suite: duration of the revrange drain (0: read time capped at 300s)")
}

// FlatKeys are the keys older spec files wrote under [workload].
func (*Options) FlatKeys() []string {
	return []string{"num_keys", "key_size", "value_size", "compression_ratio", "mb_write_per_sec", "drain_time"}
}
