package postgres

import (
	"context"
	"fmt"
	"os"
	"os/exec"
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

// OwnedSettings are the address, data dir and authentication settings.
func (flavor) OwnedSettings() []string {
	return []string{"listen_addresses", "port", "unix_socket_directories", "data_directory", "hba_file", "ident_file"}
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

// Init runs initdb, with the superuser's password (Instance.Password)
// from a 0600 file, writes pg_hba.conf (password authentication for the
// socket and 127.0.0.1, nothing else) and appends benchlab's lines, the
// config file and the settings to postgresql.conf. The last block repeats
// the address and authentication lines, so no config file or setting can
// make the server listen beyond loopback or trust a client.
func (flavor) Init(ctx context.Context, in *server.Instance, extra string) error {
	sock, err := in.SocketDir(len(socketName))
	if err != nil {
		return err
	}
	in.Socket = sock
	bins := in.Binaries()
	auth := authMethod(ctx, bins)
	pwfile, err := in.SecretFile("pwfile", in.Password()+"\n")
	if err != nil {
		return err
	}
	args := []string{"-D", in.DataDir, "-U", "postgres", "--auth=" + auth, "--pwfile=" + pwfile,
		"--encoding=UTF8", "--locale=C", "--no-sync"}
	if server.HelpMentions(ctx, bins.Init, "--no-instructions") { // PostgreSQL 14 and later
		args = append(args, "--no-instructions")
	}
	if err := in.Run(ctx, "initdb", bins.Init, args...); err != nil {
		return err
	}
	hba := filepath.Join(in.DataDir, "pg_hba.conf")
	if err := os.WriteFile(hba, []byte(hbaLines(auth)), 0o600); err != nil {
		return in.Errorf("pg_hba.conf: %w", err)
	}
	if err := in.Own(hba); err != nil {
		return err
	}
	var b strings.Builder
	addr := fmt.Sprintf("listen_addresses = '%s'\nport = %d\nunix_socket_directories = '%s'\nunix_socket_permissions = 0700\n"+
		"hba_file = '%s'\n", server.Host, in.Port, quote(sock), quote(hba))
	fmt.Fprintf(&b, "\n# benchlab: loopback only, private socket, passwords\n%s", addr)
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

// authMethod is scram-sha-256, or md5 before PostgreSQL 10, which lacks it.
func authMethod(ctx context.Context, bins server.Binaries) string {
	out, err := exec.CommandContext(ctx, bins.Init, "--version").Output()
	if err == nil {
		// "initdb (PostgreSQL) 15.14"
		f := strings.Fields(string(out))
		if len(f) > 0 {
			if major, err := strconv.Atoi(strings.SplitN(f[len(f)-1], ".", 2)[0]); err == nil && major < 10 {
				return "md5"
			}
		}
	}
	return "scram-sha-256"
}

// hbaLines is the whole of pg_hba.conf: every connection, on the socket or
// from 127.0.0.1, gives a password.
func hbaLines(auth string) string {
	return fmt.Sprintf(`# written by benchlab: a password for every connection, socket or loopback
local all all %[1]s
host all all 127.0.0.1/32 %[1]s
local replication all %[1]s
host replication all 127.0.0.1/32 %[1]s
`, auth)
}

// quote doubles the single quotes of a postgresql.conf string value.
func quote(s string) string { return strings.ReplaceAll(s, "'", "''") }
