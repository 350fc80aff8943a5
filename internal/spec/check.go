package spec

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"benchlab/internal/dsn"
	"benchlab/internal/engine"
	"benchlab/internal/workload"
)

// This file checks one target of a spec (its name, engine, settings and server
// fields), the engines' kinds against the suite, and the interleaving.

// checkTarget checks one target's name, engine, settings and server
// fields, naming each field through at (the field's suffix: ".name").
func (s *Spec) checkTarget(t Target, at func(sub string) string) error {
	if t.Name == "" {
		return errf(at(".name"), "must not be empty")
	}
	if !validName(t.Name) {
		return errf(at(".name"), "%q has characters other than %s", t.Name, nameChars)
	}
	d, ok := engine.Lookup(t.Engine)
	if !ok {
		return errf(at(".engine"), "unknown engine %q; known: %s", t.Engine, strings.Join(engine.Names(), ", "))
	}
	for _, k := range slices.Sorted(maps.Keys(t.Settings)) {
		if field, ok := TargetField(k); ok {
			return errf(at(".settings."+k), "is a field of the target, not an engine setting; want %s = ... "+
				"directly under [[target]], before [target.settings]", field)
		}
	}
	if err := engine.CheckSettings(d, t.TargetSettings()); err != nil {
		return errf(at(".settings"), "%v", err)
	}
	if err := checkClient(t, d); err != nil {
		return errf(at(".client"), "%v", err)
	}
	if tc, ok := d.(engine.TargetChecker); ok {
		if err := tc.CheckTarget(t.EngineTarget(s.Getenv)); err != nil {
			return errf(at(""), "%v", err)
		}
	} else if t.Basedir != "" || t.Version != "" || t.DSN != "" || t.Config != "" || t.CPUs != "" || t.Memory != "" {
		return errf(at(""), "engine %s is embedded; basedir, version, dsn, config, cpus and memory are for servers benchlab starts", t.Engine)
	}
	return nil
}

// checkKinds refuses a target whose engine cannot run the suite (a
// key-value store under an SQL suite, or the reverse), naming the engines
// that can.
func checkKinds(targets []Target, suite workload.Suite, field func(i int, sub string) string) error {
	var need []engine.Kind
	switch n := suite.(type) {
	case workload.Needer:
		need = []engine.Kind{n.Needs()}
	case workload.MultiNeeder:
		need = n.NeedsAny()
	default:
		return nil
	}
	for i, t := range targets {
		d, _ := engine.Lookup(t.Engine)
		if k := engine.KindOf(d); k != "" && !slices.Contains(need, k) {
			var fit []string
			for _, name := range engine.Names() {
				if o, _ := engine.Lookup(name); slices.Contains(need, engine.KindOf(o)) {
					fit = append(fit, name)
				}
			}
			kinds := make([]string, len(need))
			for j, k := range need {
				kinds[j] = string(k)
			}
			return errf(field(i, ".engine"), "%s is a %s engine; the %s suite runs on %s engines: %s",
				t.Engine, k, suite.Name(), strings.Join(kinds, " or "), strings.Join(fit, ", "))
		}
	}
	return nil
}

// StepToolTarget returns the first of targets whose engine runs its steps
// in an outside program (engine.StepTool), and that program's name.
func StepToolTarget(targets []Target) (i int, tool string, ok bool) {
	for i, t := range targets {
		d, _ := engine.Lookup(t.Engine)
		if st, ok := d.(engine.StepTool); ok {
			return i, st.Tool(), true
		}
	}
	return 0, "", false
}

// nameRE is what a target name may hold: it names the cells' data dirs,
// and '=' writes a sweep value's target (pg.shared_buffers=1GB).
var nameRE = regexp.MustCompile(`^[A-Za-z0-9._+=-]+$`)

// nameChars says what nameRE allows, for error messages.
const nameChars = "letters, digits, '.', '_', '-', '+' and '='"

func validName(s string) bool { return nameRE.MatchString(s) }

// checkInterleave validates workload.interleave: a turn of 1 ms to 10 s,
// at most half the shortest test, two targets or more, and workers benchlab
// runs itself in closed loops (a paced or counted step keeps its own
// schedule, and a program's step runs outside benchlab's workers).
func (s Spec) checkInterleave(suite workload.Suite) error {
	w := s.Workload
	d := w.Interleave.Duration
	if d == 0 {
		return nil
	}
	const field = "workload.interleave"
	if d < time.Millisecond || d > 10*time.Second {
		return errf(field, "%s is not allowed; want a turn of 1ms to 10s, or 0 for off", d)
	}
	if shortest := min(w.ReadTime.Duration, w.WriteTime.Duration); 2*d > shortest {
		return errf(field, "%s is more than half the shortest test time (%s): each target needs several turns; "+
			"want at most %s", d, shortest, shortest/2)
	}
	if len(s.Targets) < 2 {
		return errf(field, "interleaving needs two targets or more to take turns; this spec has %d", len(s.Targets))
	}
	if a, b, where, ok := sharedDatabase(s.Targets); ok {
		return errf(field, "targets %s and %s reach one database (%s) by dsn: taking turns, each would load its tables "+
			"over the other's; give each its own database; remove workload.interleave", a, b, where)
	}
	if w.Rate > 0 || w.Events > 0 {
		return errf(field, "cannot interleave paced (workload.rate) or counted (workload.events) steps: "+
			"their workers keep their own schedule; remove one of them")
	}
	if i, tool, ok := StepToolTarget(s.Targets); ok {
		return errf(field, "%s (%s) runs each step in %s, its own process: benchlab cannot give it turns; "+
			"remove workload.interleave", s.targetField(i, ""), s.Targets[i].Name, tool)
	}
	if o, ok := suite.(workload.OutsideRunner); ok {
		return errf(field, "suite %s runs its steps in %s, not in benchlab's workers, so they cannot take turns; "+
			"remove workload.interleave", s.Workload.Suite, o.RunsOutside())
	}
	return nil
}

// sharedDatabase finds two targets whose DSNs reach the same database on
// the same server (a port left out is the family's default), which can
// run one after the other but not side by side: both load the same
// tables. A DSN dsn.Parse does not read (a mongodb:// URL) is compared
// as written.
func sharedDatabase(targets []Target) (a, b, where string, ok bool) {
	seen := map[string]string{}
	for _, t := range targets {
		if t.DSN == "" {
			continue
		}
		key := t.DSN
		if info, err := dsn.Parse(t.DSN); err == nil {
			port := info.Port
			if port == "" {
				port = map[string]string{"postgres": "5432", "mysql": "3306"}[info.Family]
			}
			key = fmt.Sprintf("%s %s:%s/%s", info.Family, info.Host, port, info.DB)
		}
		if first, dup := seen[key]; dup {
			if _, err := dsn.Parse(t.DSN); err != nil {
				key = "the same dsn"
			}
			return first, t.Name, key, true
		}
		seen[key] = t.Name
	}
	return "", "", "", false
}

// checkClient refuses a client value other than driver or fast, and any
// client on an engine that has only one.
func checkClient(t Target, d engine.Driver) error {
	if t.Client == "" {
		return nil
	}
	if _, err := engine.ParseClient(t.Client); err != nil {
		return err
	}
	if _, ok := d.(engine.ClientChooser); !ok {
		var with []string
		for _, name := range engine.Names() {
			if o, _ := engine.Lookup(name); o != nil {
				if _, ok := o.(engine.ClientChooser); ok {
					with = append(with, name)
				}
			}
		}
		return fmt.Errorf("engine %s has one client; a target chooses its client on %s", t.Engine, strings.Join(with, ", "))
	}
	return nil
}
