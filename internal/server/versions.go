package server

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Env reads the environment benchlab runs in as the command line injects it
// (cli.Env.Getenv, engine.Target.Getenv), never the process's directly, so
// that tests set variables without touching the process. A nil Env is an
// empty environment.
type Env func(string) string

// Get returns the variable key, "" when unset or when e is nil.
func (e Env) Get(key string) string {
	if e == nil {
		return ""
	}
	return e(key)
}

// VersionsDir holds the server versions `benchlab install` unpacked, one dir
// per engine and version (versions/postgres/16.15). It is
// $BENCHLAB_VERSIONS, or benchlab/versions under the user's data dir
// ($XDG_DATA_HOME, else ~/.local/share); for root /var/lib/benchlab/versions,
// since PostgreSQL then runs as the postgres user, who cannot enter /root.
func (e Env) VersionsDir() string {
	if d := e.Get("BENCHLAB_VERSIONS"); d != "" {
		return d
	}
	if os.Geteuid() == 0 {
		return "/var/lib/benchlab/versions"
	}
	base := e.Get("XDG_DATA_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = os.TempDir()
		}
		base = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(base, "benchlab", "versions")
}

// LogDir is where server logs are kept: $BENCHLAB_SERVER_LOGS, or
// server-logs under the user's cache dir.
func (e Env) LogDir() string {
	if d := e.Get("BENCHLAB_SERVER_LOGS"); d != "" {
		return d
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "benchlab", "server-logs")
}

// MavenRepo is the local Maven repository downloads go to:
// $BENCHLAB_MAVEN_REPO, or Maven's default ~/.m2/repository, so that
// repeated installs reuse what Maven already fetched.
func (e Env) MavenRepo() string {
	if d := e.Get("BENCHLAB_MAVEN_REPO"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = os.TempDir()
	}
	return filepath.Join(home, ".m2", "repository")
}

// versionDirs are the dirs under the versions dir an engine's versions may
// be in: the engine's own and its flavor's (the mysql engine runs the
// MariaDB releases `benchlab install mariadb` unpacked).
func versionDirs(f Flavor, engine string) []string {
	if engine == "" || engine == f.Name() {
		return []string{f.Name()}
	}
	return []string{engine, f.Name()}
}

// Installed lists the versions under the versions dir for an engine of
// flavor f, plus those the OS packages installed (Packaged), as
// "version (where)".
func Installed(env Env, f Flavor, engine string) []string {
	var out []string
	root := env.VersionsDir()
	for _, d := range versionDirs(f, engine) {
		ents, _ := os.ReadDir(filepath.Join(root, d))
		for _, e := range ents {
			if e.IsDir() {
				out = append(out, fmt.Sprintf("%s (%s)", e.Name(), filepath.Join(root, d, e.Name())))
			}
		}
	}
	if p, ok := f.(Packaged); ok {
		for _, pkg := range p.Packages() {
			out = append(out, fmt.Sprintf("%s (%s, %s)", pkg.Version, pkg.Source, pkg.Dir))
		}
	}
	sort.Slice(out, func(i, j int) bool { return versionLess(out[i], out[j]) })
	return out
}

// ResolveVersion returns the install dir of version v of an engine of
// flavor f: one `benchlab install` unpacked (under the name its release
// gives it: PostgreSQL's 16.15.0 is 16.15), or one the OS packages
// installed.
func ResolveVersion(env Env, f Flavor, engine, v string) (string, error) {
	if strings.ContainsAny(v, "/\\") || v == "." || v == ".." {
		return "", fmt.Errorf("%q is not a version", v)
	}
	names := []string{v}
	if r, ok := f.(Releaser); ok && versionRE.MatchString(v) {
		if rel, err := r.Release(v); err == nil && rel.Version != v {
			names = append(names, rel.Version)
		}
	}
	root := env.VersionsDir()
	for _, d := range versionDirs(f, engine) {
		for _, name := range names {
			dir := filepath.Join(root, d, name)
			if _, err := os.Stat(dir); err == nil {
				if _, err := FindBinaries(f, dir); err != nil {
					return "", fmt.Errorf("%s %s at %s is incomplete: %w", engine, v, dir, err)
				}
				return dir, nil
			}
		}
	}
	if p, ok := f.(Packaged); ok {
		for _, pkg := range p.Packages() {
			if pkg.Version == v {
				if _, err := FindBinaries(f, pkg.Dir); err == nil {
					return pkg.Dir, nil
				}
			}
		}
	}
	have := Installed(env, f, engine)
	list := "none"
	if len(have) > 0 {
		list = strings.Join(have, ", ")
	}
	how := "give the target a basedir (the dir that holds bin/)"
	if _, ok := f.(Releaser); ok {
		how = fmt.Sprintf("run `benchlab install %s %s`, or %s", f.Name(), v, how)
	}
	return "", fmt.Errorf("%s %s is %w in %s (installed: %s); %s", engine, v, ErrNotInstalled, root, list, how)
}

// versionLess orders "12.22 (...)" before "16.15 (...)" numerically.
func versionLess(a, b string) bool {
	pa := strings.Split(strings.Fields(a)[0], ".")
	pb := strings.Split(strings.Fields(b)[0], ".")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		x, errx := strconv.Atoi(pa[i])
		y, erry := strconv.Atoi(pb[i])
		if errx != nil || erry != nil {
			if pa[i] != pb[i] {
				return pa[i] < pb[i]
			}
			continue
		}
		if x != y {
			return x < y
		}
	}
	if len(pa) != len(pb) {
		return len(pa) < len(pb)
	}
	return a < b
}
