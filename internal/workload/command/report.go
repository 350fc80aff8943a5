package command

import (
	"fmt"

	"benchlab/internal/report/section"
)

func init() { section.Register(Suite{}.Name(), Suite{}) }

// ReportSections adds the suite's notes to the generic tables: what the
// client columns and an operation are for a program's step, and what each
// regex step's number is.
func (Suite) ReportSections(in *section.Input) section.Sections {
	notes := []string{"command: the client columns are each program's process tree (its CPU, IO, context switches " +
		"and peak memory), not benchlab; an operation is one read or write for a fio step, the printed number x " +
		"seconds for a higher-is-better regex step (a rate per second), one run of the program otherwise"}
	sp := in.Spec
	if sp == nil {
		return section.Sections{Notes: notes}
	}
	o, ok := sp.Workload.Options().(*Options)
	if !ok {
		return section.Sections{Notes: notes}
	}
	for _, s := range o.Steps {
		if s.Load || s.parse() != ParseRegex {
			continue
		}
		notes = append(notes, fmt.Sprintf("command: %s's number is %s, the capture of %q", s.Name, cmpWord(s), s.Regex))
	}
	return section.Sections{Notes: notes}
}
