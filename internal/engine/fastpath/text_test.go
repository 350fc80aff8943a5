package fastpath

import (
	"strings"
	"testing"
)

func TestTemplate(t *testing.T) {
	lit := func(dst []byte, a any) ([]byte, bool) {
		if b, ok := AppendScalar(dst, a); ok {
			return b, true
		}
		if s, ok := a.(string); ok {
			return append(append(append(dst, '\''), strings.ReplaceAll(s, "'", "''")...), '\''), true
		}
		return dst, false
	}
	for _, c := range []struct {
		sql    string
		dollar bool
		args   []any
		want   string
		ok     bool
	}{
		{"SELECT c FROM t WHERE id = ?", false, []any{7}, "SELECT c FROM t WHERE id =  7 ", true},
		{"SELECT c FROM t WHERE id = $1", true, []any{int64(7)}, "SELECT c FROM t WHERE id =  7 ", true},
		// A negative number after a minus stays a number, not a comment.
		{"UPDATE t SET v = v -? WHERE id = ?", false, []any{-5, 1}, "UPDATE t SET v = v - -5  WHERE id =  1 ", true},
		// $2 before $1, and one argument used twice.
		{"SELECT $2, $1, $2", true, []any{1, "x"}, "SELECT  'x' ,  1 ,  'x' ", true},
		// nil is NULL in every dialect (AppendScalar).
		{"UPDATE t SET v = ? WHERE id = ?", false, []any{nil, uint64(3)}, "UPDATE t SET v =  NULL  WHERE id =  3 ", true},
		// Placeholders in strings, identifiers and comments are text.
		{"SELECT '?', \"a?\", `b?` -- ?\n, ? /* ? */", false, []any{"it's"}, "SELECT '?', \"a?\", `b?` -- ?\n,  'it''s'  /* ? */", true},
		{"SELECT 'it''s $1', $1", true, []any{2}, "SELECT 'it''s $1',  2 ", true},
		{`SELECT 'a\'?', ?`, false, []any{3}, `SELECT 'a\'?',  3 `, true},
		{"BEGIN", true, nil, "BEGIN", true},
		// Wrong argument counts and types are refused, for the driver's path.
		{"SELECT ?", false, nil, "", false},
		{"SELECT ?", false, []any{1, 2}, "", false},
		{"SELECT ?", false, []any{1.5}, "", false},
	} {
		tpl, err := ParseTemplate(c.sql, c.dollar)
		if err != nil {
			t.Errorf("%q: %v", c.sql, err)
			continue
		}
		got, ok := tpl.Append(nil, c.args, lit)
		if ok != c.ok || (ok && string(got) != c.want) {
			t.Errorf("%q with %v: %q, %v; want %q, %v", c.sql, c.args, got, ok, c.want, c.ok)
		}
	}
	for _, bad := range []struct {
		sql    string
		dollar bool
	}{{"SELECT 'open", false}, {"SELECT /* open", true}, {"SELECT $0", true}} {
		if _, err := ParseTemplate(bad.sql, bad.dollar); err == nil {
			t.Errorf("%q: no error", bad.sql)
		}
	}
}
