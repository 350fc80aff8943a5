package runner

import (
	"fmt"

	"benchlab/internal/store"
	"benchlab/internal/workload"
)

// errorPolicy fails a measured step at n threads when one of its roles'
// failed operations pass maxRate of its attempted ones (spec
// workload.max_error_rate; 0 or 1: no limit): every result of the step is
// failed, the first with the cause in its error samples, and the returned
// error fails the target, so a run whose operations fail (a full disk, a
// refused statement) is never stored as ok.
func errorPolicy(st workload.Step, rs []*store.Result, maxRate float64) error {
	if maxRate <= 0 || maxRate >= 1 {
		return nil
	}
	for _, r := range rs {
		if r.Action || r.Status != store.StatusOK || r.ErrorRate() <= maxRate {
			continue
		}
		name := st.Name
		if r.Role.Name != "" {
			name += "/" + r.Role.Name
		}
		cause := fmt.Sprintf("%s: %d of %d operations failed (%.3g%%), more than workload.max_error_rate %.3g%%",
			name, r.Errors, r.Events+r.Errors, 100*r.ErrorRate(), 100*maxRate)
		if len(r.ErrorSamples) > 0 {
			cause += "; first: " + r.ErrorSamples[0]
		}
		for _, o := range rs {
			o.Status = store.StatusFailed
		}
		r.ErrorSamples = append([]string{cause}, r.ErrorSamples...)
		return fmt.Errorf("%s", cause)
	}
	return nil
}
