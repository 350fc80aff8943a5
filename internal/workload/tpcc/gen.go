package tpcc

import "benchlab/internal/workload/tpcc/tpccgen"

// The generators, the constants of NURand and the mix are tpccgen's,
// shared with the document terminals.
type rnd = tpccgen.Rand

func newRand(seed uint64) *rnd { return tpccgen.NewRand(seed) }

const (
	cLoad = tpccgen.CLoad
	cRun  = tpccgen.CRun
	cID   = tpccgen.CID
	cItem = tpccgen.CItem
)

var (
	lastName = tpccgen.LastName
	fixed    = tpccgen.Fixed
)

// Kinds are the five transactions in the order of Tally.Kind, as the
// result's facts name them (<kind>_ops, <kind>_errors, <kind>_retries).
var Kinds = tpccgen.Kinds

// Mix is the standard mix in percent, in the order of Kinds.
var Mix = tpccgen.Mix

// CommittedMix returns each transaction's share of the committed ones and
// the shares that depart from Mix beyond chance (tpccgen.CommittedMix).
func CommittedMix(facts map[string]float64) (shares []float64, departs string) {
	return tpccgen.CommittedMix(facts)
}
