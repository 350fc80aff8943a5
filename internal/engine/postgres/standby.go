package postgres

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/jackc/pgx/v5"

	"benchlab/internal/engine"
	"benchlab/internal/server"
)

// Probe is a managed server's readiness probe (SELECT 1 as the superuser
// over loopback), for engines that start PostgreSQL servers of their own.
func Probe(ctx context.Context, inst *server.Instance) error { return probe(ctx, inst) }

// StandbyFlavor is the flavor of a streaming replica of primary: its data
// dir is a pg_basebackup of the primary's (which creates the physical
// replication slot slot), with standby.signal and a primary_conninfo that
// gives the primary's password; it reports to the primary as
// application name slot. The replica's own address lines are appended last, as for
// a primary. Its Config's Password must be the primary's: the backup
// copies the accounts.
func StandbyFlavor(primary *server.Instance, slot string) server.Flavor {
	return standby{primary: primary, slot: slot}
}

// standby is StandbyFlavor's flavor.
type standby struct {
	flavor
	primary *server.Instance
	slot    string
}

// Conninfo is the libpq connection string a replica reaches the primary
// at port with, as the superuser with password, naming itself app.
func Conninfo(port int, password, app string) string {
	return fmt.Sprintf("host=%s port=%d user=postgres password=%s application_name=%s sslmode=disable", server.Host, port, password, app)
}

// Init takes the base backup as the server's user, then writes
// standby.signal and appends the replica's lines to the copied
// postgresql.conf: its own address, socket and pg_hba.conf, the primary's
// connection and slot, and no synchronous standbys of its own (a promoted
// replica would otherwise wait for standbys that are not there).
func (s standby) Init(ctx context.Context, in *server.Instance, extra string) error {
	sock, err := in.SocketDir(len(socketName))
	if err != nil {
		return err
	}
	in.Socket = sock
	prog := server.FindProgram(in.Binaries().Basedir, "pg_basebackup")
	if prog == "" {
		return in.Errorf("%s has no pg_basebackup", in.Binaries().Basedir)
	}
	pass, err := in.SecretFile("pgpass", fmt.Sprintf("%s:%d:*:postgres:%s\n", server.Host, s.primary.Port, in.Password()))
	if err != nil {
		return err
	}
	conn := fmt.Sprintf("host=%s port=%d user=postgres passfile=%s sslmode=disable", server.Host, s.primary.Port, pass)
	if err := in.Run(ctx, "pg_basebackup", prog, "-D", in.DataDir, "-d", conn, "-X", "stream", "-c", "fast",
		"-C", "-S", s.slot, "--no-sync"); err != nil {
		return err
	}
	signal := filepath.Join(in.DataDir, "standby.signal")
	if err := os.WriteFile(signal, nil, 0o600); err != nil {
		return in.Errorf("standby.signal: %w", err)
	}
	if err := in.Own(signal); err != nil {
		return err
	}
	hba := filepath.Join(in.DataDir, "pg_hba.conf")
	addr := fmt.Sprintf("listen_addresses = '%s'\nport = %d\nunix_socket_directories = '%s'\nunix_socket_permissions = 0700\n"+
		"hba_file = '%s'\n", server.Host, in.Port, quote(sock), quote(hba))
	var b strings.Builder
	fmt.Fprintf(&b, "\n# benchlab: streaming replica of %s\n%s", s.primary.Addr(), addr)
	fmt.Fprintf(&b, "primary_conninfo = '%s'\nprimary_slot_name = '%s'\nhot_standby = on\nhot_standby_feedback = on\n"+
		"synchronous_standby_names = ''\n", quote(Conninfo(s.primary.Port, in.Password(), s.slot)), quote(s.slot))
	fmt.Fprintf(&b, "# benchlab: enforced last\n%s", addr)
	f, err := os.OpenFile(filepath.Join(in.DataDir, "postgresql.conf"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return in.Errorf("config: %w", err)
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return in.Errorf("config: %w", err)
	}
	return f.Close()
}

// OpenManaged opens the benchmark database on a managed server m's first
// instance for engine engineName, creating it first; it is Open's managed
// half, for engines that start the servers themselves.
func OpenManaged(ctx context.Context, engineName string, t engine.Target, m server.Managed) (*DB, error) {
	inst := m.Instance()
	db := &DB{target: t, Managed: m}
	fail := func(err error) (*DB, error) {
		db.Close()
		return nil, err
	}
	cfg, err := managedConfig(inst.Port, "postgres", inst.Password())
	if err != nil {
		return fail(fmt.Errorf("%s target %s: %w", engineName, t.Name, err))
	}
	admin, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fail(fmt.Errorf("%s target %s at %s: connect: %s", engineName, t.Name, inst.Addr(), server.RedactIn(err.Error(), inst.Password())))
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+Database); err != nil {
		admin.Close(context.WithoutCancel(ctx))
		return fail(fmt.Errorf("%s target %s at %s: create database %s: %w", engineName, t.Name, inst.Addr(), Database, err))
	}
	admin.Close(ctx)
	if db.cfg, err = managedConfig(inst.Port, Database, inst.Password()); err != nil {
		return fail(fmt.Errorf("%s target %s: %w", engineName, t.Name, err))
	}
	if db.admin, err = db.dial(ctx, db.cfg); err != nil {
		return fail(err)
	}
	return db, nil
}

// ConnectPort opens a worker connection to the benchmark database of
// another managed server on loopback port, with the same password (a
// replica of this DB's server).
func (db *DB) ConnectPort(ctx context.Context, port int) (engine.Conn, error) {
	cfg := db.cfg.Copy()
	cfg.Port = uint16(port)
	c, err := db.dial(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &Conn{c: c, db: db}, nil
}
