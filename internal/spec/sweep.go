package spec

import (
	"fmt"
	"slices"
	"strings"
)

// Sweep is a target's [target.sweep]: the target runs once per value of one
// setting, everything else kept, as the articles that plot throughput
// against a cache size, a memory limit or a durability setting do.
// Validate replaces the target by one target per value (expandSweeps),
// named SweptName(target, setting, value), each checked as a hand-written
// target is.
//
// The stored spec keeps those targets, each with its Swept, not the sweep:
// rerun then runs exactly the targets that ran, with the names their
// results are stored and compared under, whatever a later benchlab does
// with a sweep (how it names, orders or types the values, or which base it
// picks), and every command that reads targets (plan, report, compare,
// rerun) sees plain targets. The report finds the sweep in Swept, never in
// the names.
type Sweep struct {
	// Setting is an engine setting, which each value's target gets in its
	// settings, or a target field a sweep may vary: memory or cpus.
	Setting string `toml:"setting"`
	// Values are the setting's values, in the order the report shows them;
	// the report's ratios are to the first.
	Values []any `toml:"values"`
	// Base is the value whose target is the experiment's base when the
	// spec's base is empty or names this target; default the first value.
	Base any `toml:"base,omitempty"`
}

// Swept marks a target a sweep made: the target that declared the sweep,
// the setting it varies and the value this target runs (as its name
// writes it). It is stored with the target; a hand-written one must agree
// with the target's settings.
type Swept struct {
	Of      string `toml:"of"`
	Setting string `toml:"setting"`
	Value   string `toml:"value"`
}

// sweepFields are the fields of a [[target]] a sweep may vary; the other
// fields (name, engine, dsn, basedir, ...) say which system runs, not how.
var sweepFields = []string{"memory", "cpus"}

// SweptName names the target that runs value of a sweep of setting on the
// target named name: "pg.shared_buffers=1GB".
func SweptName(name, setting, value string) string {
	return name + "." + setting + "=" + value
}

// origin is where a validated target comes from in the file: its
// [[target]]'s index and, for a sweep's target, the value's index (-1 for
// a hand-written target).
type origin struct{ target, value int }

// targetField names the field sub (".settings", "" for the target) of
// target i as the file writes it: "target[2].settings", or for a sweep's
// target its value, "target[0].sweep.values[1]", since what every value
// shares was checked on the target before the sweep expanded.
func (s *Spec) targetField(i int, sub string) string {
	if i >= len(s.origins) {
		return fmt.Sprintf("target[%d]%s", i, sub)
	}
	o := s.origins[i]
	if o.value < 0 {
		return fmt.Sprintf("target[%d]%s", o.target, sub)
	}
	return fmt.Sprintf("target[%d].sweep.values[%d]", o.target, o.value)
}

// expandSweeps replaces each target that has a sweep by one target per
// value, in the value's order where the target stood, and moves a base
// that names the swept target (or the sweep's own base) to a value's
// target. A spec without sweeps is left as it is.
func (s *Spec) expandSweeps() error {
	if !slices.ContainsFunc(s.Targets, func(t Target) bool { return t.Sweep != nil }) {
		if len(s.origins) != len(s.Targets) {
			s.origins = nil
		}
		return nil
	}
	// The names as written must be unique too: base may name a swept
	// target.
	named := map[string]int{}
	for i, t := range s.Targets {
		if j, ok := named[t.Name]; ok && t.Name != "" {
			return errf(fmt.Sprintf("target[%d].name", i), "%q is used by two targets (target[%d] too); names must be unique", t.Name, j)
		}
		named[t.Name] = i
	}
	made := map[string]int{} // a name after expansion -> the [[target]] that gives it
	for i, t := range s.Targets {
		if t.Sweep == nil {
			made[t.Name] = i
		}
	}
	var out []Target
	var origins []origin
	baseFrom := -1 // the [[target]] whose sweep chose the base
	for i, t := range s.Targets {
		if t.Sweep == nil {
			out, origins = append(out, t), append(origins, origin{i, -1})
			continue
		}
		// What every value shares is checked once, on the target without
		// its sweep, so that its errors name the target's own fields.
		plain := t
		plain.Sweep = nil
		if err := s.checkTarget(plain, func(sub string) string { return fmt.Sprintf("target[%d]%s", i, sub) }); err != nil {
			return err
		}
		values, err := expandSweep(i, t)
		if err != nil {
			return err
		}
		for j, x := range values {
			if k, ok := made[x.Name]; ok {
				return errf(fmt.Sprintf("target[%d].sweep.values[%d]", i, j), "makes the target %q, a name target[%d] gives too; "+
					"names must be unique: rename one of the targets", x.Name, k)
			}
			made[x.Name] = i
			out, origins = append(out, x), append(origins, origin{i, j})
		}
		b := 0
		if t.Sweep.Base != nil {
			want := fmt.Sprint(t.Sweep.Base)
			if b = slices.IndexFunc(values, func(x Target) bool { return x.Swept.Value == want }); b < 0 {
				return errf(fmt.Sprintf("target[%d].sweep.base", i), "%q is not one of the values; want one of %s", want, valueList(values))
			}
		}
		switch {
		case s.Base == t.Name || (t.Sweep.Base != nil && s.Base == ""):
			s.Base, baseFrom = values[b].Name, i
		case t.Sweep.Base != nil && baseFrom >= 0:
			return errf(fmt.Sprintf("target[%d].sweep.base", i), "target[%d]'s sweep chose the base already (%s); "+
				"let one sweep choose it, or name it with base at the top of the spec", baseFrom, s.Base)
		case t.Sweep.Base != nil:
			return errf(fmt.Sprintf("target[%d].sweep.base", i), "the spec's base = %q chooses another target; give one of the two", s.Base)
		}
	}
	s.Targets, s.origins = out, origins
	return nil
}

// expandSweep makes the targets of target i's sweep, one per value.
func expandSweep(i int, t Target) ([]Target, error) {
	f := fmt.Sprintf("target[%d].sweep", i)
	sw := t.Sweep
	if t.Swept != nil {
		return nil, errf(f, "the target is a sweep's target already (swept); a target has one sweep")
	}
	setting := sw.Setting
	if strings.TrimSpace(setting) == "" {
		return nil, errf(f+".setting", "empty; want an engine setting of %s (e.g. a cache size), memory or cpus", t.Engine)
	}
	if !validName(setting) {
		return nil, errf(f+".setting", "%q has characters other than %s; want an engine setting's name, memory or cpus", setting, nameChars)
	}
	field, isField := TargetField(setting)
	if isField && !slices.Contains(sweepFields, field) {
		return nil, errf(f+".setting", "%s is a field of the target that says which system runs, not how; "+
			"a sweep varies an engine setting of %s, memory or cpus (one [[target]] per %s instead)", setting, t.Engine, field)
	}
	if isField {
		if cur := targetValue(t, field); cur != "" {
			return nil, errf(f+".setting", "%s is also fixed in the target (%s = %q); remove it there, the sweep sets it per value",
				field, field, cur)
		}
	} else {
		for k, v := range t.Settings {
			if strings.EqualFold(k, setting) {
				return nil, errf(f+".setting", "%s is also fixed in [target.settings] (%s = %v); remove it there, the sweep sets it per value",
					setting, k, v)
			}
		}
	}
	if len(sw.Values) == 0 {
		return nil, errf(f+".values", "empty; want the values to run, e.g. values = [\"128MB\", \"1GB\"]")
	}
	seen := map[string]int{}
	var out []Target
	for j, v := range sw.Values {
		vf := fmt.Sprintf("%s.values[%d]", f, j)
		switch v.(type) {
		case string, int64, float64, bool:
		default:
			return nil, errf(vf, "%s is not allowed; want a string, number or boolean", tomlKind(v))
		}
		if _, ok := v.(string); isField && !ok {
			return nil, errf(vf, "%s is not allowed; %s takes a string, e.g. %s", tomlKind(v), field,
				map[string]string{"memory": `"2GB"`, "cpus": `"0-1"`}[field])
		}
		text := fmt.Sprint(v)
		if strings.TrimSpace(text) == "" {
			return nil, errf(vf, "empty; want a value of %s", setting)
		}
		if k, dup := seen[text]; dup {
			return nil, errf(f+".values", "%q is given twice (values[%d] and values[%d]); want each value once", text, k, j)
		}
		seen[text] = j
		name := SweptName(t.Name, setting, text)
		if !validName(name) {
			return nil, errf(vf, "%q makes the target name %q, which has characters other than %s; write the value with those "+
				"(a CPU list as a range, \"0-3\")", text, name, nameChars)
		}
		x := t
		x.Name, x.Sweep, x.Swept = name, nil, &Swept{Of: t.Name, Setting: setting, Value: text}
		x.Settings = make(map[string]any, len(t.Settings)+1)
		for k, s := range t.Settings {
			x.Settings[k] = s
		}
		switch field {
		case "memory":
			x.Memory = text
		case "cpus":
			x.CPUs = text
		default:
			x.Settings[setting] = v
		}
		out = append(out, x)
	}
	return out, nil
}

// targetValue is the value of the sweepable field or the setting named
// setting on t, as a sweep writes it, and whether t has it.
func targetValue(t Target, setting string) string {
	switch field, _ := TargetField(setting); field {
	case "memory":
		return t.Memory
	case "cpus":
		return t.CPUs
	}
	for k, v := range t.Settings {
		if strings.EqualFold(k, setting) {
			return fmt.Sprint(v)
		}
	}
	return ""
}

func valueList(ts []Target) string {
	var vs []string
	for _, t := range ts {
		vs = append(vs, fmt.Sprintf("%q", t.Swept.Value))
	}
	return strings.Join(vs, ", ")
}

// checkSwept checks the Swept marks of targets, which stored specs carry
// and a spec file may too: each says a value the target has, and the
// targets of one sweep vary one setting, each value once. The report
// draws its sweep tables from them.
func checkSwept(targets []Target, field func(i int, sub string) string) error {
	setting := map[string]string{}
	values := map[[2]string]bool{}
	for i, t := range targets {
		w := t.Swept
		if w == nil {
			continue
		}
		f := field(i, ".swept")
		if w.Of == "" || w.Setting == "" || w.Value == "" {
			return errf(f, "want of, setting and value: swept marks a sweep's target in a stored spec; leave it out of a spec you write")
		}
		if got := targetValue(t, w.Setting); got != w.Value {
			return errf(f, "says %s = %q but the target has %q; swept marks a sweep's target in a stored spec, "+
				"leave it out of a spec you write", w.Setting, w.Value, got)
		}
		if s, ok := setting[w.Of]; ok && s != w.Setting {
			return errf(f+".setting", "%q, but the sweep of %q varies %q; a sweep varies one setting", w.Setting, w.Of, s)
		}
		setting[w.Of] = w.Setting
		if values[[2]string{w.Of, w.Value}] {
			return errf(f+".value", "%q is run by two targets of the sweep of %q; want each value once", w.Value, w.Of)
		}
		values[[2]string{w.Of, w.Value}] = true
	}
	return nil
}

// SweepGroup is one sweep of a validated or stored spec: the target that
// declared it, the setting it varies, and its values with the targets that
// ran them, in the sweep's order.
type SweepGroup struct {
	Of, Setting     string
	Values, Targets []string
}

// Sweeps lists the spec's sweeps from its targets' Swept marks, in the
// order their targets come; none for a spec without sweeps.
func (s Spec) Sweeps() []SweepGroup {
	var out []SweepGroup
	for _, t := range s.Targets {
		w := t.Swept
		if w == nil {
			continue
		}
		i := slices.IndexFunc(out, func(g SweepGroup) bool { return g.Of == w.Of })
		if i < 0 {
			out = append(out, SweepGroup{Of: w.Of, Setting: w.Setting})
			i = len(out) - 1
		}
		out[i].Values = append(out[i].Values, w.Value)
		out[i].Targets = append(out[i].Targets, t.Name)
	}
	return out
}

// checkSweepTables rejects a [target.sweep] that is not one table with a
// string setting and an array of values: the decoder's own errors name
// neither the target nor the field.
func checkSweepTables(targets []map[string]any) error {
	for i, t := range targets {
		v, ok := t["sweep"]
		if !ok {
			continue
		}
		f := fmt.Sprintf("target[%d].sweep", i)
		m, ok := v.(map[string]any)
		if _, many := v.([]map[string]any); many {
			return errf(f, "more than one sweep; a target sweeps one setting: give each sweep a [[target]] of its own")
		}
		if !ok {
			return errf(f, "%s is not a table; want [target.sweep] with setting = \"...\" and values = [...]", tomlKind(v))
		}
		if s, ok := m["setting"]; ok {
			if _, ok := s.(string); !ok {
				return errf(f+".setting", "%s is not allowed; want a setting's name as a string", tomlKind(s))
			}
		}
		if vs, ok := m["values"]; ok {
			list, ok := vs.([]any)
			if !ok {
				return errf(f+".values", "%s is not an array; want values = [...], e.g. [\"128MB\", \"1GB\"]", tomlKind(vs))
			}
			for j, v := range list {
				switch v.(type) {
				case string, int64, float64, bool:
				default:
					return errf(fmt.Sprintf("%s.values[%d]", f, j), "%s is not allowed; want a string, number or boolean", tomlKind(v))
				}
			}
		}
	}
	return nil
}
