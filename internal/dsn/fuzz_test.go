package dsn

import (
	"strings"
	"testing"
)

// FuzzParseDSN checks the DSN parser and the redaction of passwords in its
// errors: never a panic, and the password of a MySQL DSN does not appear in
// its redacted form.
func FuzzParseDSN(f *testing.F) {
	for _, s := range []string{"postgres://u:pw@h:5432/db?sslmode=disable", "postgresql://h/d", "u:pw@tcp(h:3306)/d",
		"u@unix(/tmp/s)/d", "postgres://[::1]:99999/x", "x@tcp(:)/", "@tcp(h)/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, dsn string) {
		info, err := Parse(dsn)
		red := Redact(dsn)
		if err != nil || info.Family != "mysql" {
			return
		}
		at := strings.LastIndex(dsn, "@")
		if user, pw, ok := strings.Cut(dsn[:at], ":"); ok && len(pw) > 3 && !strings.Contains(user+dsn[at:], pw) &&
			strings.Contains(red, pw) {
			t.Fatalf("password %q left in %q", pw, red)
		}
	})
}
