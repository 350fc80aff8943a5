package postgres

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"benchlab/internal/server"
)

// Flavor is PostgreSQL's part of a managed server's life: initdb,
// postgresql.conf, postgres -D, a fast shutdown on SIGINT; it runs as the
// postgres user under root, which PostgreSQL requires.
var Flavor server.Flavor = flavor{}

func init() { server.RegisterFlavor(Flavor, "postgresql") }

type flavor struct{}

// Name returns "postgres".
func (flavor) Name() string { return "postgres" }

// DebianRoot holds Debian's PostgreSQL installs, one dir per major.
const DebianRoot = "/usr/lib/postgresql"

// FindBinaries finds initdb and postgres under basedir, or under the newest
// Debian major when basedir is "" (never on PATH, where other builds may
// lurk).
func (f flavor) FindBinaries(basedir string) (server.Binaries, error) {
	if basedir == "" {
		pkgs := f.Packages()
		if len(pkgs) == 0 {
			return server.Binaries{}, fmt.Errorf("no basedir given and no Debian PostgreSQL under %s; install postgresql-15 or set basedir", DebianRoot)
		}
		basedir = pkgs[len(pkgs)-1].Dir
	}
	b := server.Binaries{Basedir: basedir, Init: server.FindProgram(basedir, "initdb"), Server: server.FindProgram(basedir, "postgres")}
	if b.Init == "" || b.Server == "" {
		w := server.ProgramDirs
		return b, fmt.Errorf("%s has no %s/initdb and %s/postgres; want a PostgreSQL install dir (the one holding bin/)", basedir, w, w)
	}
	return b, nil
}

// Packages lists the PostgreSQL majors Debian's packages installed, oldest
// first.
func (flavor) Packages() []server.Package {
	ents, _ := os.ReadDir(DebianRoot)
	var majors []int
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil {
			if _, err := os.Stat(filepath.Join(DebianRoot, e.Name(), "bin", "postgres")); err == nil {
				majors = append(majors, n)
			}
		}
	}
	sort.Ints(majors)
	out := make([]server.Package, len(majors))
	for i, m := range majors {
		v := strconv.Itoa(m)
		out[i] = server.Package{Version: v, Dir: filepath.Join(DebianRoot, v), Source: "Debian package"}
	}
	return out
}

// OwnedSettings are the address and data dir settings.
func (flavor) OwnedSettings() []string {
	return []string{"listen_addresses", "port", "unix_socket_directories", "data_directory"}
}

// SettingName lowercases: PostgreSQL's names are case-insensitive.
func (flavor) SettingName(name string) string { return strings.ToLower(name) }

// RunAs is the postgres user: PostgreSQL refuses to run as root.
func (flavor) RunAs() string { return "postgres" }

// StopSignal is SIGINT, a fast shutdown (pg_ctl stop -m fast).
func (flavor) StopSignal() syscall.Signal { return syscall.SIGINT }

// Command is postgres -D datadir.
func (flavor) Command(in *server.Instance) (string, []string) {
	return in.Binaries().Server, []string{"-D", in.DataDir}
}

// socketName is the longest name PostgreSQL gives its socket in the socket dir.
const socketName = ".s.PGSQL.65535"

// Init runs initdb and appends benchlab's lines, the config file and the
// settings to postgresql.conf. The last block repeats the address lines, so
// no config file or setting can make the server listen beyond loopback.
func (flavor) Init(ctx context.Context, in *server.Instance, extra string) error {
	sock, err := in.SocketDir(len(socketName))
	if err != nil {
		return err
	}
	in.Socket = sock
	bins := in.Binaries()
	args := []string{"-D", in.DataDir, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync"}
	if server.HelpMentions(ctx, bins.Init, "--no-instructions") { // PostgreSQL 14 and later
		args = append(args, "--no-instructions")
	}
	if err := in.Run(ctx, "initdb", bins.Init, args...); err != nil {
		return err
	}
	var b strings.Builder
	addr := fmt.Sprintf("listen_addresses = '%s'\nport = %d\nunix_socket_directories = '%s'\n", server.Host, in.Port, quote(sock))
	fmt.Fprintf(&b, "\n# benchlab: loopback only, private socket\n%s", addr)
	if extra != "" {
		fmt.Fprintf(&b, "# benchlab: config file %s\n%s\n", in.ConfigFile(), extra)
	}
	if set := in.Settings(); len(set) > 0 {
		b.WriteString("# benchlab: target settings\n")
		for _, s := range set {
			fmt.Fprintf(&b, "%s = '%s'\n", s.Name, quote(s.Value))
		}
	}
	fmt.Fprintf(&b, "# benchlab: enforced last\n%s", addr)
	conf := filepath.Join(in.DataDir, "postgresql.conf")
	f, err := os.OpenFile(conf, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return in.Errorf("config: %w", err)
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return in.Errorf("config: %w", err)
	}
	if err := f.Close(); err != nil {
		return in.Errorf("config: %w", err)
	}
	return nil
}

// quote doubles the single quotes of a postgresql.conf string value.
func quote(s string) string { return strings.ReplaceAll(s, "'", "''") }
