package server

import (
	"context"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"benchlab/internal/engine"
)

func TestRedactDSN(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"postgres://bob:s3cret@db.example:5432/x?sslmode=disable", "postgres://bob:xxxxx@db.example:5432/x?sslmode=disable"},
		{"host=h user=bob password=s3cret dbname=x", "host=h user=bob password=xxxxx dbname=x"},
		{"host=h password='a b' dbname=x", "host=h password=xxxxx dbname=x"},
		{"bob:s3cret@tcp(127.0.0.1:3306)/sbtest", "bob:xxxxx@tcp(127.0.0.1:3306)/sbtest"},
		{"bob@tcp(127.0.0.1:3306)/sbtest", "bob@tcp(127.0.0.1:3306)/sbtest"},
		{"postgres://h/x", "postgres://h/x"},
	} {
		if got := RedactDSN(c.in); got != c.want || strings.Contains(got, "s3cret") {
			t.Errorf("RedactDSN(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := RedactIn("connect failed for s3cret", "s3cret"); strings.Contains(got, "s3cret") {
		t.Errorf("RedactIn left the secret: %q", got)
	}
}

func TestCheckCPUList(t *testing.T) {
	for _, ok := range []string{"0", "0-1", "0,2,4-5"} {
		if err := CheckCPUList(ok); err != nil {
			t.Errorf("CheckCPUList(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a", "3-1", "1,,2", "-1"} {
		if err := CheckCPUList(bad); err == nil {
			t.Errorf("CheckCPUList(%q) accepted", bad)
		}
	}
}

func TestCheckTarget(t *testing.T) {
	empty := t.TempDir()
	cfg := filepath.Join(empty, "missing.conf")
	for _, c := range []struct {
		t     engine.Target
		field string
	}{
		{engine.Target{Name: "a", Basedir: empty}, "basedir:"},
		{engine.Target{Name: "a", Basedir: filepath.Join(empty, "nope")}, "basedir:"},
		{engine.Target{Name: "a", Basedir: empty, Version: "16.15"}, "basedir and version:"},
		{engine.Target{Name: "a", DSN: "postgres://u:pw@h/db", Basedir: empty}, "dsn:"},
		{engine.Target{Name: "a", Version: "9.9.9"}, "version:"},
		{engine.Target{Name: "a", ConfigFile: cfg}, "config:"},
		{engine.Target{Name: "a", CPUs: "x"}, "cpus:"},
		{engine.Target{Name: "a", Settings: map[string]string{"listen_addresses": "*"}}, "settings.listen_addresses:"},
		{engine.Target{Name: "a", Settings: map[string]string{"port": "x"}}, "settings.port:"},
	} {
		err := CheckTarget(Postgres, "postgres", c.t)
		if err == nil || !strings.HasPrefix(err.Error(), c.field) {
			t.Errorf("CheckTarget(%+v) = %v, want an error starting %q", c.t, err, c.field)
		}
		if err != nil && strings.Contains(err.Error(), "pw@") {
			t.Errorf("password printed: %v", err)
		}
	}
	if err := CheckTarget(MySQL, "mariadb", engine.Target{Name: "a", Settings: map[string]string{"bind-address": "0.0.0.0"}}); err == nil {
		t.Error("bind-address accepted")
	}
}

func TestVersionOrder(t *testing.T) {
	if !versionLess("12.22 (x)", "16.15 (x)") || !versionLess("9.6.10 (x)", "12.1 (x)") || versionLess("16.15 (x)", "16.2 (x)") {
		t.Error("versionLess orders versions as strings")
	}
}

// TestLifecycle starts Debian's PostgreSQL with a TCP probe and checks the
// address rules and the clean stop.
func TestLifecycle(t *testing.T) {
	if _, err := FindBinaries(Postgres, ""); err != nil {
		t.Skipf("no PostgreSQL install: %v", err)
	}
	t.Setenv("BENCHLAB_SERVER_LOGS", t.TempDir())
	dir := t.TempDir()
	tcp := func(ctx context.Context, in *Instance) error {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", in.Addr())
		if err == nil {
			c.Close()
		}
		return err
	}
	in, err := Launch(context.Background(), Config{Family: Postgres, Engine: "postgres", Target: "t", Dir: dir,
		Settings: map[string]string{"shared_buffers": "16MB"}}, tcp)
	if err != nil {
		t.Fatal(err)
	}
	if in.User == "" && os.Geteuid() == 0 {
		t.Error("running as root, but the server was not given to an unprivileged user")
	}
	if addrs := listeners(t, in.Port); len(addrs) != 1 || addrs[0] != "127.0.0.1" {
		t.Errorf("port %d listened on %v, want only 127.0.0.1", in.Port, addrs)
	}
	sock := filepath.Join(in.Socket, fmt.Sprintf(".s.PGSQL.%d", in.Port))
	if _, err := os.Stat(sock); err != nil || !strings.HasPrefix(sock, dir) {
		t.Errorf("socket %s: %v; want it in the data dir", sock, err)
	}
	pid := in.PIDs()[0]
	if err := in.Stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	if err := syscall.Kill(-pid, 0); err == nil {
		t.Errorf("process group %d still alive after Stop", pid)
	}
	if in.Died() != nil {
		t.Errorf("a stopped server reported as died: %v", in.Died())
	}
	if b, err := os.ReadFile(in.KeptLog); err != nil || !strings.Contains(string(b), "shutting down") {
		t.Errorf("kept log %s: %v; want the shutdown in it", in.KeptLog, err)
	}
	// A second start on the same dir begins from a fresh data dir.
	in2, err := Launch(context.Background(), Config{Family: Postgres, Engine: "postgres", Target: "t", Dir: dir}, tcp)
	if err != nil {
		t.Fatal(err)
	}
	in2.Stop()
	t.Logf("provenance: %s", Provenance(in2.Binaries()))
}

// listeners returns the local addresses listening on port (from /proc/net/tcp{,6}).
func listeners(t *testing.T, port int) []string {
	var out []string
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fs := strings.Fields(line)
			if len(fs) < 4 || fs[3] != "0A" { // LISTEN
				continue
			}
			host, p, _ := strings.Cut(fs[1], ":")
			if p != fmt.Sprintf("%04X", port) {
				continue
			}
			raw, _ := hex.DecodeString(host)
			if len(raw) == 4 {
				out = append(out, net.IPv4(raw[3], raw[2], raw[1], raw[0]).String())
			} else {
				out = append(out, "ipv6:"+host)
			}
		}
	}
	return out
}

// TestStartFailsFast checks that a server which exits while starting is
// reported at once, not after the ready timeout.
func TestStartFailsFast(t *testing.T) {
	if _, err := FindBinaries(Postgres, ""); err != nil {
		t.Skipf("no PostgreSQL install: %v", err)
	}
	t.Setenv("BENCHLAB_SERVER_LOGS", t.TempDir())
	start := time.Now()
	_, err := Launch(context.Background(), Config{Family: Postgres, Engine: "postgres", Target: "t", Dir: t.TempDir(),
		Settings: map[string]string{"no_such_setting": "1"}, ReadyTimeout: time.Minute},
		func(context.Context, *Instance) error { return fmt.Errorf("not yet") })
	if err == nil || !strings.Contains(err.Error(), "no_such_setting") || time.Since(start) > 20*time.Second {
		t.Errorf("after %s: %v; want a prompt error quoting the setting", time.Since(start), err)
	}
}

func TestDropRedacted(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:secret@127.0.0.1:5432/db":          "postgres://u@127.0.0.1:5432/db",
		"host=127.0.0.1 user=u password=secret dbname=x": "host=127.0.0.1 user=u dbname=x",
		"u:secret@tcp(127.0.0.1:3306)/db":                "u@tcp(127.0.0.1:3306)/db",
		"postgres://u@127.0.0.1/db":                      "postgres://u@127.0.0.1/db",
	} {
		if got := DropRedacted(RedactDSN(in)); got != want {
			t.Errorf("DropRedacted(RedactDSN(%q)) = %q, want %q", in, got, want)
		}
	}
}
