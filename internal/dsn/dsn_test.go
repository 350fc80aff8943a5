package dsn

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]Info{
		"postgres://u:pw@h:5433/db?sslmode=disable": {Family: "postgres", Host: "h", Port: "5433", User: "u", DB: "db"},
		"postgresql://h/d":                          {Family: "postgres", Host: "h", DB: "d"},
		"u:pw@tcp(10.0.0.1:3306)/sb":                {Family: "mysql", Host: "10.0.0.1", Port: "3306", User: "u", DB: "sb"},
		"u@unix(/run/mysqld.sock)/sb":               {Family: "mysql", User: "u", DB: "sb"},
		// PostgreSQL's keyword form, as libpq and pgx read it.
		"host=10.0.0.2 port=5433 user=u password=secret dbname=sb":        {Family: "postgres", Host: "10.0.0.2", Port: "5433", User: "u", DB: "sb"},
		"  host = h  user='o\\'neil' password='se cret' dbname = 'my db'": {Family: "postgres", Host: "h", User: "o'neil", DB: "my db"},
		"host=/run/postgresql,h2 port=5432,5433 dbname=d":                 {Family: "postgres", Port: "5432", DB: "d"},
		"hostaddr=127.0.0.1 sslmode=disable":                              {Family: "postgres", Host: "127.0.0.1"},
	} {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for in, msg := range map[string]string{
		"": "empty", "hostname": "neither", "host=a port=0 password=secret": `port "0"`,
		"host=a password='secret": "no closing quote", "host=a password=secret 'x'": "want keyword=value pairs", "postgres:///d": "names no host", "postgres://h:0/d": `port "0"`,
		"u@tcp(h)/d": "want host:port", "u@tcp(h:1)": "want user:pw@tcp(address)/db", "u:secret@tcp(h:x)/d": `port "x"`,
	} {
		_, err := Parse(in)
		if err == nil || !strings.Contains(err.Error(), msg) || strings.Contains(err.Error(), "secret") {
			t.Errorf("Parse(%q): %v, want an error naming %q without the password", in, err, msg)
		}
	}
	for in, want := range map[string]string{
		"postgres://u:pw@h/d": "postgres://u:xxxxx@h/d", "u:pw@tcp(h:1)/d": "u:xxxxx@tcp(h:1)/d", "u@tcp(h:1)/d": "u@tcp(h:1)/d",
		"host=h password=pw user=u":          "host=h password=xxxxx user=u",
		"host=h PASSWORD = 'p w\\'x' user=u": "host=h PASSWORD = xxxxx user=u",
		"host=h password=p@ss:x user=u":      "host=h password=xxxxx user=u",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}
