// Package engine defines what benchlab needs from a database engine, whether it
// runs in-process (SQLite, RocksDB) or as a server, and a registry of engines by
// name. Engines register themselves from init; package all imports them.
package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"benchlab/internal/sqlbind"
)

// Target is one system under test as the spec names it: an engine plus the
// settings that make this variant differ from the others.
type Target struct {
	Name   string
	Engine string
	// Settings are engine settings: PRAGMAs for SQLite, server configuration
	// variables for servers.
	Settings map[string]string
	// Basedir is a server install dir (the one holding bin/); Version names
	// an installed version instead; DSN reaches an existing server that
	// benchlab does not start or stop; ConfigFile is a server config file
	// whose lines come before Settings. All are empty for embedded engines.
	Basedir, Version, DSN, ConfigFile string
	// CPUs is a CPU list ("0", "1-3") the server is pinned to; empty: no pinning.
	CPUs string
	// Memory limits a server benchlab starts, page cache included, by a
	// memory cgroup ("2GB"); empty: no limit.
	Memory string
	// Client chooses the client path of a server engine (ClientChooser);
	// empty: the fast path where it applies.
	Client Client
	// Getenv reads the environment of the command that opens the target
	// (cli.Env.Getenv): engines read variables such as MYSQL_PWD or
	// BENCHLAB_SERVER_LOGS through it, never from the process. Nil is an
	// empty environment.
	Getenv func(string) string
}

// Env returns the environment variable key as t.Getenv reads it, "" when
// unset or when t has no environment.
func (t Target) Env(key string) string {
	if t.Getenv == nil {
		return ""
	}
	return t.Getenv(key)
}

// Setting documents one engine setting that a target may give.
type Setting struct {
	Name    string
	Doc     string
	Default string
	// Check returns an error describing what is allowed when v is not.
	Check func(v string) error
}

// Info describes an opened database as measured, for the run manifest.
type Info struct {
	Engine  string
	Version string
	// Build says where the engine's code came from (for example "mattn/go-sqlite3
	// v1.14 amalgamation, compiled in"), so a report can warn when builds differ.
	Build string
	// Settings are the effective values read back from the engine, not the
	// requested ones.
	Settings map[string]string
	// SettingUnits are the units a bare number of a setting is counted in,
	// where the server says (PostgreSQL: shared_buffers in "8kB"), so a
	// sweep's value can be checked against what was read back.
	SettingUnits map[string]string
	// Client is the client path the workers use ("fast" or "driver"), for
	// a server engine that has a choice; Notes say why a target that asked
	// for the fast path (or left it to the default) uses the driver.
	Client string
	Notes  []string
}

// Driver opens databases of one engine.
type Driver interface {
	// Name is the engine name used in specs ("sqlite").
	Name() string
	// Summary is one line for `benchlab list`.
	Summary() string
	// Settings lists the settings a target of this engine may give.
	Settings() []Setting
	// Open creates or opens the database for target t, keeping any files
	// under dir, which the caller owns and removes.
	Open(ctx context.Context, t Target, dir string) (DB, error)
}

// Kind is the interface an engine's databases offer to workloads.
type Kind string

// Kinds of engine.
const (
	// KindSQL engines speak SQL (engine.SQL).
	KindSQL Kind = "sql"
	// KindKV engines are key-value stores (engine.KV, or whole steps run by
	// engine.StepRunner).
	KindKV Kind = "kv"
	// KindDoc engines store documents and speak the MongoDB wire protocol
	// (package engine/docdb).
	KindDoc Kind = "doc"
)

// Kinded is implemented by drivers that say, without opening anything,
// which Kind their databases are, so that a spec pairing an engine with a
// suite it cannot run is refused before anything runs.
type Kinded interface {
	Kind() Kind
}

// KindOf returns d's kind, or "" when d does not say.
func KindOf(d Driver) Kind {
	if k, ok := d.(Kinded); ok {
		return k.Kind()
	}
	return ""
}

// TargetChecker is implemented by drivers that validate a target's engine
// specific fields (basedir, version, dsn, ...) before anything runs.
type TargetChecker interface {
	CheckTarget(t Target) error
}

// DSNChecker is implemented by drivers that check, before a run, that the
// existing server a target's dsn names can do what the target asks of it
// (the MySQL family: the storage engine its settings name). The run's
// preflight calls it once the server answers; its error names the field
// and ends the run as a usage error (exit 2). A server it cannot reach
// (a wrong password, say) passes: Open reports that.
type DSNChecker interface {
	CheckDSN(ctx context.Context, t Target) error
}

// PreparedStatementLoser is implemented by drivers whose targets may keep
// no server-side prepared statement from one transaction to the next (a
// pooler that hands each transaction to any server connection). Reason
// says why for target t, "" when t keeps them; the spec then refuses
// workload.prepared for suites that prepare (workload.Preparer).
type PreparedStatementLoser interface {
	LosesPrepared(t Target) string
}

// Server is implemented by DBs that run as separate processes, so that the
// runner can measure their CPU and IO per operation from /proc.
type Server interface {
	// PIDs returns the server's root process IDs; their descendants count too.
	PIDs() []int
}

// Liveness is implemented by DBs whose engine runs in another process that
// can die; Died returns why once it has, so a step stops at once instead of
// counting failures until its time is up.
type Liveness interface {
	Died() error
}

// WrapDied adds why l died, when it has, to a failed call's error: the
// call failed because the server did, and the error then says so.
func WrapDied(err error, l Liveness) error {
	if err == nil {
		return nil
	}
	if died := l.Died(); died != nil {
		return fmt.Errorf("%w; %v", err, died)
	}
	return err
}

// Remote is implemented by DBs reached over a socket (servers), whose worker
// connections honour WithPolledIO.
type Remote interface {
	Remote() bool
}

// CallsC is implemented by DBs whose operations are calls into C inside
// benchlab's process (cgo: SQLite, in-process RocksDB). While workers are in
// C calls and no processor is idle, Go's runtime monitor keeps taking
// processors back from them and waking other threads to hold them; the
// runner then gives the step one processor more than it has workers.
type CallsC interface {
	CallsC() bool
}

// workerFlag is a context key marking how a worker's connections should
// behave (the runner sets them for Connect).
type workerFlag int

const (
	polledFlag workerFlag = iota
	workerPassesFlag
)

func withFlag(ctx context.Context, f workerFlag) context.Context {
	return context.WithValue(ctx, f, true)
}

func hasFlag(ctx context.Context, f workerFlag) bool {
	v, _ := ctx.Value(f).(bool)
	return v
}

// WithPolledIO marks ctx, given to a worker's Connect, to say that the step's
// workers outnumber the Go scheduler's processors: its connections should then
// wait for answers through Go's network poller, parking the goroutine, rather
// than blocking their OS thread in a read (package engine/fastpath), which pays off
// only while every worker can keep a processor.
func WithPolledIO(ctx context.Context) context.Context { return withFlag(ctx, polledFlag) }

// PolledIO reports whether ctx was marked by WithPolledIO.
func PolledIO(ctx context.Context) bool { return hasFlag(ctx, polledFlag) }

// WithWorkerPasses marks ctx, given to a worker's Connect, to say that the
// worker passes through the Go scheduler between its operations itself (a
// worker locked to its OS thread, which unlocks the thread for the pass, as
// a plain yield of a locked goroutine costs more thread hand-offs): its
// connections should not also pass after each request (package engine/fastpath).
func WithWorkerPasses(ctx context.Context) context.Context { return withFlag(ctx, workerPassesFlag) }

// WorkerPasses reports whether ctx was marked by WithWorkerPasses.
func WorkerPasses(ctx context.Context) bool { return hasFlag(ctx, workerPassesFlag) }

// DB is an opened database. Workloads type-assert it to SQL (or, for key-value
// engines, to their own view) to do work.
type DB interface {
	Info(ctx context.Context) (Info, error)
	Close() error
}

// SQL is the view of a DB that speaks SQL.
type SQL interface {
	DB
	// Dialect tells workloads how to spell their statements for this engine.
	Dialect() Dialect
	// Connect opens a new connection; each worker uses its own.
	Connect(ctx context.Context) (Conn, error)
	// Maintain does the engine's cleanup after write-heavy work (docs/method.md 1.9,
	// 2.5): for example checkpoint and analyze. It does not wait; the caller
	// owns the target wait time. It returns one line for each part it left
	// out because the user of an existing server lacks the right to run it
	// ("CHECKPOINT: ..."), so the run can say so; none when it did it all.
	Maintain(ctx context.Context, tables []string) (skipped []string, err error)
}

// CleanupReporter is an SQL DB whose cleanup says what it did, so that the
// run can tell which routine ran (InnoDB's purge wait and page flush,
// MyRocks' memtable flush and L0 compaction) and what it found.
type CleanupReporter interface {
	// MaintainReport is Maintain that also returns one line for each part
	// it did ("MyRocks: memtable flushed ..."), and facts with units in
	// their names (L0 files before and after).
	MaintainReport(ctx context.Context, tables []string) (Cleanup, error)
}

// Cleanup is what a CleanupReporter's cleanup did and left out.
type Cleanup struct {
	Done, Skipped []string
	Facts         map[string]float64
}

// TableEngineChecker is an SQL DB whose target asks for a storage engine
// (MariaDB's default_storage_engine = "rocksdb"): it reads the tables'
// engine back from the server's catalog, so that nothing is measured under
// another engine than the one asked for.
type TableEngineChecker interface {
	// CheckTableEngines returns an error naming each of tables whose
	// engine is not the one asked for, or that the catalog lacks; nil
	// when the target asks for none.
	CheckTableEngines(ctx context.Context, tables []string) error
}

// Sizer is a DB that reports the size of the benchmark database as the
// engine counts it (docs/method.md 1.11 dbGB: PostgreSQL's pg_database_size, the
// InnoDB schema dir, SQLite's pages).
type Sizer interface {
	DBSize(ctx context.Context) (int64, error)
}

// StatsReader is a DB that reads its engine's own cumulative counters
// (PostgreSQL's pg_stat_database, pg_stat_bgwriter and pg_stat_wal,
// MariaDB's SHOW GLOBAL STATUS), so that the runner can give a step's
// buffer pool misses, fsyncs, WAL bytes, rows examined, ... per operation:
// the why of a slower target.
type StatsReader interface {
	// ReadStats returns the engine's counters now, by stable names grouped
	// by where they come from ("pg_stat_wal.wal_bytes",
	// "status.Innodb_buffer_pool_reads"). Every value is a total that only
	// grows while the server runs (a counter, never a gauge such as dirty
	// pages), so the difference of two reads is what happened between
	// them. It must be cheap (a round trip or two) and must not use the
	// workers' connections: it runs while they work, from one goroutine, at
	// the start and the end of a step's measured part. (Not Stats: a KV
	// engine's Stats reads its LSM facts.)
	ReadStats(ctx context.Context) (map[string]float64, error)
}

// Internals is one read of an engine's counters and gauges, taken at one
// moment. Counters are totals that only grow (as StatsReader's); gauges
// are levels that rise and fall (checkpoint age, dirty pages, L0 files,
// backends waiting), whose value at the read is what counts.
type Internals struct {
	Counters map[string]float64
	Gauges   map[string]float64
}

// InternalsReader is a DB that reads its engine's counters and gauges, so
// that the runner can keep both as per-second series during a measured
// step (the counters as rates, the gauges as values: docs/measurement.md,
// "Engine internals per second"). Adding an engine's gauges is adding
// names to the list its ReadInternals reads; the runner, the store and the
// report take any name.
type InternalsReader interface {
	// ReadInternals returns the counters ReadStats returns (where the DB
	// is a StatsReader) and the gauges,
	// by stable names grouped by source as ReadStats names them
	// ("status.Innodb_checkpoint_age", "pg_activity.autovacuum_workers").
	// It runs once a second on a goroutine of its own while the workers
	// work, so it must be cheap (a round trip, two at most) on the
	// engine's administrative connection and must not wait for anything
	// the workers do.
	ReadInternals(ctx context.Context) (Internals, error)
}

// ErrConnLost marks an error after which the connection is gone (the server
// closed it, or the network failed) while the server may still run: the
// runner ends the step and fails it, keeping what was measured, rather than
// counting one failure per operation until the step's time is up.
var ErrConnLost = errors.New("connection lost")

// Cost hints how long a statement may run, so engines can choose between a
// cheap, non-interruptible call and one that a cancelled context interrupts.
type Cost int

const (
	// Short statements (point lookups, small ranges) finish in well under a
	// second; engines may skip per-call cancellation support for them.
	Short Cost = iota
	// Long statements (scans, big ranges) must stop promptly when the context
	// is cancelled.
	Long
)

// Conn is one connection, used by one goroutine at a time.
type Conn interface {
	// Exec runs sql without preparing it and returns the rows affected.
	Exec(ctx context.Context, sql string, args ...any) (int64, error)
	// Query runs sql without preparing it, reads every row and returns how many.
	Query(ctx context.Context, sql string, args ...any) (int64, error)
	// Values runs sql without preparing it and returns every row's columns
	// as text, NULL as "": for small results such as min/max and checks,
	// never in a measured hot path.
	Values(ctx context.Context, sql string, args ...any) ([][]string, error)
	// Prepare prepares sql on this connection.
	Prepare(ctx context.Context, sql string, cost Cost) (Stmt, error)
	Close() error
}

// Stmt is a prepared statement of one Conn.
type Stmt interface {
	// Exec runs the statement and returns the rows affected.
	Exec(ctx context.Context, args ...any) (int64, error)
	// Query runs the statement, reads every row and returns how many.
	Query(ctx context.Context, args ...any) (int64, error)
	// Values runs the statement and returns every row's columns as text,
	// NULL as "": for workloads whose next statement depends on what the
	// last one read (TPC-C). It allocates per row; Query does not.
	Values(ctx context.Context, args ...any) ([][]string, error)
	Close() error
}

// Dialect holds the spelling differences between SQL engines that workloads
// must know. Workloads write statements with '?' placeholders and call Bind.
type Dialect struct {
	// Name is "sqlite", "postgres" or "mysql".
	Name string
	// Numbered is true when placeholders are $1, $2, ... (PostgreSQL).
	Numbered bool
	// BeginRead starts a read-only transaction; BeginWrite one that writes
	// (SQLite takes the write lock up front with BEGIN IMMEDIATE).
	BeginRead, BeginWrite string
	// RowLocks is true when SELECT ... FOR UPDATE locks the rows it reads;
	// SQLite has no row locks (a write transaction holds the database's
	// write lock from BEGIN IMMEDIATE) and no FOR UPDATE.
	RowLocks bool
	// IndexHint, when set, forces an index after a table name in a SELECT,
	// %s standing for the index (MySQL's "FORCE INDEX (%s)").
	IndexHint string
	// DeleteLimit is true when DELETE takes ORDER BY and LIMIT (MySQL;
	// SQLite only in builds with SQLITE_ENABLE_UPDATE_DELETE_LIMIT).
	DeleteLimit bool
	// AlterAddIndex is true when one ALTER TABLE adds several secondary
	// indexes (MySQL's ADD INDEX, built in one pass over an InnoDB table).
	AlterAddIndex bool
	// ZeroTakesNextID is true when inserting 0 into an AUTO_INCREMENT key
	// takes the next value (MySQL), as sysbench's inserts do.
	ZeroTakesNextID bool
	// TableEngine is the storage engine a CREATE TABLE names (MySQL's
	// ENGINE=), "" where the dialect names none; see StorageEngine.
	TableEngine string
}

// StorageEngine is the storage engine the suites' CREATE TABLE names on a
// dialect that takes ENGINE=: TableEngine, or InnoDB when it is empty.
func (d Dialect) StorageEngine() string {
	if d.TableEngine == "" {
		return "InnoDB"
	}
	return d.TableEngine
}

// ForUpdate is the clause that makes a SELECT lock the rows it reads, with
// its leading space: " FOR UPDATE", or "" where RowLocks is false.
func (d Dialect) ForUpdate() string {
	if !d.RowLocks {
		return ""
	}
	return " FOR UPDATE"
}

// ForceIndex is the hint, with its leading space, that forces index on a
// SELECT's table: " FORCE INDEX (index)" on MySQL, "" where the dialect has
// no IndexHint.
func (d Dialect) ForceIndex(index string) string {
	if d.IndexHint == "" {
		return ""
	}
	return " " + fmt.Sprintf(d.IndexHint, index)
}

// Bind rewrites '?' placeholders into the dialect's form. It does not look
// inside string literals, so statements must not contain a literal '?'.
func (d Dialect) Bind(sql string) string {
	if !d.Numbered {
		return sql
	}
	return sqlbind.Numbered(sql)
}

// UnknownDialectError says a suite has no SQL for an engine's dialect: an
// engine with a new dialect must be taught to the suites that spell DDL per
// dialect, never given another engine's.
type UnknownDialectError struct {
	// Who is the suite or statement that needed the SQL.
	Who string
	// Dialect is the engine's dialect; Known the dialects Who spells.
	Dialect string
	Known   []string
}

// Error names who, the dialect and the dialects who spells.
func (e *UnknownDialectError) Error() string {
	return fmt.Sprintf("%s: no SQL for dialect %q; it has SQL for %s", e.Who, e.Dialect, strings.Join(e.Known, ", "))
}

// Spell returns by[d.Name], the SQL (or any per-dialect value) who spells
// for d, or an *UnknownDialectError when who has none for d.
func Spell[T any](who string, d Dialect, by map[string]T) (T, error) {
	if v, ok := by[d.Name]; ok {
		return v, nil
	}
	known := make([]string, 0, len(by))
	for k := range by {
		known = append(known, k)
	}
	sort.Strings(known)
	var zero T
	return zero, &UnknownDialectError{Who: who, Dialect: d.Name, Known: known}
}

// Dialects known to benchlab's workloads, by name.
var (
	SQLite   = Dialect{Name: "sqlite", BeginRead: "BEGIN", BeginWrite: "BEGIN IMMEDIATE"}
	Postgres = Dialect{Name: "postgres", Numbered: true, BeginRead: "BEGIN", BeginWrite: "BEGIN", RowLocks: true}
	MySQL    = Dialect{Name: "mysql", BeginRead: "BEGIN", BeginWrite: "BEGIN", RowLocks: true,
		IndexHint: "FORCE INDEX (%s)", DeleteLimit: true, AlterAddIndex: true, ZeroTakesNextID: true}
)

var (
	mu      sync.RWMutex
	drivers = map[string]Driver{}
)

// Register makes a driver available by its name. It panics on a duplicate,
// which is a programming error.
func Register(d Driver) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := drivers[d.Name()]; dup {
		panic("engine: duplicate registration of " + d.Name())
	}
	drivers[d.Name()] = d
}

// Lookup returns the driver registered under name.
func Lookup(name string) (Driver, bool) {
	mu.RLock()
	defer mu.RUnlock()
	d, ok := drivers[name]
	return d, ok
}

// Names lists the registered engines in order.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	names := make([]string, 0, len(drivers))
	for n := range drivers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// CheckSettings validates settings against the driver's documented ones. The
// error names the first unknown or invalid setting and what is allowed. A
// driver whose Settings returns nil accepts any setting (servers have hundreds
// and check them when they start).
func CheckSettings(d Driver, settings map[string]string) error {
	if d.Settings() == nil {
		return nil
	}
	known := map[string]Setting{}
	for _, s := range d.Settings() {
		known[s.Name] = s
	}
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		s, ok := known[k]
		if !ok {
			names := make([]string, 0, len(known))
			for n := range known {
				names = append(names, n)
			}
			sort.Strings(names)
			return fmt.Errorf("unknown %s setting %q; known: %s", d.Name(), k, strings.Join(names, ", "))
		}
		if s.Check != nil {
			if err := s.Check(settings[k]); err != nil {
				return fmt.Errorf("%s setting %s = %q: %w", d.Name(), k, settings[k], err)
			}
		}
	}
	return nil
}

// AtLeast returns a Check that accepts integers >= lo.
func AtLeast(lo int64) func(string) error {
	return func(v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < lo {
			return fmt.Errorf("want an integer >= %d", lo)
		}
		return nil
	}
}

// WithSetting returns settings with s in place of the setting of the same
// name (appended when there is none); settings is not changed.
func WithSetting(settings []Setting, s Setting) []Setting {
	out := append([]Setting(nil), settings...)
	for i := range out {
		if out[i].Name == s.Name {
			out[i] = s
			return out
		}
	}
	return append(out, s)
}

// OneOf returns a Check that accepts only the given values (case-insensitive).
func OneOf(values ...string) func(string) error {
	return func(v string) error {
		for _, a := range values {
			if strings.EqualFold(a, v) {
				return nil
			}
		}
		return fmt.Errorf("want one of %s", strings.Join(values, ", "))
	}
}
