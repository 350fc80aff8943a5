package server

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Binaries are the programs of one server install.
type Binaries struct {
	// Basedir is the install dir the programs were found in.
	Basedir string
	// Init initialises a data dir (initdb, mariadb-install-db); empty for
	// Oracle MySQL, whose server initialises itself.
	Init string
	// Server is the server program (postgres, mariadbd, mysqld), its
	// symlinks resolved: the binary that actually runs.
	Server string
	// Share is the MySQL family's message files dir when the install has
	// one outside the default place (registry artifacts).
	Share string
	// Oracle is true for an Oracle MySQL install (mysqld --initialize-insecure).
	Oracle bool
}

// binDirs are where an install keeps its programs, relative to basedir.
var binDirs = []string{"bin", "sbin", "libexec", "scripts"}

// DebianPostgresRoot holds Debian's PostgreSQL installs, one dir per major.
const DebianPostgresRoot = "/usr/lib/postgresql"

// DefaultBasedir is the install used when a target gives neither basedir
// nor version: Debian's packages (PostgreSQL: the newest major under
// /usr/lib/postgresql; MariaDB: /usr, with mariadbd in /usr/sbin). It never
// searches PATH, where other builds may lurk.
func DefaultBasedir(f Family) (string, error) {
	if f == MySQL {
		return "/usr", nil
	}
	majors, _ := DebianPostgresMajors()
	if len(majors) == 0 {
		return "", fmt.Errorf("no basedir given and no Debian PostgreSQL under %s; install postgresql-15 or set basedir", DebianPostgresRoot)
	}
	return filepath.Join(DebianPostgresRoot, majors[len(majors)-1]), nil
}

// DebianPostgresMajors lists the PostgreSQL majors Debian's packages
// installed, oldest first.
func DebianPostgresMajors() ([]string, error) {
	ents, err := os.ReadDir(DebianPostgresRoot)
	if err != nil {
		return nil, err
	}
	var majors []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err == nil {
			if _, err := os.Stat(filepath.Join(DebianPostgresRoot, e.Name(), "bin", "postgres")); err == nil {
				majors = append(majors, e.Name())
			}
		}
	}
	sort.Slice(majors, func(i, j int) bool {
		a, _ := strconv.Atoi(majors[i])
		b, _ := strconv.Atoi(majors[j])
		return a < b
	})
	return majors, nil
}

// FindBinaries locates the programs of family f under basedir (or the
// default install). The error lists where it looked.
func FindBinaries(f Family, basedir string) (Binaries, error) {
	if basedir == "" {
		d, err := DefaultBasedir(f)
		if err != nil {
			return Binaries{}, err
		}
		basedir = d
	}
	abs, err := filepath.Abs(basedir)
	if err != nil {
		return Binaries{}, err
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return Binaries{}, fmt.Errorf("%s is not a directory", basedir)
	}
	b := Binaries{Basedir: abs}
	find := func(names ...string) string {
		for _, n := range names {
			for _, d := range binDirs {
				p := filepath.Join(abs, d, n)
				if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
					return p
				}
			}
		}
		return ""
	}
	where := "{" + strings.Join(binDirs, ",") + "}"
	switch f {
	case Postgres:
		b.Init, b.Server = find("initdb"), find("postgres")
		if b.Init == "" || b.Server == "" {
			return b, fmt.Errorf("%s has no %s/initdb and %s/postgres; want a PostgreSQL install dir (the one holding bin/)", basedir, where, where)
		}
	default:
		b.Server = find("mariadbd", "mysqld")
		b.Init = find("mariadb-install-db", "mysql_install_db")
		if b.Server == "" {
			return b, fmt.Errorf("%s has no %s/mariadbd or mysqld; want a MariaDB or MySQL install dir", basedir, where)
		}
		if b.Init == "" {
			if filepath.Base(b.Server) != "mysqld" {
				return b, fmt.Errorf("%s has %s but no mariadb-install-db or mysql_install_db in %s", basedir, b.Server, where)
			}
			b.Oracle = true
		}
		for _, s := range []string{"share/mariadb", "share/mysql", "share"} {
			if st, err := os.Stat(filepath.Join(abs, s, "english")); err == nil && st.IsDir() {
				if abs != "/usr" {
					b.Share = filepath.Join(abs, s)
				}
				break
			}
		}
	}
	if real, err := filepath.EvalSymlinks(b.Server); err == nil {
		b.Server = real
	}
	return b, nil
}

// ProvenanceFile, in an install dir, says where benchlab got it (written by
// `benchlab install`).
const ProvenanceFile = ".benchlab-source"

// Provenance says where the server binary came from: a Debian package
// (dpkg -S), a registry artifact installed by benchlab, or the user's own
// build. The binary's path is part of it, so two builds never look alike.
func Provenance(b Binaries) string {
	if src, err := os.ReadFile(filepath.Join(b.Basedir, ProvenanceFile)); err == nil {
		return fmt.Sprintf("registry artifact %s (%s)", strings.TrimSpace(string(src)), b.Server)
	}
	if pkg := debianPackage(b.Server); pkg != "" {
		return fmt.Sprintf("Debian package %s (%s)", pkg, b.Server)
	}
	return fmt.Sprintf("user build (%s)", b.Server)
}

// debianPackage returns "name version" of the package that owns path, or "".
func debianPackage(path string) string {
	if _, err := exec.LookPath("dpkg"); err != nil {
		return ""
	}
	out, err := exec.Command("dpkg", "-S", path).Output()
	if err != nil {
		// /usr/sbin may be a symlink target of a merged /usr; try the other spelling.
		alt := ""
		if strings.HasPrefix(path, "/usr/") {
			alt = strings.TrimPrefix(path, "/usr")
		}
		if alt == "" {
			return ""
		}
		if out, err = exec.Command("dpkg", "-S", alt).Output(); err != nil {
			return ""
		}
	}
	pkg, _, ok := strings.Cut(strings.TrimSpace(string(out)), ":")
	if !ok || strings.Contains(pkg, ",") {
		return ""
	}
	ver, err := exec.Command("dpkg-query", "-W", "-f=${Version}", pkg).Output()
	if err != nil {
		return pkg
	}
	return pkg + " " + strings.TrimSpace(string(ver))
}

// ErrNotInstalled is wrapped when a version is not installed.
var ErrNotInstalled = errors.New("not installed")
