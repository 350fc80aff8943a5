package tpccgen

import (
	"fmt"
	"math"
	"strings"
)

// Kinds are the five transactions in the order of Tally.Kind, as the
// result's facts name them (<kind>_ops, <kind>_errors, <kind>_retries).
var Kinds = []string{"new_order", "payment", "order_status", "delivery", "stock_level"}

// Mix is the standard mix in percent (clause 5.2.3: Payment at least 43%,
// the other three at least 4%, New-Order the rest), in the order of Kinds.
var Mix = []float64{45, 43, 4, 4, 4}

// CommittedMix returns each transaction's share in percent of the
// transactions that completed (facts <kind>_ops; failed ones are not
// counted), and a description of the shares that depart from Mix by more
// than chance allows, empty when none does. Chance is 4 standard deviations
// of the share at that many transactions, and at least 1 percentage point:
// a run drawing the standard mix is flagged about once in 10,000, while a
// mix skewed by failures (Payments that fail under contention) is.
func CommittedMix(facts map[string]float64) (shares []float64, departs string) {
	var n float64
	for _, k := range Kinds {
		n += facts[k+"_ops"]
	}
	if n == 0 {
		return nil, ""
	}
	var off []string
	for i, k := range Kinds {
		s := 100 * facts[k+"_ops"] / n
		shares = append(shares, s)
		p := Mix[i] / 100
		tol := max(1, 400*math.Sqrt(p*(1-p)/n))
		if math.Abs(s-Mix[i]) > tol {
			off = append(off, fmt.Sprintf("%s %.1f%% (want %g%% ± %.1f)", k, s, Mix[i], tol))
		}
	}
	return shares, strings.Join(off, ", ")
}
