// Package dsn reads the connection strings of running servers that benchlab
// takes on its command line and in specs (a postgres:// URL or a MySQL
// driver DSN), to check them before anything runs, and hides their
// passwords in messages.
package dsn

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// Info is what Parse reads from a connection string.
type Info struct {
	// Family is "postgres" or "mysql".
	Family string
	// Host and Port are empty for a unix socket (and Port when the URL
	// gives none).
	Host, Port, User, DB string
}

// Parse checks a connection string's form before anything runs: a
// postgres:// (or postgresql://) URL with a host, PostgreSQL's keyword
// form (host=h port=5432 user=u password=pw dbname=db, as libpq and pgx
// read it), or a MySQL driver DSN user[:password]@tcp(host:port)/db. It
// returns the engine family.
func Parse(dsn string) (Info, error) {
	if strings.TrimSpace(dsn) == "" {
		return Info{}, fmt.Errorf("empty; want postgres://user@host:port/db, host=h user=u dbname=db, or user:pw@tcp(host:port)/db")
	}
	if keywordForm.MatchString(dsn) {
		return parseKeywords(dsn)
	}
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return Info{}, fmt.Errorf("%q is not a URL: %v", Redact(dsn), Innermost(err))
		}
		if u.Hostname() == "" {
			return Info{}, fmt.Errorf("%q names no host; want postgres://user@host:port/db", Redact(dsn))
		}
		if p := u.Port(); p != "" {
			if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
				return Info{}, fmt.Errorf("port %q is not allowed; want 1 to 65535", p)
			}
		}
		return Info{Family: "postgres", Host: u.Hostname(), Port: u.Port(), User: u.User.Username(),
			DB: strings.TrimPrefix(u.Path, "/")}, nil
	}
	at := strings.LastIndex(dsn, "@")
	rest := dsn[at+1:]
	if at < 0 || !strings.HasPrefix(rest, "tcp(") && !strings.HasPrefix(rest, "unix(") {
		return Info{}, fmt.Errorf("%q is neither a postgres:// URL nor a MySQL DSN user:pw@tcp(host:port)/db", Redact(dsn))
	}
	proto, after, _ := strings.Cut(rest, "(")
	addr, tail, ok := strings.Cut(after, ")")
	if !ok || !strings.HasPrefix(tail, "/") {
		return Info{}, fmt.Errorf("%q: want user:pw@%s(address)/db", Redact(dsn), proto)
	}
	info := Info{Family: "mysql", User: strings.SplitN(dsn[:at], ":", 2)[0], DB: strings.SplitN(tail[1:], "?", 2)[0]}
	if proto == "tcp" {
		h, p, err := net.SplitHostPort(addr)
		if err != nil {
			return Info{}, fmt.Errorf("address %q: want host:port", addr)
		}
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			// A quoted or odd value may hold "password=...": hide it too.
			return Info{}, fmt.Errorf("port %q is not allowed; want 1 to 65535", keywordPassword.ReplaceAllString(p, "${1}xxxxx"))
		}
		info.Host, info.Port = h, p
	}
	return info, nil
}

// keywordForm is how PostgreSQL's keyword/value form begins: a keyword
// and '=' (a URL or a MySQL DSN has "://", '@' or '(' first).
var keywordForm = regexp.MustCompile(`^\s*[A-Za-z_]+\s*=`)

// keywordExample ends the error of a malformed keyword DSN: fixed text,
// which the fuzz test leaves out when it looks for a password in errors.
const keywordExample = "e.g. host=h port=5432 user=u dbname=db"

// parseKeywords reads PostgreSQL's keyword/value form: keyword = value
// pairs apart by spaces, a value either a word or a '...' string with \'
// and \\ escapes. The host (the first of a list; a path is a Unix socket
// dir) and port are checked; other keywords are pgx's to judge.
func parseKeywords(dsn string) (Info, error) {
	kv := map[string]string{}
	s := dsn
	for {
		s = strings.TrimLeft(s, " \t\n")
		if s == "" {
			break
		}
		m := keywordForm.FindString(s)
		if m == "" {
			return Info{}, fmt.Errorf("%q: want keyword=value pairs apart by spaces, %s", Redact(dsn), keywordExample)
		}
		key := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(m), "="))
		s = strings.TrimLeft(s[len(m):], " \t")
		var val strings.Builder
		if strings.HasPrefix(s, "'") {
			i, closed := 1, false
			for ; i < len(s); i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				} else if s[i] == '\'' {
					closed = true
					break
				}
				val.WriteByte(s[i])
			}
			if !closed {
				return Info{}, fmt.Errorf("%q: the value of %s has no closing quote", Redact(dsn), key)
			}
			s = s[i+1:]
		} else {
			i := 0
			for ; i < len(s) && s[i] != ' ' && s[i] != '\t' && s[i] != '\n'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				val.WriteByte(s[i])
			}
			s = s[i:]
		}
		kv[key] = val.String()
	}
	info := Info{Family: "postgres", User: kv["user"], DB: kv["dbname"]}
	host, _, _ := strings.Cut(kv["host"], ",")
	if host == "" {
		host, _, _ = strings.Cut(kv["hostaddr"], ",")
	}
	if !strings.HasPrefix(host, "/") {
		info.Host = host // a path is a Unix socket's dir
	}
	if p, _, _ := strings.Cut(kv["port"], ","); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			// A quoted or odd value may hold "password=...": hide it too.
			return Info{}, fmt.Errorf("port %q is not allowed; want 1 to 65535", keywordPassword.ReplaceAllString(p, "${1}xxxxx"))
		}
		info.Port = p
	}
	return info, nil
}

// keywordPassword is the password of the keyword form, quoted or not.
var keywordPassword = regexp.MustCompile(`(?i)\b(password\s*=\s*)('(?:[^'\\]|\\.)*'?|\S*)`)

// Redact hides a password in a DSN quoted in an error.
func Redact(dsn string) string {
	if keywordForm.MatchString(dsn) {
		return keywordPassword.ReplaceAllString(dsn, "${1}xxxxx")
	}
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
			return u.String()
		}
		return dsn
	}
	if at := strings.LastIndex(dsn, "@"); at >= 0 {
		if user, _, has := strings.Cut(dsn[:at], ":"); has {
			return user + ":xxxxx" + dsn[at:]
		}
	}
	return dsn
}

// Innermost returns the innermost error.
func Innermost(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok || u.Unwrap() == nil {
			return err
		}
		err = u.Unwrap()
	}
}
