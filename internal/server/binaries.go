package server

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Binaries are the programs of one server install.
type Binaries struct {
	// Basedir is the install dir the programs were found in.
	Basedir string
	// Init initialises a data dir (initdb, mariadb-install-db); empty for
	// a server that initialises its data dir itself (Oracle MySQL's
	// mysqld --initialize-insecure).
	Init string
	// Server is the server program (postgres, mariadbd, mysqld), its
	// symlinks resolved: the binary that actually runs.
	Server string
	// Share is the install's shared data dir when the family needs it
	// named (the MySQL family's message files, outside /usr).
	Share string
}

// binDirs are where an install keeps its programs, relative to basedir.
var binDirs = []string{"bin", "sbin", "libexec", "scripts"}

// ProgramDirs names the dirs FindProgram searches, for error messages.
var ProgramDirs = "{" + strings.Join(binDirs, ",") + "}"

// FindProgram returns the first of names that is an executable file in one
// of basedir's program dirs (bin, sbin, libexec, scripts), or "".
func FindProgram(basedir string, names ...string) string {
	for _, n := range names {
		for _, d := range binDirs {
			p := filepath.Join(basedir, d, n)
			if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
				return p
			}
		}
	}
	return ""
}

// FindBinaries locates the programs of flavor f under basedir, or in the
// flavor's default install when basedir is "". The error lists where it
// looked.
func FindBinaries(f Flavor, basedir string) (Binaries, error) {
	if basedir != "" {
		abs, err := filepath.Abs(basedir)
		if err != nil {
			return Binaries{}, err
		}
		if st, err := os.Stat(abs); err != nil || !st.IsDir() {
			return Binaries{}, fmt.Errorf("%s is not a directory", basedir)
		}
		basedir = abs
	}
	b, err := f.FindBinaries(basedir)
	if err != nil {
		return b, err
	}
	if b.Server == "" {
		return b, fmt.Errorf("%s: the %s flavor found no server program", b.Basedir, f.Name())
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
