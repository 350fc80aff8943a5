// Package ferretdb is the ferretdb engine: FerretDB v1 (the MongoDB wire
// protocol over SQLite or PostgreSQL), compiled into benchlab and started
// per run as a server of its own (benchlab re-executed as ServeCommand),
// over a fresh SQLite dir or over a PostgreSQL server benchlab also starts
// (the postgres engine's managed server). Clients get the mongodb engine's
// DB. docs/engines-and-servers.md says what protects it.
package ferretdb

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"benchlab/internal/engine"
	"benchlab/internal/engine/mongodb"
	"benchlab/internal/engine/postgres"
	"benchlab/internal/server"
)

func init() { engine.Register(Driver{}) }

// The backends FerretDB v1 has, as the backend setting names them.
const (
	BackendSQLite     = "sqlite"
	BackendPostgreSQL = "postgresql"
)

// Setting names of a ferretdb target: the backend, the PostgreSQL
// backend's install (version or basedir, as a postgres target's), and
// "postgres." followed by a PostgreSQL setting for its server.
const (
	SettingBackend   = "backend"
	SettingPGVersion = "postgres_version"
	SettingPGBasedir = "postgres_basedir"
	pgPrefix         = "postgres."
)

// module is FerretDB's Go module.
const module = "github.com/FerretDB/FerretDB"

// Version is the FerretDB version compiled in ("1.24.2"), from the
// build's module list.
func Version() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == module {
				if m.Replace != nil {
					m = m.Replace
				}
				return strings.TrimPrefix(m.Version, "v")
			}
		}
	}
	return "unknown"
}

// Driver opens ferretdb targets.
type Driver struct{}

// Name returns "ferretdb".
func (Driver) Name() string { return "ferretdb" }

// Kind says the engine stores documents.
func (Driver) Kind() engine.Kind { return engine.KindDoc }

// Summary describes the engine for `benchlab list`.
func (Driver) Summary() string {
	return "FerretDB " + Version() + " (MongoDB protocol) started per run over SQLite or a PostgreSQL benchlab starts (settings.backend)"
}

// Settings returns nil: CheckTarget checks the backend and the
// PostgreSQL settings, which are open-ended.
func (Driver) Settings() []engine.Setting { return nil }

// CheckTarget refuses what a managed FerretDB cannot be given: a dsn (the
// mongodb engine reaches running servers), a basedir, a version other than
// the one compiled in, an unknown backend or setting.
func (Driver) CheckTarget(t engine.Target) error {
	switch {
	case t.DSN != "":
		return errors.New("dsn: the ferretdb engine starts its own server; for a running FerretDB or MongoDB use engine = \"mongodb\"")
	case t.Basedir != "":
		return fmt.Errorf("basedir: FerretDB is compiled into benchlab; remove basedir %q", t.Basedir)
	case t.Version != "" && strings.TrimPrefix(t.Version, "v") != Version():
		return fmt.Errorf("version: %q is not available; FerretDB %s is compiled into benchlab", t.Version, Version())
	case t.ConfigFile != "":
		return errors.New("config: FerretDB takes no config file; give settings")
	}
	if t.CPUs != "" {
		if err := server.CheckCPUList(t.CPUs); err != nil {
			return fmt.Errorf("cpus: %w", err)
		}
	}
	if t.Memory != "" {
		if _, err := server.ParseMemory(t.Memory); err != nil {
			return fmt.Errorf("memory: %w", err)
		}
	}
	backend := backendOf(t)
	if backend != BackendSQLite && backend != BackendPostgreSQL {
		return fmt.Errorf("settings.backend: %q is not a FerretDB v1 backend; want sqlite or postgresql", t.Settings[SettingBackend])
	}
	keys := make([]string, 0, len(t.Settings))
	for k := range t.Settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch {
		case k == SettingBackend:
		case k == SettingIDIndex:
			if _, err := strconv.ParseBool(t.Settings[k]); err != nil {
				return fmt.Errorf("settings.%s: %q is not true or false", k, t.Settings[k])
			}
		case k == SettingBackendIndexes:
			if err := checkBackendIndexes(t.Settings[k], backend); err != nil {
				return err
			}
		case k == SettingPGVersion || k == SettingPGBasedir || strings.HasPrefix(k, pgPrefix):
			if backend != BackendPostgreSQL {
				return fmt.Errorf("settings.%s: only for backend = \"postgresql\" (this target's backend is %s)", k, backend)
			}
		default:
			return fmt.Errorf("settings.%s: unknown ferretdb setting; known: backend, id_index, backend_indexes, postgres_version, postgres_basedir, "+
				"postgres.<PostgreSQL setting>", k)
		}
	}
	if backend == BackendPostgreSQL {
		if err := server.CheckTarget(postgres.Flavor, "postgres", pgTarget(t)); err != nil {
			return fmt.Errorf("settings.postgres_*: %w", err)
		}
	}
	return nil
}

// backendOf is the target's backend, sqlite when it names none.
func backendOf(t engine.Target) string {
	if b, ok := t.Settings[SettingBackend]; ok {
		return strings.ToLower(b)
	}
	return BackendSQLite
}

// pgTarget is the postgres target of a ferretdb target's PostgreSQL
// backend: its install, its settings, and the ferretdb target's CPUs and
// memory limit.
func pgTarget(t engine.Target) engine.Target {
	pt := engine.Target{Name: t.Name + "-postgres", Engine: "postgres", Version: t.Settings[SettingPGVersion],
		Basedir: t.Settings[SettingPGBasedir], CPUs: t.CPUs, Memory: t.Memory, Getenv: t.Getenv, Settings: map[string]string{}}
	for k, v := range t.Settings {
		if name, ok := strings.CutPrefix(k, pgPrefix); ok {
			pt.Settings[name] = v
		}
	}
	return pt
}

// Open starts FerretDB (and PostgreSQL first for that backend) under dir
// and returns a DB whose processes are both servers' trees.
func (d Driver) Open(ctx context.Context, t engine.Target, dir string) (engine.DB, error) {
	if err := d.CheckTarget(t); err != nil {
		return nil, fmt.Errorf("ferretdb target %s: %w", t.Name, err)
	}
	exe, err := linkExecutable(filepath.Join(dir, "bin"))
	if err != nil {
		return nil, fmt.Errorf("ferretdb target %s: %w", t.Name, err)
	}
	f := flavor{exe: exe, backend: backendOf(t)}
	info := engine.Info{Engine: "ferretdb", Version: Version(), Settings: map[string]string{"backend": f.backend}}
	var pg *postgres.DB
	var auth *options.Credential
	if f.backend == BackendPostgreSQL {
		pdb, err := postgres.Driver{}.Open(ctx, pgTarget(t), filepath.Join(dir, "postgres"))
		if err != nil {
			return nil, fmt.Errorf("ferretdb target %s: backend: %w", t.Name, err)
		}
		pg = pdb.(*postgres.DB)
		in := pg.Instance()
		f.pgURL = (&url.URL{Scheme: "postgres", Host: in.Addr(), Path: "/" + postgres.Database}).String()
		// FerretDB v1 passes the client's credentials to PostgreSQL.
		auth = &options.Credential{AuthMechanism: "PLAIN", Username: "postgres", Password: in.Password()}
		pinfo, err := pg.Info(ctx)
		if err != nil {
			pg.Close()
			return nil, fmt.Errorf("ferretdb target %s: backend: %w", t.Name, err)
		}
		info.Settings["postgres_version"] = pinfo.Version
		info.Settings["postgres_server_log"] = in.KeptLog
		info.Build = fmt.Sprintf("FerretDB %s compiled into benchlab, PostgreSQL backend (PostgreSQL %s, %s)", Version(), pinfo.Version, pinfo.Build)
	} else {
		info.Build = fmt.Sprintf("FerretDB %s compiled into benchlab, SQLite backend (modernc.org/sqlite, pure Go)", Version())
	}
	cfg, err := config(f, t, filepath.Join(dir, "ferretdb"))
	if err != nil {
		if pg != nil {
			pg.Close()
		}
		return nil, err
	}
	if pg != nil {
		// One limit for both trees: FerretDB joins PostgreSQL's cgroup.
		cfg.MemoryLimit, cfg.MemoryOf = 0, pg.Instance()
	}
	in, err := server.Launch(ctx, cfg, probe(auth))
	if err != nil {
		if pg != nil {
			pg.Close()
			err = pg.Wrap(err)
		}
		return nil, err
	}
	info.Settings["benchlab.server_log"] = in.KeptLog
	managed := server.Manage(in)
	stop := in.Stop
	if pg != nil {
		managed = server.Manage(in, pg.Instance())
		stop = func() error { return errors.Join(in.Stop(), pg.Close()) }
	}
	mc := mongodb.Config{Target: t, URI: socketURI(in.Socket), Database: mongodb.Database,
		Auth: auth, Managed: managed, Info: info, Stop: stop}
	if settingOn(t, SettingIDIndex) {
		info.Settings[SettingIDIndex] = "true"
		mc.IndexIDs = func(ctx context.Context) (int, error) { return sqliteIDIndexes(ctx, in.DataDir) }
		if pg != nil {
			mc.IndexIDs = func(ctx context.Context) (int, error) { return pgIDIndexes(ctx, pg) }
		}
	}
	if pg != nil && settingOn(t, SettingBackendIndexes) {
		info.Settings[SettingBackendIndexes] = "true"
		info.Settings[SettingIDIndex] = "true"
		mc.IndexIDs = func(ctx context.Context) (int, error) {
			ids, err := pgIDIndexes(ctx, pg)
			if err != nil {
				return ids, err
			}
			twins, err := pgBackendIndexes(ctx, pg)
			return ids + twins, err
		}
	}
	db, err := mongodb.New(ctx, mc)
	if err != nil {
		stop()
		return nil, err
	}
	return db, nil
}

// config is the FerretDB server's Config: the target's CPUs and memory
// limit, a port picked but unused (it listens on its socket only).
func config(f flavor, t engine.Target, dir string) (server.Config, error) {
	var memory int64
	if t.Memory != "" {
		m, err := server.ParseMemory(t.Memory)
		if err != nil {
			return server.Config{}, fmt.Errorf("ferretdb target %s: memory: %w", t.Name, err)
		}
		memory = m
	}
	return server.Config{Flavor: f, Env: server.Env(t.Getenv), Engine: "ferretdb", Target: t.Name, Dir: dir,
		CPUs: t.CPUs, MemoryLimit: memory}, nil
}

// probe pings FerretDB on its socket, with the backend's credentials.
func probe(auth *options.Credential) server.Probe {
	return func(ctx context.Context, in *server.Instance) error {
		o := options.Client().ApplyURI(socketURI(in.Socket)).SetServerSelectionTimeout(2 * time.Second)
		if auth != nil {
			o.SetAuth(*auth)
		}
		c, err := mongo.Connect(o)
		if err != nil {
			return err
		}
		defer c.Disconnect(context.WithoutCancel(ctx))
		return c.Ping(ctx, nil)
	}
}
