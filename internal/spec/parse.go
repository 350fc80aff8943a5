package spec

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"benchlab/internal/workload"

	"github.com/BurntSushi/toml"
)

// This file reads an experiment file: TOML into a Spec, with its errors named
// by file and line, and a stored spec read back.

// Parse reads a spec from TOML text: defaults, then the preset the file
// names (or preset, when not empty, which wins), then the file's values.
// Unknown keys are errors. Text larger than MaxSpecBytes or nested deeper
// than MaxSpecDepth is refused before it is decoded.
func Parse(src []byte, file, preset string) (Spec, error) {
	return parse(src, file, preset, MaxSpecBytes)
}

// parse is Parse with a size limit of its own (ParseStored's is larger).
func parse(src []byte, file, preset string, maxBytes int) (Spec, error) {
	if err := checkShape(src, file, maxBytes); err != nil {
		return Spec{}, err
	}
	var head struct {
		Preset  string           `toml:"preset"`
		Targets []map[string]any `toml:"target"`
	}
	if _, err := toml.Decode(string(src), &head); err != nil {
		return Spec{}, tomlError(file, err)
	}
	if err := checkSettingsTables(head.Targets); err != nil {
		return Spec{}, err
	}
	if err := checkSweepTables(head.Targets); err != nil {
		return Spec{}, err
	}
	if preset == "" {
		preset = head.Preset
	}
	s := Default()
	if err := ApplyPreset(&s, preset); err != nil {
		return Spec{}, err
	}
	md, err := toml.Decode(string(src), &s)
	if err != nil {
		return Spec{}, tomlError(file, err)
	}
	var unknown []string
	for _, k := range md.Undecoded() {
		if len(k) == 0 || k[0] != "workload" {
			unknown = append(unknown, k.String())
		}
	}
	more, err := decodeOptions(src, file, &s.Workload)
	if err != nil {
		return Spec{}, err
	}
	if unknown = append(unknown, more...); len(unknown) > 0 {
		return Spec{}, errf(file, "unknown field %s; see `benchlab run --help` or docs/spec.md for the spec fields", listKeys(unknown))
	}
	s.Preset = preset
	return s, nil
}

// ParseStored reads a spec stored with an experiment (or a run's manifest)
// as what that experiment ran. A stored spec holds every key its options
// had when it was written, so a key it lacks predates the option: the
// suite's options then take the behaviour runs had before the option came
// (workload.Legacy), not today's default, which a spec file a user writes
// gets. Legacy notes on what such runs did that benchlab can no longer redo
// are kept for the report header and rerun (Workload.StoredNotes).
func ParseStored(src []byte, what string) (Spec, error) {
	s, err := parse(src, what, "", MaxStoredSpecBytes)
	if err != nil {
		return s, err
	}
	var raw struct {
		Workload map[string]any `toml:"workload"`
	}
	if _, err := toml.Decode(string(src), &raw); err != nil {
		return Spec{}, tomlError(what, err)
	}
	table, _ := raw.Workload[s.Workload.Suite].(map[string]any)
	has := func(key string) bool {
		if _, ok := table[key]; ok {
			return true
		}
		_, ok := raw.Workload[key] // the flat keys of specs stored before the suites' tables
		return ok
	}
	if l, ok := s.Workload.Options().(workload.Legacy); ok {
		s.Workload.storedNotes = l.StoredDefaults(has)
	}
	// Before run interleaved by default, a stored spec without
	// workload.interleave ran its targets one after the other.
	if s.Workload.Interleave.Unset() {
		s.Workload.Interleave.Off = true
	}
	return s, nil
}

// StoredNotes are what the runs of a stored spec did that benchlab can no
// longer redo (ParseStored), one line each; none for a spec file.
func (w Workload) StoredNotes() []string { return w.storedNotes }

// checkSettingsTables rejects a target's settings that are not a table of
// plain values: the decoder would silently drop `settings = 5` and turn a
// nested table into Go's map syntax.
func checkSettingsTables(targets []map[string]any) error {
	for i, t := range targets {
		v, ok := t["settings"]
		if !ok {
			continue
		}
		field := fmt.Sprintf("target[%d].settings", i)
		m, ok := v.(map[string]any)
		if !ok {
			return errf(field, "%s is not a table; want [target.settings] with key = value lines, e.g. journal_mode = \"wal\"",
				tomlKind(v))
		}
		for k, x := range m {
			switch x.(type) {
			case string, int64, float64, bool:
			default:
				return errf(field+"."+k, "%s is not allowed; want a string, number or boolean", tomlKind(x))
			}
		}
	}
	return nil
}

// tomlKind names a decoded TOML value's type for error messages.
func tomlKind(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("the string %q", x)
	case int64, float64:
		return fmt.Sprintf("the number %v", x)
	case bool:
		return fmt.Sprintf("the boolean %v", x)
	case []any, []map[string]any:
		return "an array"
	case map[string]any:
		return "a table"
	}
	return fmt.Sprintf("a %T", v)
}

var tomlLine = regexp.MustCompile(`line (\d+)`)

func tomlError(file string, err error) error {
	msg := err.Error()
	var pe toml.ParseError
	if errors.As(err, &pe) {
		msg = fmt.Sprintf("line %d: %s", pe.Position.Line, pe.Message)
	} else if m := tomlLine.FindString(msg); m != "" && !strings.Contains(msg, m) {
		msg = m + ": " + msg
	}
	return errf(file, "malformed TOML: %s", msg)
}

// Load reads and parses the spec file at path.
func Load(path, preset string) (Spec, error) {
	src, err := readSpecFile(path)
	if err != nil {
		return Spec{}, err
	}
	return Parse(src, path, preset)
}
