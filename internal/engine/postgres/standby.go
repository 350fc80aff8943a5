package postgres

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

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

// RewoundFlavor is the flavor of a former primary that rejoins as a
// streaming replica of primary on its own data dir, from (its stopped
// server's, which Init moves into place): pg_rewind undoes what it wrote
// after the point where primary's timeline forked from its own, copying
// only the blocks that changed since, instead of the whole base backup
// StandbyFlavor takes. It is then configured as StandbyFlavor's replicas
// are. The slot must exist on primary, and the old server must have run
// with wal_log_hints or data checksums, which pg_rewind requires; when
// it fails, Init's error says why and the data dir is left half-rewound,
// fit only to be removed.
func RewoundFlavor(primary *server.Instance, slot, from string) server.Flavor {
	return standby{primary: primary, slot: slot, rewindFrom: from}
}

// standby is StandbyFlavor's and RewoundFlavor's flavor.
type standby struct {
	flavor
	primary *server.Instance
	slot    string
	// rewindFrom is the data dir pg_rewind rewinds; "" takes a base backup.
	rewindFrom string
}

// Conninfo is the libpq connection string a replica reaches the primary
// at port with, as the superuser with password, naming itself app.
func Conninfo(port int, password, app string) string {
	return fmt.Sprintf("host=%s port=%d user=postgres password=%s application_name=%s sslmode=disable", server.Host, port, password, app)
}

// Init fills the data dir as the server's user (a base backup, or the
// old data dir rewound), then writes standby.signal and appends the
// replica's lines: to the copied postgresql.conf its own address, socket
// and pg_hba.conf; to postgresql.auto.conf, which is read after it and
// may hold the primary's ALTER SYSTEM settings, the primary's connection
// and slot and no synchronous standbys of its own (a promoted replica
// would otherwise wait for standbys that are not there).
func (s standby) Init(ctx context.Context, in *server.Instance, extra string) error {
	sock, err := in.SocketDir(len(socketName))
	if err != nil {
		return err
	}
	in.Socket = sock
	pass, err := in.SecretFile("pgpass", fmt.Sprintf("%s:%d:*:postgres:%s\n", server.Host, s.primary.Port, in.Password()))
	if err != nil {
		return err
	}
	conn := fmt.Sprintf("host=%s port=%d user=postgres passfile=%s sslmode=disable", server.Host, s.primary.Port, pass)
	if s.rewindFrom != "" {
		err = s.rewind(ctx, in, conn)
	} else {
		err = s.baseBackup(ctx, in, conn)
	}
	if err != nil {
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
	conf := fmt.Sprintf("\n# benchlab: streaming replica of %s\nhot_standby = on\nhot_standby_feedback = on\n"+
		"# benchlab: enforced last\n%s", s.primary.Addr(), addr)
	if err := appendConf(in, "postgresql.conf", conf); err != nil {
		return err
	}
	auto := fmt.Sprintf("# benchlab: streaming replica of %s\nprimary_conninfo = '%s'\nprimary_slot_name = '%s'\n"+
		"synchronous_standby_names = ''\n", s.primary.Addr(), quote(Conninfo(s.primary.Port, in.Password(), s.slot)), quote(s.slot))
	return appendConf(in, "postgresql.auto.conf", auto)
}

// baseBackup copies the primary's data dir into in.DataDir by
// pg_basebackup, creating the slot.
func (s standby) baseBackup(ctx context.Context, in *server.Instance, conn string) error {
	prog := server.FindProgram(in.Binaries().Basedir, "pg_basebackup")
	if prog == "" {
		return in.Errorf("%s has no pg_basebackup", in.Binaries().Basedir)
	}
	return in.Run(ctx, "pg_basebackup", prog, "-D", in.DataDir, "-d", conn, "-X", "stream", "-c", "fast",
		"-C", "-S", s.slot, "--no-sync")
}

// rewind moves the old data dir to in.DataDir (one rename: its files,
// and their inodes, are kept) and runs pg_rewind on it with the primary
// as the source.
func (s standby) rewind(ctx context.Context, in *server.Instance, conn string) error {
	prog := server.FindProgram(in.Binaries().Basedir, "pg_rewind")
	if prog == "" {
		return in.Errorf("%s has no pg_rewind", in.Binaries().Basedir)
	}
	if _, err := os.Stat(s.rewindFrom); err != nil {
		// A second try of the start (its port was taken) finds it moved
		// and removed.
		return in.Errorf("the data dir to rewind: %w", err)
	}
	if err := os.Remove(in.DataDir); err != nil {
		return in.Errorf("data dir: %w", err)
	}
	if err := os.Rename(s.rewindFrom, in.DataDir); err != nil {
		return in.Errorf("move %s to %s: %w", s.rewindFrom, in.DataDir, err)
	}
	return in.Run(ctx, "pg_rewind", prog, "--target-pgdata", in.DataDir, "--source-server", conn+" dbname=postgres", "--no-sync")
}

// appendConf appends text to the data dir's config file name.
func appendConf(in *server.Instance, name, text string) error {
	p := filepath.Join(in.DataDir, name)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return in.Errorf("%s: %w", name, err)
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return in.Errorf("%s: %w", name, err)
	}
	return in.Own(p)
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
