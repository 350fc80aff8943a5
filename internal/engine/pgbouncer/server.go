package pgbouncer

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"benchlab/internal/server"
)

// pooler is PgBouncer's part of the server lifecycle: pgbouncer.ini and
// the auth file written into its dir, pgbouncer in the foreground.
type pooler struct {
	backend  int    // the PostgreSQL server's port on loopback
	mode     string // pool_mode: session or transaction
	poolSize int    // default_pool_size
	user     string // the user clients log in as
	secret   string // the user's SCRAM secret, from the server's pg_authid
}

// Name is "pgbouncer".
func (pooler) Name() string { return "pgbouncer" }

// FindBinaries finds pgbouncer in the install dir (default /usr: Debian's
// pgbouncer package).
func (pooler) FindBinaries(basedir string) (server.Binaries, error) {
	if basedir == "" {
		basedir = "/usr"
	}
	p := server.FindProgram(basedir, "pgbouncer")
	if p == "" {
		return server.Binaries{}, fmt.Errorf("%s has no %s/pgbouncer; install the Debian package pgbouncer (scripts/install-deps.sh)",
			basedir, server.ProgramDirs)
	}
	return server.Binaries{Basedir: basedir, Server: p}, nil
}

// OwnedSettings: the pooler's file is benchlab's alone.
func (pooler) OwnedSettings() []string { return nil }

// SettingName keeps the name.
func (pooler) SettingName(name string) string { return name }

// RunAs is postgres, the user Debian's package runs PgBouncer as.
func (pooler) RunAs() string { return "postgres" }

// StopSignal is SIGTERM, PgBouncer's immediate shutdown (SIGINT waits for
// the clients' sessions to end).
func (pooler) StopSignal() syscall.Signal { return syscall.SIGTERM }

func iniPath(in *server.Instance) string  { return filepath.Join(in.Dir(), "pgbouncer.ini") }
func authPath(in *server.Instance) string { return filepath.Join(in.Dir(), "userlist.txt") }

// Init writes the auth file (the one user with its SCRAM secret, so no
// password is kept in clear: PgBouncer authenticates clients by SCRAM and
// logs in to the server with the keys of that exchange) and pgbouncer.ini:
// loopback only, no Unix socket, every database to the server's port, the
// pool mode and size asked for, logs to stderr (the instance's log).
func (p pooler) Init(_ context.Context, in *server.Instance, _ string) error {
	auth := fmt.Sprintf("%q %q\n", p.user, p.secret)
	if err := os.WriteFile(authPath(in), []byte(auth), 0o600); err != nil {
		return in.Errorf("auth file: %w", err)
	}
	ini := fmt.Sprintf(`; written by benchlab for target %s
[databases]
* = host=%s port=%d

[pgbouncer]
listen_addr = %s
listen_port = %d
unix_socket_dir =
auth_type = scram-sha-256
auth_file = %s
pool_mode = %s
default_pool_size = %d
max_client_conn = 10000
ignore_startup_parameters = extra_float_digits
logfile =
pidfile =
`, in.TargetName(), server.Host, p.backend, server.Host, in.Port, authPath(in), p.mode, p.poolSize)
	if err := os.WriteFile(iniPath(in), []byte(ini), 0o600); err != nil {
		return in.Errorf("pgbouncer.ini: %w", err)
	}
	return in.Own(authPath(in), iniPath(in))
}

// Command runs pgbouncer in the foreground, so that benchlab holds its
// process.
func (pooler) Command(in *server.Instance) (string, []string) {
	return in.Binaries().Server, []string{iniPath(in)}
}
