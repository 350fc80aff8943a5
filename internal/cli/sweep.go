package cli

import (
	"errors"
	"strings"

	"benchlab/internal/spec"
)

// applySweep gives the flag-built target the sweep of --sweep
// setting=v1,v2,...; the spec's validation expands it as it expands a
// [target.sweep].
func (f *runFlags) applySweep(s *spec.Spec) error {
	if len(f.sweep) == 0 {
		return nil
	}
	if f.spec != "" {
		return usagef("flag --sweep: only for runs without a spec file; put [target.sweep] with setting and values under the [[target]] to sweep")
	}
	if len(f.sweep) > 1 {
		return usagef("flag --sweep: given %d times; a run sweeps one setting", len(f.sweep))
	}
	k, v, ok := strings.Cut(f.sweep[0], "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		return usagef("flag --sweep: %q is not setting=value,value,...; e.g. --sweep cache_size=-2000,-64000", f.sweep[0])
	}
	values := splitList(v)
	if len(values) == 0 {
		return usagef("flag --sweep: %s has no values; want setting=value,value,..., e.g. --sweep %s=a,b", k, k)
	}
	t := &s.Targets[0]
	for name := range t.Settings {
		if strings.EqualFold(name, k) {
			return usagef("flag --sweep: %s is also given with --set; give it once, in --sweep", k)
		}
	}
	t.Sweep = &spec.Sweep{Setting: k}
	for _, x := range values {
		t.Sweep.Values = append(t.Sweep.Values, x)
	}
	return nil
}

// sweepError names --sweep in a validation error about the sweep it gave
// the flag-built target ("target[0].sweep.values: ..."), which a user of
// flags did not write.
func (f *runFlags) sweepError(err error) error {
	var se *spec.Error
	if len(f.sweep) == 0 || f.spec != "" || !errors.As(err, &se) || !strings.HasPrefix(se.Field, "target[0].sweep") {
		return err
	}
	return usagef("flag --sweep: %s (%s)", se.Msg, strings.TrimPrefix(se.Field, "target[0]."))
}
