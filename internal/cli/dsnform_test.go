package cli

import (
	"net"
	"strconv"
	"strings"
	"testing"
)

// TestKeywordDSN gives run PostgreSQL's keyword-form DSN (host=... password=...),
// which was refused as neither a URL nor a MySQL DSN and echoed with its
// password: it is taken as a postgres target (the engine follows from it),
// checked against its host and port, and no message shows the password.
func TestKeywordDSN(t *testing.T) {
	// A port nothing listens on: one just closed.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	const secret = "s3cr3t-kw"
	db := t.TempDir() + "/r.db"
	for _, c := range []struct {
		dsn, want string
	}{
		{"host=127.0.0.1 port=" + strconv.Itoa(port) + " user=postgres password=" + secret + " dbname=postgres sslmode=disable",
			"target[0].dsn: no server answers at 127.0.0.1:" + strconv.Itoa(port)},
		{"host=127.0.0.1 port=99999 user=u password=" + secret, `flag --dsn: port "99999" is not allowed; want 1 to 65535`},
		{"host=127.0.0.1 user=u password='" + secret, "flag --dsn: \"host=127.0.0.1 user=u password=xxxxx\": the value of password has no closing quote"},
	} {
		code, out, stderr := run(t, Env{}, "run", "--dsn", c.dsn, "--store", db, "--preset", "smoke")
		if code != ExitUsage || !strings.Contains(unwrap(stderr), c.want) {
			t.Errorf("--dsn %q: exit %d, %q; want exit 2 and %q", c.dsn, code, stderr, c.want)
		}
		if strings.Contains(out+stderr, secret) {
			t.Errorf("--dsn %q: the password is in the output: %q", c.dsn, out+stderr)
		}
	}
}
