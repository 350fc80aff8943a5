package server

import (
	"regexp"
	"strings"

	"benchlab/internal/cpulist"
)

// Redacted replaces passwords in DSNs and error texts.
const Redacted = "xxxxx"

var (
	// postgres://user:secret@host/db and mysql-style user:secret@tcp(host)/db.
	urlPassword = regexp.MustCompile(`([A-Za-z0-9._%+-]+):([^@/\s]*)@`)
	// key=value forms: password=secret, password='se cret', pwd=...
	kvPassword = regexp.MustCompile(`(?i)\b(password|passwd|pwd)\s*=\s*('(?:[^'\\]|\\.)*'|[^\s&;]*)`)
)

// RedactDSN hides the password of a DSN in any of the forms benchlab takes:
// PostgreSQL URLs and key=value strings, and go-sql-driver/mysql DSNs. Use it
// on every DSN (and every error that may quote one) before it is printed or
// stored.
func RedactDSN(s string) string {
	s = urlPassword.ReplaceAllStringFunc(s, func(m string) string {
		sub := urlPassword.FindStringSubmatch(m)
		if sub[2] == "" || strings.HasSuffix(sub[1], "//") {
			return m
		}
		return sub[1] + ":" + Redacted + "@"
	})
	return kvPassword.ReplaceAllString(s, "${1}="+Redacted)
}

// RedactIn hides secret wherever it appears in s (for driver errors that
// might echo a password verbatim).
func RedactIn(s, secret string) string {
	if secret == "" {
		return RedactDSN(s)
	}
	return RedactDSN(strings.ReplaceAll(s, secret, Redacted))
}

// CheckCPUList validates a CPU list as taskset -c takes it ("0", "0-3",
// "0,2,4-5").
func CheckCPUList(s string) error {
	_, err := cpulist.Parse(s)
	return err
}

// DropRedacted removes a password that RedactDSN replaced, so a DSN read back
// from the store connects without one and the driver falls back to the
// environment (PGPASSWORD, ~/.pgpass) rather than sending the placeholder.
func DropRedacted(dsn string) string {
	dsn = strings.ReplaceAll(dsn, ":"+Redacted+"@", "@")
	return regexp.MustCompile(`(?i)\b(password|passwd|pwd)\s*=\s*`+Redacted+`[&;]?\s*`).ReplaceAllString(dsn, "")
}
