package server

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// VersionsDir holds the server versions `benchlab install` unpacked, one dir
// per engine and version (versions/postgres/16.15). It is
// $BENCHLAB_VERSIONS, or benchlab/versions under the user's data dir
// (~/.local/share); for root /var/lib/benchlab/versions, since PostgreSQL
// then runs as the postgres user, who cannot enter /root.
func VersionsDir() string {
	if d := os.Getenv("BENCHLAB_VERSIONS"); d != "" {
		return d
	}
	if os.Geteuid() == 0 {
		return "/var/lib/benchlab/versions"
	}
	base := os.Getenv("XDG_DATA_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = os.TempDir()
		}
		base = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(base, "benchlab", "versions")
}

// versionDirs are the engine dirs under VersionsDir a family's versions may
// be in: the mysql engine runs MariaDB builds too.
func versionDirs(f Family, engine string) []string {
	if f == Postgres {
		return []string{"postgres"}
	}
	if engine == "mariadb" {
		return []string{"mariadb"}
	}
	return []string{engine, "mariadb"}
}

// Installed lists the versions under VersionsDir for an engine, plus the
// Debian PostgreSQL majors, as "version (where)".
func Installed(f Family, engine string) []string {
	var out []string
	for _, d := range versionDirs(f, engine) {
		ents, _ := os.ReadDir(filepath.Join(VersionsDir(), d))
		for _, e := range ents {
			if e.IsDir() {
				out = append(out, fmt.Sprintf("%s (%s)", e.Name(), filepath.Join(VersionsDir(), d, e.Name())))
			}
		}
	}
	if f == Postgres {
		majors, _ := DebianPostgresMajors()
		for _, m := range majors {
			out = append(out, fmt.Sprintf("%s (Debian package, %s)", m, filepath.Join(DebianPostgresRoot, m)))
		}
	}
	sort.Slice(out, func(i, j int) bool { return versionLess(out[i], out[j]) })
	return out
}

// ResolveVersion returns the install dir of version v: one `benchlab
// install` unpacked, or, for a bare PostgreSQL major, Debian's package.
func ResolveVersion(f Family, engine, v string) (string, error) {
	if strings.ContainsAny(v, "/\\") || v == "." || v == ".." {
		return "", fmt.Errorf("%q is not a version", v)
	}
	names := []string{v}
	if f == Postgres {
		// PostgreSQL 10+ installs as major.minor (16.15.0 is 16.15).
		if r, err := ReleaseOf("postgres", v); err == nil && r.Version != v {
			names = append(names, r.Version)
		}
	}
	for _, d := range versionDirs(f, engine) {
		for _, name := range names {
			dir := filepath.Join(VersionsDir(), d, name)
			if _, err := os.Stat(dir); err == nil {
				if _, err := FindBinaries(f, dir); err != nil {
					return "", fmt.Errorf("%s %s at %s is incomplete: %w", engine, v, dir, err)
				}
				return dir, nil
			}
		}
	}
	if f == Postgres {
		dir := filepath.Join(DebianPostgresRoot, v)
		if _, err := FindBinaries(f, dir); err == nil {
			return dir, nil
		}
	}
	have := Installed(f, engine)
	list := "none"
	if len(have) > 0 {
		list = strings.Join(have, ", ")
	}
	return "", fmt.Errorf("%s %s is %w in %s (installed: %s); run `benchlab install %s %s`, "+
		"or give the target a basedir (the dir that holds bin/)", engine, v,
		ErrNotInstalled, VersionsDir(), list, installEngine(f), v)
}

// installEngine is the engine name `benchlab install` takes for a family.
func installEngine(f Family) string {
	if f == Postgres {
		return "postgres"
	}
	return "mariadb"
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
