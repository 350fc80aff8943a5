package report

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"benchlab/internal/store"
)

// header describes what ran: the preset (and where the spec overrode it),
// the workload, the rows each target loaded, the targets and the host.
func header(d *Data) []string {
	e := d.Experiment
	h := []string{}
	var overrides []string
	if sp := d.StoredSpec(); sp != nil {
		overrides = sp.PresetOverrides(e.Preset)
	}
	if e.Preset == "smoke" {
		line := "SMOKE PRESET: NOT FOR CONCLUSIONS"
		if len(overrides) == 0 {
			line += " (tiny table, 1-second tests)"
		}
		h = append(h, line)
	}
	if len(overrides) > 0 {
		h = append(h, fmt.Sprintf("PRESET %s OVERRIDDEN by the spec's own values: %s", strings.ToUpper(e.Preset),
			strings.Join(overrides, ", ")))
	}
	if imported := importedFrom(d); imported != "" {
		// Runs another tool made: no preset, no duration, no host.
		h = append(h, fmt.Sprintf("imported %s, base %s", e.Created.Local().Format("2006-01-02 15:04:05"), e.Base))
		h = append(h, imported)
		seen := map[string]bool{}
		for _, run := range d.Runs {
			if !seen[run.Target] {
				seen[run.Target] = true
				h = append(h, importedTargetLine(d, run))
			}
		}
		return h
	}
	h = append(h, fmt.Sprintf("created %s, preset %s, base %s%s", e.Created.Local().Format("2006-01-02 15:04:05"),
		orDefault(e.Preset, "none"), e.Base, durationOf(d)))
	if sp := d.StoredSpec(); sp != nil {
		w := sp.Workload
		h = append(h, fmt.Sprintf("workload: %s, repeats %d", sp.Describe(), w.Repeats))
		for _, n := range w.StoredNotes() {
			h = append(h, "workload as run: "+n)
		}
	}
	if l := loadedLine(d); l != "" {
		h = append(h, l)
	}
	seen := map[string]bool{}
	var host string
	for _, run := range d.Runs {
		m := store.ParseManifest(run.Manifest)
		if host == "" {
			host = fmt.Sprintf("host: %s, %d cores, %s MHz, kernel %s, %d MB RAM, cpus allowed %s; benchlab %s (%s)",
				m.Host.CPUModel, m.Host.Cores, firstField(m.Host.CPUMHz), m.Host.Kernel, m.Host.MemTotalMB,
				m.Host.Affinity, m.Benchlab.Version, m.Benchlab.Commit)
		}
		if seen[run.Target] {
			continue
		}
		seen[run.Target] = true
		h = append(h, targetLine(run, m))
	}
	if host != "" {
		h = append(h, host)
	}
	return h
}

// importedFrom is the header's line of an experiment `benchlab import`
// stored, "" for one benchlab ran: the tool, the tests and thread counts
// the files held, and the repeats.
func importedFrom(d *Data) string {
	tools := map[string]bool{}
	var list []string
	for _, run := range d.Runs {
		if src := store.ParseManifest(run.Manifest).Import; src != nil && !tools[src.Tool] {
			tools[src.Tool] = true
			list = append(list, src.Tool)
		}
	}
	if len(list) == 0 {
		return ""
	}
	line := "workload: imported from " + strings.Join(list, " and ") + " output (benchlab import), not run by benchlab"
	if sp := d.StoredSpec(); sp != nil {
		line += fmt.Sprintf("; tests %s, threads %v, repeats %d", strings.Join(sp.Workload.Tests, ", "),
			sp.Workload.Threads, sp.Workload.Repeats)
	}
	return line + "; no CPU, IO or host figures: the files have none"
}

// importedTargetLine is the header's line of an imported target: its
// engine and version as the import named them, the tool's version line,
// and each file with the start of its SHA-256.
func importedTargetLine(d *Data, first store.Run) string {
	line := "target " + first.Target + ": " + orDefault(strings.TrimSpace(first.Engine+" "+first.Version), "engine not named")
	var files []string
	version := ""
	for _, run := range d.Runs {
		if run.Target != first.Target {
			continue
		}
		if src := store.ParseManifest(run.Manifest).Import; src != nil {
			files = append(files, fmt.Sprintf("%s (sha256 %.12s)", src.File, src.SHA256))
			version = orDefault(version, src.ToolVersion)
		}
	}
	if version != "" {
		line += "; " + version
	}
	return line + "; files " + strings.Join(files, ", ")
}

// targetLine is the header's line of one target: its engine, the version
// the server reported and its settings, each left out when the run never
// read it (a server that did not start).
func targetLine(run store.Run, m store.Manifest) string {
	line := "target " + run.Target + ": " + strings.TrimSpace(run.Engine+" "+run.Version)
	if m.Engine.Client != "" {
		line += "; client " + m.Engine.Client
	}
	if set := settingsLine(m.Engine.Settings); set != "" {
		line += "; " + set
	}
	return line
}

// suiteOf is the experiment's suite as its stored spec names it.
func suiteOf(d *Data) string {
	sp := d.StoredSpec()
	if sp == nil {
		return ""
	}
	return sp.Workload.Suite
}

// durationOf says how long the experiment's runs took, first start to last end.
func durationOf(d *Data) string {
	var first, last time.Time
	for _, r := range d.Runs {
		if first.IsZero() || r.Started.Before(first) {
			first = r.Started
		}
		if r.Ended.After(last) {
			last = r.Ended
		}
	}
	if first.IsZero() || last.Before(first) {
		return ""
	}
	return fmt.Sprintf(", ran for %s", last.Sub(first).Round(time.Second))
}

func firstField(s string) string {
	f, _, _ := strings.Cut(s, ",")
	return f
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func settingsLine(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return strings.Join(parts, " ")
}

// loadedLine says how many rows each target's load step (the "prepare"
// action) inserted, as stored: the table size that was loaded, whatever
// the preset's name suggests. Empty when no run loaded rows.
func loadedLine(d *Data) string {
	var parts []string
	seen := map[string]bool{}
	for _, run := range d.Runs {
		for _, r := range d.Results[run.ID] {
			if !r.Action || r.Test != "prepare" || r.Rows <= 0 {
				continue
			}
			p := fmt.Sprintf("%s %s rows", run.Target, FormatValue(float64(r.Rows)))
			if !seen[p] {
				seen[p] = true
				parts = append(parts, p)
			}
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "loaded (rows the prepare step inserted, all tables): " + strings.Join(parts, ", ")
}
