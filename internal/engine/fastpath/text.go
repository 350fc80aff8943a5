package fastpath

// Text statements of the fast path: parsed once into a template, their
// arguments inlined by benchlab into a reused buffer, rather than by the
// driver on every call.

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"unsafe"

	"benchlab/internal/engine"
)

// Template is an SQL statement split at its parameter placeholders, parsed
// once, for statements sent as text with their arguments inlined by the
// client (sysbench's --db-ps-mode=disable): the drivers' own text paths
// parse the statement again on every call (pgx's sanitizeForSimpleQuery took
// 10.8% of the client's CPU in TPC-C at 8 threads).
type Template struct {
	// parts are the literal pieces around the placeholders: one more than
	// params.
	parts []string
	// params is the argument (0-based) each placeholder stands for.
	params []int
	// nargs is the number of arguments the statement takes.
	nargs int
}

// ParseTemplate splits sql at its placeholders: "$1", "$2"... with dollar
// (PostgreSQL), else "?" (MySQL, SQLite, numbered in order). Placeholders in
// quoted strings, quoted identifiers and comments are text.
func ParseTemplate(sql string, dollar bool) (Template, error) {
	var t Template
	last := 0
	for i := 0; i < len(sql); i++ {
		switch c := sql[i]; {
		case c == '\'' || c == '"' || c == '`':
			end := closing(sql, i, c, !dollar)
			if end < 0 {
				return t, fmt.Errorf("sql %q: unterminated %c at %d", sql, c, i)
			}
			i = end
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			if end := strings.IndexByte(sql[i:], '\n'); end >= 0 {
				i += end
			} else {
				i = len(sql)
			}
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			end := strings.Index(sql[i+2:], "*/")
			if end < 0 {
				return t, fmt.Errorf("sql %q: unterminated comment at %d", sql, i)
			}
			i += end + 3
		case c == '?' && !dollar:
			t.parts = append(t.parts, sql[last:i])
			t.params = append(t.params, len(t.params))
			t.nargs = len(t.params)
			last = i + 1
		case c == '$' && dollar && i+1 < len(sql) && sql[i+1] >= '0' && sql[i+1] <= '9':
			j := i + 1
			for j < len(sql) && sql[j] >= '0' && sql[j] <= '9' {
				j++
			}
			n, err := strconv.Atoi(sql[i+1 : j])
			if err != nil || n < 1 {
				return t, fmt.Errorf("sql %q: placeholder %s: want $1 or more", sql, sql[i:j])
			}
			t.parts = append(t.parts, sql[last:i])
			t.params = append(t.params, n-1)
			t.nargs = max(t.nargs, n)
			last = j
			i = j - 1
		}
	}
	t.parts = append(t.parts, sql[last:])
	return t, nil
}

// closing returns the index of the quote closing the one at i (a doubled
// quote is part of the text; with backslash, so is a backslash-escaped
// character, as MySQL reads strings), or -1.
func closing(sql string, i int, q byte, backslash bool) int {
	for j := i + 1; j < len(sql); j++ {
		switch sql[j] {
		case '\\':
			if backslash && q != '`' {
				j++
			}
		case q:
			if j+1 < len(sql) && sql[j+1] == q {
				j++
				continue
			}
			return j
		}
	}
	return -1
}

// Literal appends one argument as an SQL literal to dst; ok is false for a
// value it cannot write (the caller then takes the driver's own path).
type Literal func(dst []byte, arg any) (out []byte, ok bool)

// Append writes the statement with args inlined by lit, each literal between
// spaces (so that "- ?" with a negative number cannot become a comment), into
// dst; ok is false when an argument is missing, extra or not writable.
func (t Template) Append(dst []byte, args []any, lit Literal) ([]byte, bool) {
	if len(args) != t.nargs {
		return dst, false
	}
	for i, p := range t.params {
		dst = append(dst, t.parts[i]...)
		dst = append(dst, ' ')
		var ok bool
		if dst, ok = lit(dst, args[p]); !ok {
			return dst, false
		}
		dst = append(dst, ' ')
	}
	return append(dst, t.parts[len(t.parts)-1]...), true
}

// Args is the number of arguments the statement takes.
func (t Template) Args() int { return t.nargs }

// BytesText is b as a string without a copy, for a statement text handed to
// a driver that copies it into its own buffer before returning (pgconn's
// Exec, go-sql-driver's query and exec): b must not change until then.
func BytesText(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// AppendScalar writes what every SQL dialect writes alike: the integer
// kinds the workloads pass, and nil as NULL; ok is false for any other
// type, which the dialect's own literal writes or refuses.
func AppendScalar(dst []byte, arg any) ([]byte, bool) {
	switch v := arg.(type) {
	case nil:
		return append(dst, "NULL"...), true
	case int:
		return strconv.AppendInt(dst, int64(v), 10), true
	case int64:
		return strconv.AppendInt(dst, v, 10), true
	case int32:
		return strconv.AppendInt(dst, int64(v), 10), true
	case uint32:
		return strconv.AppendUint(dst, uint64(v), 10), true
	case uint64:
		return strconv.AppendUint(dst, v, 10), true
	}
	return dst, false
}

// TextSQL is the part a driver's text statement shares across engines: the
// statement, its template when it parsed, and the reused buffer its text is
// written into.
type TextSQL struct {
	sql     string
	tpl     Template
	ok      bool
	long    bool
	literal func(dst []byte, arg any) ([]byte, bool)
	buf     []byte
}

// NewTextSQL parses sql once (dollar: $n placeholders, else ?) for a
// statement of the given cost; literal writes one argument in the engine's
// syntax and reports false for one it cannot write.
func NewTextSQL(sql string, dollar bool, cost engine.Cost, literal func(dst []byte, arg any) ([]byte, bool)) TextSQL {
	t := TextSQL{sql: sql, long: cost == engine.Long, literal: literal}
	if tpl, err := ParseTemplate(sql, dollar); err == nil {
		t.tpl, t.ok = tpl, true
	}
	return t
}

// SQL is the statement as given.
func (t *TextSQL) SQL() string { return t.sql }

// Text builds the statement's text for args; ok is false when the driver
// must send it its own way (no template, or an argument literal refused).
// The text is valid until the next call.
func (t *TextSQL) Text(args []any) (string, bool) {
	if !t.ok {
		return "", false
	}
	if len(args) == 0 && t.tpl.Args() == 0 {
		return t.sql, true
	}
	var ok bool
	t.buf, ok = t.tpl.Append(t.buf[:0], args, t.literal)
	return BytesText(t.buf), ok
}

// Long reports whether the statement runs under the caller's context (a
// Long statement); a short one runs without it (see Ctx).
func (t *TextSQL) Long() bool { return t.long }

// Ctx is the context a call runs under: short statements run without the
// caller's, which spares the driver its cancellation watcher.
func (t *TextSQL) Ctx(ctx context.Context) context.Context {
	if t.long {
		return ctx
	}
	return context.Background()
}
