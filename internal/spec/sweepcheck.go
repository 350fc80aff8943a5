package spec

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// A swept setting is only worth comparing when the server runs the value
// asked for. Servers differ in how they treat one they do not take: MariaDB
// starts with a variable it removed (innodb_buffer_pool_instances in 10.11
// "does nothing now", says its log) and clamps an out-of-range number to
// its bound with a warning; PostgreSQL refuses to start on either. So after
// starting each swept target, the runner reads the setting back (the
// engine's Info: SHOW VARIABLES, pg_settings, PRAGMA) and CheckSetting
// says whether the value took effect.

// SettingOutcome is what reading a swept setting back found.
type SettingOutcome int

const (
	// SettingTook: the server runs the value asked for.
	SettingTook SettingOutcome = iota
	// SettingUnknown: the server has no such setting (removed, or never
	// had it): every value of the sweep runs the same server.
	SettingUnknown
	// SettingDiffers: the server runs another value (clamped to a bound,
	// rounded, or not applied until a restart).
	SettingDiffers
)

// SettingCheck is the check of one swept setting on one target.
type SettingCheck struct {
	Setting, Asked string
	// Read is the value read back; empty when the server has no such
	// setting.
	Read    string
	Outcome SettingOutcome
}

// String says what the check found, for notes and errors.
func (c SettingCheck) String() string {
	switch c.Outcome {
	case SettingUnknown:
		return fmt.Sprintf("%s = %s did not take effect: the server has no setting %s (removed, or unknown to this version), "+
			"so every value runs the same server", c.Setting, c.Asked, c.Setting)
	case SettingDiffers:
		return fmt.Sprintf("%s = %s did not take effect: the server runs %s (clamped, rounded, or waiting for a restart)",
			c.Setting, c.Asked, c.Read)
	}
	return fmt.Sprintf("%s = %s took effect (read back %s)", c.Setting, c.Asked, c.Read)
}

// CheckSetting compares the value asked for a setting with the settings
// read back from the server (engine.Info.Settings, by the engine's own
// spelling of names: lower case, '-' as '_'). Values compare as the
// servers write them: sizes with units (K, MB, GB, 8kB ...) in bytes,
// durations with units in microseconds, booleans (on, off, true, false,
// yes, no, 1, 0) as booleans, other numbers as numbers, and words without
// regard to case; a size asked against a bare number read compares in
// bytes (MariaDB writes sizes so). A bare number asked is in the setting's
// own unit when the server gives one (units, PostgreSQL's pg_settings.unit:
// shared_buffers = 16384 is 16384 × 8kB). A value whose form still differs
// on the two sides (a bare number asked without a known unit, a size read;
// a word asked, a number read) is taken as having taken effect: the check
// flags only what it can tell.
func CheckSetting(setting, asked string, read, units map[string]string) SettingCheck {
	c := SettingCheck{Setting: setting, Asked: asked}
	v, ok := lookupSetting(setting, read)
	if !ok {
		c.Outcome = SettingUnknown
		return c
	}
	c.Read = v
	inUnit := asked
	if u, ok := lookupSetting(setting, units); ok {
		inUnit = withUnit(asked, u)
	}
	if !sameSettingValue(inUnit, v) {
		c.Outcome = SettingDiffers
	}
	return c
}

func lookupSetting(name string, read map[string]string) (string, bool) {
	for _, n := range []string{name, strings.ToLower(name), strings.ReplaceAll(strings.ToLower(name), "-", "_")} {
		if v, ok := read[n]; ok {
			return v, true
		}
	}
	return "", false
}

// settingValue is a value in a form two spellings can be compared in.
type settingValue struct {
	kind string // "size", "time", "bool", "number", "word"
	num  float64
	word string
}

var (
	sizeUnits = map[string]float64{"b": 1, "k": 1 << 10, "kb": 1 << 10, "m": 1 << 20, "mb": 1 << 20,
		"g": 1 << 30, "gb": 1 << 30, "t": 1 << 40, "tb": 1 << 40}
	timeUnits = map[string]float64{"us": 1, "ms": 1e3, "s": 1e6, "min": 60e6, "h": 3600e6, "d": 86400e6}
	boolWords = map[string]bool{"on": true, "true": true, "yes": true, "off": false, "false": false, "no": false}
)

func parseSettingValue(s string) settingValue {
	s = strings.ToLower(strings.Trim(strings.TrimSpace(s), `'"`))
	if b, ok := boolWords[s]; ok {
		return settingValue{kind: "bool", num: boolNum(b)}
	}
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.' || s[i] == '-' || s[i] == '+' || s[i] == 'e' && i > 0) {
		i++
	}
	num, err := strconv.ParseFloat(s[:i], 64)
	if i == 0 || err != nil {
		return settingValue{kind: "word", word: s}
	}
	unit := strings.TrimSpace(s[i:])
	if unit == "" {
		return settingValue{kind: "number", num: num}
	}
	if m, ok := sizeUnits[unit]; ok {
		return settingValue{kind: "size", num: num * m}
	}
	if m, ok := timeUnits[unit]; ok {
		return settingValue{kind: "time", num: num * m}
	}
	return settingValue{kind: "word", word: s}
}

// withUnit writes a bare number asked in the unit the server counts the
// setting in ("8kB", "ms", "min"), as a value with that unit: "16384" in
// "8kB" is "131072kB". Anything else is returned as it is.
func withUnit(asked, unit string) string {
	a := parseSettingValue(asked)
	u := strings.ToLower(strings.TrimSpace(unit))
	word := strings.TrimLeft(u, "0123456789.")
	_, size := sizeUnits[word]
	_, time := timeUnits[word]
	if a.kind != "number" || !size && !time {
		return asked
	}
	n := 1.0 // "kB" counts ones, "8kB" eights
	if count := strings.TrimSuffix(u, word); count != "" {
		var err error
		if n, err = strconv.ParseFloat(count, 64); err != nil {
			return asked
		}
	}
	return strconv.FormatFloat(a.num*n, 'f', -1, 64) + word
}

func boolNum(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// sameSettingValue says whether asked and read are the same value, or
// cannot be told apart (forms that do not compare).
func sameSettingValue(asked, read string) bool {
	a, r := parseSettingValue(asked), parseSettingValue(read)
	// A 0 or 1 against a boolean compares as one.
	if a.kind == "number" && r.kind == "bool" && (a.num == 0 || a.num == 1) {
		a.kind = "bool"
	}
	if r.kind == "number" && a.kind == "bool" && (r.num == 0 || r.num == 1) {
		r.kind = "bool"
	}
	// A size asked against a bare number read: MySQL and MariaDB write
	// sizes in bytes.
	if a.kind == "size" && r.kind == "number" {
		r.kind = "size"
	}
	switch {
	case a.kind == "word" && r.kind == "word":
		return a.word == r.word
	case a.kind != r.kind:
		// Different forms (a bare number against a size, a word such as
		// "auto" against the number it stands for) cannot be told apart.
		return true
	}
	return math.Abs(a.num-r.num) <= 1e-9*math.Max(math.Abs(a.num), math.Abs(r.num))
}

// SweepsSetting says whether w's setting is an engine setting, one the
// server can be asked for, rather than a target field (memory, cpus).
func (w Swept) SweepsSetting() bool { return !slices.Contains(sweepFields, w.Setting) }

// Asked is the value of w's setting the target gives the server: its
// settings' entry, or the sweep's value as written.
func (w Swept) Asked(settings map[string]string) string {
	if v, ok := settings[w.Setting]; ok {
		return v
	}
	return w.Value
}

// UnknownSettingError refuses a sweep over a setting the server does not
// have: a field error (exit 2) naming the sweep's target and setting.
func UnknownSettingError(w Swept, c SettingCheck) error {
	return errf("target "+w.Of+": sweep.setting", "%s; sweep a setting this server has", c)
}
