package dsn

import (
	"strconv"
	"strings"
	"testing"
)

// FuzzParseDSN checks the DSN parser and the redaction of passwords in its
// errors: never a panic, and the password of a MySQL DSN or of PostgreSQL's
// keyword form does not appear in its redacted form (nor in the keyword
// form's errors).
func FuzzParseDSN(f *testing.F) {
	for _, s := range []string{"postgres://u:pw@h:5432/db?sslmode=disable", "postgresql://h/d", "u:pw@tcp(h:3306)/d",
		"u@unix(/tmp/s)/d", "postgres://[::1]:99999/x", "x@tcp(:)/", "@tcp(h)/",
		"host=h port=5432 user=u password=secret dbname=d", "host=h password='se cr\\'et'", "password= x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, dsn string) {
		info, err := Parse(dsn)
		red := Redact(dsn)
		if keywordForm.MatchString(dsn) {
			// The keyword form's password: a word, or up to its closing quote.
			// The error's fixed example (keywordExample) may hold the
			// password by chance ("er=u" in "user=u"), and so may the quotes
			// around the redacted DSN (`000"` in `"password=xxxxx 000"`):
			// neither is a leak, and the redacted DSN is checked as red.
			msg := ""
			if err != nil {
				msg = strings.ReplaceAll(err.Error(), keywordExample, "")
				msg = strings.ReplaceAll(msg, strconv.Quote(red), "")
			}
			if m := keywordPassword.FindStringSubmatch(dsn); m != nil && len(m[2]) > 3 && strings.Count(dsn, m[2]) == 1 &&
				(strings.Contains(red, m[2]) || strings.Contains(msg, m[2])) {
				t.Fatalf("password %q left in %q (error %v)", m[2], red, err)
			}
			return
		}
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
