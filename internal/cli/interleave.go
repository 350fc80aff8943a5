package cli

import (
	"fmt"
	"strings"
	"time"

	"benchlab/internal/preflight"
	"benchlab/internal/server"
	"benchlab/internal/spec"
)

// DefaultTurn is the turn run gives each target when a spec leaves
// workload.interleave unset and interleaving is free: 20 ms, as calibrate
// measured (a 600 ms A/A ratio spread 1.8-4% in 20 ms turns against 12.5%
// one target after the other on a 2-CPU VM; README "Interleaved runs").
const DefaultTurn = 20 * time.Millisecond

// scheduleTargets decides how the targets of each repeat run when the spec
// leaves workload.interleave unset, and returns the sentence the plan
// prints: which mode runs and why ("" for a single target). Interleaving
// is chosen where it costs nothing the spec needs: every step can take
// turns (spec.InterleaveError), and all targets fit in memory at once
// (available bytes, 0 when unknown): embedded engines' caches together,
// and managed servers only when each has a memory limit and the limits
// fit. A server reached by DSN runs anyway and costs nothing more. An
// explicit value, a turn or "off", is kept and named.
func scheduleTargets(s *spec.Spec, available int64) string {
	w := &s.Workload
	if len(s.Targets) < 2 {
		return ""
	}
	const optOut = `workload.interleave = "off" or run --interleave off`
	switch {
	case w.Interleave.Duration > 0:
		return fmt.Sprintf("targets: interleaved, in turns of %s (workload.interleave); each repeat's runs are judged as pairs",
			w.Interleave.Duration)
	case w.Interleave.Off:
		return `targets: one after the other (workload.interleave = "off"); without history, verdicts use Welch's t-test ` +
			"over the repeats"
	}
	sequential := func(why string) string {
		w.Interleave = spec.Turn{Off: true}
		return "targets: one after the other, because " + why + "; verdicts without history use Welch's t-test over the repeats"
	}
	if err := s.InterleaveError(DefaultTurn); err != nil {
		msg := err.Error()
		if e, ok := err.(*spec.Error); ok {
			msg = e.Msg
		}
		if i := strings.Index(msg, "; remove workload.interleave"); i >= 0 {
			msg = msg[:i]
		}
		return sequential(fmt.Sprintf("they cannot take turns of %s: %s", DefaultTurn, msg))
	}
	var need int64
	var unlimited []string
	for _, t := range s.Targets {
		f, err := server.FlavorOf(t.Engine)
		switch {
		case err != nil:
			return sequential(err.Error())
		case f == nil:
			need += preflight.CacheNeed(*s, t)
		case t.DSN != "":
			// A running server: opening it beside the others costs nothing.
		case t.Memory == "":
			unlimited = append(unlimited, t.Name)
		default:
			n, err := server.ParseMemory(t.Memory)
			if err != nil {
				return sequential(fmt.Sprintf("target %s: memory %v", t.Name, err))
			}
			need += n
		}
	}
	if len(unlimited) > 0 {
		return sequential(fmt.Sprintf("server target(s) %s have no memory limit, so whether they fit in memory side by side "+
			"is unknown (give each target memory = \"...\", or set workload.interleave)", strings.Join(unlimited, ", ")))
	}
	if available > 0 && need > available {
		return sequential(fmt.Sprintf("side by side the targets may use %s and %s is available", preflight.BytesIEC(need), preflight.BytesIEC(available)))
	}
	w.Interleave = spec.Turn{Duration: DefaultTurn}
	return fmt.Sprintf("targets: interleaved by default, in turns of %s: they fit in memory side by side, and a slow spell "+
		"of the machine then falls on every target alike, so each repeat's runs are judged as pairs; interleaved results "+
		"leave out engine counters per operation (%s: one after the other)", DefaultTurn, optOut)
}
