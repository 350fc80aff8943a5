package results

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Keys are the selector keys, in the order the help lists them.
var Keys = []string{"experiment", "target", "engine", "version", "host", "suite", "test", "threads", "since", "until"}

// Selector picks stored runs, as benchstat's -filter picks benchmarks:
// key:value terms separated by spaces or commas. Terms of different keys
// must all hold; a key given twice holds when either value does
// ("engine:postgres engine:mysql"). Values match exactly or as a shell
// pattern (version:16.*), and may be double-quoted to hold spaces
// (experiment:"import sysbench"); experiment takes an ID or a name, since and
// until a date (2026-11-01) or an RFC 3339 time. The zero Selector
// selects everything.
type Selector struct {
	// Text is the selector as given, for messages and labels.
	Text  string
	terms map[string][]string
	since time.Time
	until time.Time
}

// SelectorError is a selector that cannot be read: the selector, the term
// at fault and what was expected.
type SelectorError struct {
	Selector, Term, Msg string
}

func (e *SelectorError) Error() string {
	if e.Term == "" {
		return fmt.Sprintf("selector %q: %s", e.Selector, e.Msg)
	}
	return fmt.Sprintf("selector %q: term %q: %s", e.Selector, e.Term, e.Msg)
}

// ParseSelector reads a selector ("experiment:nightly target:pg16,
// since:2026-11-01").
func ParseSelector(s string) (Selector, error) {
	sel := Selector{Text: strings.TrimSpace(s), terms: map[string][]string{}}
	fields, err := terms(s)
	if err != nil {
		return sel, &SelectorError{Selector: s, Msg: err.Error()}
	}
	if len(fields) == 0 {
		return sel, &SelectorError{Selector: s, Msg: "empty; want key:value terms such as experiment:12 or target:pg16 (keys: " +
			strings.Join(Keys, ", ") + ")"}
	}
	for _, f := range fields {
		key, val, ok := strings.Cut(f, ":")
		key = strings.ToLower(key)
		if !ok || val == "" {
			return sel, &SelectorError{s, f, "want key:value, one of the keys " + strings.Join(Keys, ", ")}
		}
		if key == "tag" {
			return sel, &SelectorError{s, f, "benchlab stores no tags; select by experiment (name or ID), target, engine, version, host or time"}
		}
		if !slices.Contains(Keys, key) {
			return sel, &SelectorError{s, f, "unknown key " + strconv.Quote(key) + "; want one of " + strings.Join(Keys, ", ")}
		}
		if _, err := path.Match(val, ""); err != nil {
			return sel, &SelectorError{s, f, "a malformed pattern; want a value or a shell pattern such as 16.*"}
		}
		switch key {
		case "threads":
			if n, err := strconv.Atoi(val); err != nil || n < 0 {
				return sel, &SelectorError{s, f, "want a thread count, a whole number >= 0"}
			}
		case "since", "until":
			t, err := parseWhen(val)
			if err != nil {
				return sel, &SelectorError{s, f, "want a date (2026-11-01) or a time (2026-11-01T06:00:00Z)"}
			}
			if key == "since" {
				sel.since = t
			} else {
				if len(val) == len(time.DateOnly) {
					t = t.AddDate(0, 0, 1) // until a date takes that whole day
				}
				sel.until = t
			}
			continue
		}
		sel.terms[key] = append(sel.terms[key], val)
	}
	if !sel.since.IsZero() && !sel.until.IsZero() && !sel.until.After(sel.since) {
		return sel, &SelectorError{Selector: s, Msg: "until is not after since; want a time range that holds something"}
	}
	return sel, nil
}

// terms splits a selector at spaces and commas outside double quotes and
// drops the quotes: experiment:"import sysbench" is one term.
func terms(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	quoted, seen := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted, seen = !quoted, true
		case !quoted && (r == ',' || r == ' ' || r == '\t' || r == '\n'):
			if cur.Len() > 0 || seen {
				out = append(out, cur.String())
			}
			cur.Reset()
			seen = false
		default:
			cur.WriteRune(r)
		}
	}
	if quoted {
		return nil, fmt.Errorf("a double quote is not closed; want key:\"value with spaces\"")
	}
	if cur.Len() > 0 || seen {
		out = append(out, cur.String())
	}
	return out, nil
}

func parseWhen(v string) (time.Time, error) {
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t, nil
	}
	return time.Parse(time.RFC3339, v)
}

// match says whether value satisfies the terms of key (no term: yes).
func (s Selector) match(key, value string) bool {
	vals := s.terms[key]
	if len(vals) == 0 {
		return true
	}
	for _, v := range vals {
		if ok, _ := path.Match(v, value); ok || v == value {
			return true
		}
	}
	return false
}

// matchExperiment says whether an experiment's ID or name satisfies the
// experiment terms.
func (s Selector) matchExperiment(id int64, name string) bool {
	return s.match("experiment", strconv.FormatInt(id, 10)) || s.match("experiment", name)
}

// inTime says whether t lies in the since/until range.
func (s Selector) inTime(t time.Time) bool {
	return (s.since.IsZero() || !t.Before(s.since)) && (s.until.IsZero() || t.Before(s.until))
}

// Has says whether the selector has a term of key.
func (s Selector) Has(key string) bool { return len(s.terms[key]) > 0 }
