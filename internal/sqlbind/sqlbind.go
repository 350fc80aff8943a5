// Package sqlbind rewrites the '?' placeholders statements are written with
// into PostgreSQL's numbered form. The engines' dialects and the results
// store (which runs the same statements on SQLite and PostgreSQL) both need
// it, and neither layer imports the other, so it lives below both.
package sqlbind

import (
	"strconv"
	"strings"
)

// Numbered rewrites each '?' of sql as $1, $2, ... in order. It does not look
// inside string literals, so statements must not contain a literal '?'.
func Numbered(sql string) string {
	if !strings.Contains(sql, "?") {
		return sql
	}
	var b strings.Builder
	b.Grow(len(sql) + 8)
	n := 0
	for i := 0; i < len(sql); i++ {
		if sql[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(sql[i])
	}
	return b.String()
}
