package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// groupedUsage prints a command's usage with its flags in groups: those
// with a group annotation, then suite options (usage "<suite> suite: ...")
// grouped by suite, then the rest.
func groupedUsage(cmd *cobra.Command) error {
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "Usage:\n  %s\n", cmd.UseLine())
	if cmd.Example != "" {
		fmt.Fprintf(w, "\nExamples:\n%s\n", cmd.Example)
	}
	groups := map[string]*pflag.FlagSet{}
	var order []string
	add := func(g string, f *pflag.Flag) {
		fs, ok := groups[g]
		if !ok {
			fs = pflag.NewFlagSet(g, pflag.ContinueOnError)
			fs.SortFlags = false
			groups[g] = fs
			order = append(order, g)
		}
		fs.AddFlag(f)
	}
	var suites []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if g := f.Annotations[groupAnnotation]; len(g) > 0 {
			add(g[0], f)
			return
		}
		if name, _, ok := strings.Cut(f.Usage, " suite: "); ok && !strings.Contains(name, " ") {
			if !slices.Contains(suites, name) {
				suites = append(suites, name)
			}
			add("suite "+name, f)
			return
		}
		add("Other", f)
	})
	slices.Sort(suites)
	want := []string{groupExperiment, groupWorkload, groupConnection, groupOutput}
	for _, s := range suites {
		want = append(want, "suite "+s)
	}
	for _, g := range order {
		if !slices.Contains(want, g) {
			want = append(want, g)
		}
	}
	for _, g := range want {
		fs, ok := groups[g]
		if !ok {
			continue
		}
		title := g
		if s, ok := strings.CutPrefix(g, "suite "); ok {
			title = "Options of the " + s + " suite"
		}
		fmt.Fprintf(w, "\n%s:\n%s", title, fs.FlagUsagesWrapped(120))
	}
	return nil
}
