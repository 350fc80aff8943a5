package kv

import (
	"fmt"

	"benchlab/internal/workload"
)

// Size estimates what a run loads: fillseq writes num_keys keys; on disk
// each takes its key and its value compressed by compression_ratio, twice
// over at the run's peak (overwrites and files waiting for compaction).
func (Suite) Size(p workload.Params) workload.Size {
	o := opts(p)
	n := numKeys(p)
	per := float64(o.KeySize) + float64(o.ValueSize)*o.CompressionRatio
	return workload.Size{
		Loads: map[string]int64{"fillseq": n},
		Bytes: int64(2 * float64(n) * per),
		Basis: fmt.Sprintf("%d keys (kv.num_keys) x 2 x (%d B key + %d B value x %.2g compression)", n, o.KeySize, o.ValueSize,
			o.CompressionRatio),
	}
}
