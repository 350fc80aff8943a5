package cli

import (
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"benchlab/internal/spec"
	"benchlab/internal/workload"
)

// suiteFlags are the flags of every suite's own options
// (workload.Options.Flags). They are parsed before the suite is known (it may
// come from the spec file), so each given value is kept as text and applied
// to the chosen suite's options after the file, through the suite's own
// flag set.
type suiteFlags struct {
	// owners lists the suites that declare each flag.
	owners map[string][]string
	// given holds each suite flag's values in the order given.
	given map[string][]string
	order []string
}

// recorder is a suite flag's value on the command line: it checks each
// value with a scratch copy of the suite's options and keeps its text.
type recorder struct {
	pflag.Value
	name string
	sf   *suiteFlags
}

func (r recorder) Set(v string) error {
	if err := r.Value.Set(v); err != nil {
		return err
	}
	if _, ok := r.sf.given[r.name]; !ok {
		r.sf.order = append(r.sf.order, r.name)
	}
	r.sf.given[r.name] = append(r.sf.given[r.name], v)
	return nil
}

// addSuiteFlags declares every configurable suite's flags on fs; a flag two
// suites declare is declared once and applies to whichever suite runs.
func addSuiteFlags(fs *pflag.FlagSet) *suiteFlags {
	sf := &suiteFlags{owners: map[string][]string{}, given: map[string][]string{}}
	for _, n := range workload.Names() {
		s, _ := workload.Lookup(n)
		c, ok := s.(workload.Configurable)
		if !ok {
			continue
		}
		pf := pflag.NewFlagSet(n, pflag.ContinueOnError)
		c.NewOptions().Flags(pf)
		pf.VisitAll(func(f *pflag.Flag) {
			sf.owners[f.Name] = append(sf.owners[f.Name], n)
			if fs.Lookup(f.Name) == nil {
				fs.AddFlag(&pflag.Flag{Name: f.Name, Usage: f.Usage, DefValue: f.DefValue, NoOptDefVal: f.NoOptDefVal,
					Value: recorder{Value: f.Value, name: f.Name, sf: sf}})
			}
		})
	}
	return sf
}

// apply sets the given suite flags on s's suite options, after the spec
// file; a flag of another suite is a usage error naming the flag's suites.
func (sf *suiteFlags) apply(s *spec.Spec) error {
	if len(sf.order) == 0 {
		return nil
	}
	o := s.Workload.Options()
	pf := pflag.NewFlagSet(s.Workload.Suite, pflag.ContinueOnError)
	pf.SetOutput(io.Discard)
	if o != nil {
		o.Flags(pf)
	}
	for _, name := range sf.order {
		if !slices.Contains(sf.owners[name], s.Workload.Suite) {
			return usagef("flag --%s: an option of the %s suite, but this run's suite is %s",
				name, strings.Join(sf.owners[name], " and "), s.Workload.Suite)
		}
		for _, v := range sf.given[name] {
			if err := pf.Set(name, v); err != nil {
				return usagef("flag --%s: %v", name, err)
			}
		}
	}
	return nil
}
