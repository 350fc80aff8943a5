// Package server starts and stops a database server of a given install dir on
// a fresh data dir. What every family shares is here, once: the data dir,
// the port (picked free, or the target's), the unprivileged user a family
// may need under root, the process group (nothing the server forks outlives
// it), readiness with backoff, the log (kept after the data dir is gone, so
// a failed start can still be read), the clean stop and the cleanup after a failure or an
// interrupt. What differs per family (programs, initialisation,
// configuration, command line, stop signal, releases) is a Flavor,
// implemented in the engine's package: PostgreSQL in internal/engine/postgres,
// the MySQL/MariaDB family in internal/engine/mysql. A server listens on
// 127.0.0.1 only, on a free port and a private unix socket.
//
// The package knows nothing of SQL clients: engines pass a probe that tells
// whether the server accepts queries, and Launch polls it with backoff.
package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"benchlab/internal/childproc"
)

// Host is the only address a managed server listens on.
const Host = "127.0.0.1"

// Defaults for Config's timeouts.
const (
	DefaultReadyTimeout = 60 * time.Second
	DefaultStopTimeout  = 60 * time.Second
)

// Config says which server to start and how.
type Config struct {
	// Flavor is the server family's part of the lifecycle.
	Flavor Flavor
	// Env is the environment benchlab runs in (for the log dir).
	Env Env
	// Engine ("postgres", "mysql", "mariadb") and Target name the server in
	// errors and log file names.
	Engine, Target string
	// Basedir is the install dir (holding bin/, sbin/ or libexec/); empty
	// means the flavor's default install (Debian's package).
	Basedir string
	// ConfigFile lines are written after benchlab's own and before Settings.
	ConfigFile string
	// Settings are server configuration variables, written last.
	Settings map[string]string
	// Dir is the directory the runner gave the engine; the data dir (Dir/data)
	// and the server log (Dir/server.log) go there.
	Dir string
	// Port is the TCP port; 0 picks a free one (and picks again if another
	// process takes it before the server binds it).
	Port int
	// CPUs pins the server to a CPU list ("0", "1-3") with taskset; empty: no pinning.
	CPUs string
	// MemoryLimit, in bytes, runs the server in a memory cgroup of its own
	// with that limit (its page cache included); 0: no limit.
	MemoryLimit int64
	// MemoryOf, when set, runs the server in that running instance's
	// memory cgroup instead, so one limit holds both process trees (a
	// front server and the database under it); MemoryLimit is then unused.
	MemoryOf *Instance
	// LogDir, when set, receives a copy of the server log when it stops; the
	// copy's path is Instance.KeptLog. Empty: Env.LogDir().
	LogDir string
	// ReadyTimeout bounds the wait for the server to accept queries;
	// StopTimeout the wait for a clean shutdown before SIGKILL.
	ReadyTimeout, StopTimeout time.Duration
	// Password is the server's superuser password; empty: a fresh one
	// (NewPassword) for this start. The nodes of a cluster share one, as
	// a state transfer copies the accounts of one node to the others.
	Password string
}

// Probe tells whether a started server accepts queries; it connects to addr
// (host:port) or socket and runs a trivial statement.
type Probe func(ctx context.Context, in *Instance) error

// Instance is one running server.
type Instance struct {
	cfg  Config
	bins Binaries
	// DataDir is the server's data dir; Socket its unix socket or socket
	// dir, as its flavor's Init sets it (the MySQL family's mysql.sock,
	// PostgreSQL's dir); Port its TCP port on Host.
	DataDir, Socket string
	Port            int
	// LogPath is the live log, in the run's dir; KeptLog the copy made by
	// Stop, decided at Start so that it can be recorded before the run.
	LogPath, KeptLog string
	// User is the OS user the server runs as ("" for the current one).
	User string

	password string   // the superuser's, only in memory and in secrets
	secrets  []string // 0600 files holding it, removed after Init
	cmd      *exec.Cmd
	memcg    *memCgroup
	// memShared is true when memcg is another instance's (Config.MemoryOf).
	memShared bool
	perfcg    *perfCgroup
	perfErr   error // why the server has no perfcg
	logFile   *os.File
	sockDir   string // a private socket dir outside the data dir, removed on Stop
	aliasDir  string // the private dir of SafeDir's symlink, removed on Stop
	safeDir   string // SafeDir's path, once made
	exited    chan struct{}
	exitErr   error
	stopOnce  sync.Once
	stopErr   error
	stopping  chan struct{}
}

// Launch starts a server and waits until probe succeeds. When the port was
// picked automatically and another process took it first, it starts again on
// another port (at most three times). Every error names the engine, target,
// version or basedir and address, and ends with the last lines of the log.
// The server stops when ctx is done or when Stop is called.
func Launch(ctx context.Context, cfg Config, probe Probe) (*Instance, error) {
	auto := cfg.Port == 0
	for attempt := 1; ; attempt++ {
		in, err := Start(ctx, cfg)
		if err != nil {
			return nil, err
		}
		err = in.Ready(ctx, probe)
		if err == nil {
			return in, nil
		}
		in.Stop()
		if auto && attempt < 3 && errors.Is(err, ErrPortInUse) {
			continue
		}
		return nil, err
	}
}

// Start initialises a fresh data dir under cfg.Dir (prepare, then the
// flavor's Init, which writes the configuration) and starts the server in
// its own process group. It does not wait for the
// server to accept queries; see Ready and Launch.
func Start(ctx context.Context, cfg Config) (*Instance, error) {
	if cfg.ReadyTimeout <= 0 {
		cfg.ReadyTimeout = DefaultReadyTimeout
	}
	if cfg.StopTimeout <= 0 {
		cfg.StopTimeout = DefaultStopTimeout
	}
	if cfg.Flavor == nil {
		return nil, fmt.Errorf("%s target %s: no server flavor (a programming error in the engine)", cfg.Engine, cfg.Target)
	}
	bins, err := FindBinaries(cfg.Flavor, cfg.Basedir)
	if err != nil {
		return nil, fmt.Errorf("%s target %s: basedir: %w", cfg.Engine, cfg.Target, err)
	}
	in := &Instance{cfg: cfg, bins: bins, exited: make(chan struct{}), stopping: make(chan struct{})}
	if err := in.prepare(); err != nil {
		in.cleanup()
		return nil, err
	}
	extra, err := readConfigFile(cfg.ConfigFile)
	if err != nil {
		in.cleanup()
		return nil, in.errorf("config: %w", err)
	}
	err = cfg.Flavor.Init(ctx, in, extra)
	in.removeSecrets()
	if err != nil {
		in.failed()
		return nil, err
	}
	if err := in.launch(ctx); err != nil {
		in.failed()
		return nil, err
	}
	return in, nil
}

// failed ends a start that did not get the server running: the log is
// kept where the error says it is, and the rest is cleaned up.
func (in *Instance) failed() {
	in.keepLog()
	in.cleanup()
}

// prepare does what every family needs before its Init: a fresh data dir
// under cfg.Dir, the log file, the port, and, under root for a family that
// runs as an unprivileged user, that user, owning the data dir and able to
// reach the programs.
func (in *Instance) prepare() error {
	cfg := in.cfg
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return in.errorf("data dir: %w", err)
	}
	in.DataDir = filepath.Join(cfg.Dir, "data")
	if err := os.RemoveAll(in.DataDir); err != nil {
		return in.errorf("clear data dir: %w", err)
	}
	in.LogPath = filepath.Join(cfg.Dir, "server.log")
	logDir := cfg.LogDir
	if logDir == "" {
		logDir = cfg.Env.LogDir()
	}
	in.KeptLog = filepath.Join(logDir, LogName(cfg.Engine, cfg.Target))
	var err error
	in.logFile, err = os.OpenFile(in.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND|os.O_TRUNC, 0o644)
	if err != nil {
		return in.errorf("server log: %w", err)
	}
	in.password = cfg.Password
	if in.password == "" {
		if in.password, err = NewPassword(); err != nil {
			return in.errorf("password: %w", err)
		}
	}
	in.Port = cfg.Port
	if in.Port == 0 {
		if in.Port, err = FreePort(); err != nil {
			return in.errorf("pick a port: %w", err)
		}
	} else if err := portFree(in.Port); err != nil {
		return in.errorf("%w", err)
	}
	if err := os.MkdirAll(in.DataDir, 0o700); err != nil {
		return in.errorf("data dir: %w", err)
	}
	if u := cfg.Flavor.RunAs(); u != "" && os.Geteuid() == 0 {
		// The server refuses to run as root (PostgreSQL); it runs as the
		// unprivileged user, which must own the data dir and reach it.
		in.User = u
		if err := ensureUser(u, cfg.Flavor.Name()); err != nil {
			return in.errorf("%w", err)
		}
		if err := in.giveTo(in.User, in.DataDir); err != nil {
			return err
		}
		// A basedir under /root (0700) gives only "permission denied" from exec.
		for _, p := range []string{in.bins.Init, in.bins.Server} {
			if p == "" {
				continue
			}
			if err := ReachableBy(in.User, p); err != nil {
				return in.errorf("%v: the server runs as %s under root; put the install where %s can reach it "+
					"(`benchlab install` under root uses /var/lib/benchlab/versions unless BENCHLAB_VERSIONS says otherwise)",
					err, in.User, in.User)
			}
		}
	}
	return nil
}

// ManagedSettings are what benchlab itself set up for the server, to go with the
// settings read from it: benchlab.server_log (the kept log) and, for a
// server under a memory limit, benchlab.memory_limit ("2GB (cgroup v2
// memory.max)").
func (in *Instance) ManagedSettings() map[string]string {
	out := map[string]string{"benchlab.server_log": in.KeptLog}
	if in.memcg != nil {
		out["benchlab.memory_limit"] = in.memcg.describe(in.memoryLimit())
	}
	return out
}

// Addr is the server's TCP address.
func (in *Instance) Addr() string { return net.JoinHostPort(Host, strconv.Itoa(in.Port)) }

// Binaries returns the programs this instance uses.
func (in *Instance) Binaries() Binaries { return in.bins }

// PIDs returns the server's root process; its descendants count too.
func (in *Instance) PIDs() []int {
	if in.cmd == nil || in.cmd.Process == nil {
		return nil
	}
	return []int{in.cmd.Process.Pid}
}

// Exited is closed when the server process has ended, for whatever reason.
func (in *Instance) Exited() <-chan struct{} { return in.exited }

// Died returns nil while the server runs (or after benchlab stopped it), and
// otherwise an error saying how it ended, with the end of its log.
func (in *Instance) Died() error {
	select {
	case <-in.exited:
	default:
		return nil
	}
	select {
	case <-in.stopping:
		return nil
	default:
	}
	return in.errorf("server process %d exited unexpectedly (%v)%s", in.PIDs()[0], in.exitErr, in.tail())
}

// Ready polls probe with backoff (50 ms doubling to 1 s) until it succeeds,
// the server exits, cfg.ReadyTimeout passes or ctx is done.
func (in *Instance) Ready(ctx context.Context, probe Probe) error {
	deadline := time.Now().Add(in.cfg.ReadyTimeout)
	wait := 50 * time.Millisecond
	var last error
	for {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		last = probe(pctx, in)
		cancel()
		if last == nil {
			return nil
		}
		select {
		case <-in.exited:
			return in.startFailure()
		default:
		}
		if ctx.Err() != nil {
			return in.errorf("waiting for the server: %w", ctx.Err())
		}
		if time.Now().After(deadline) {
			return in.errorf("not accepting queries after %s (last attempt: %v)%s", in.cfg.ReadyTimeout, last, in.tail())
		}
		select {
		case <-time.After(wait):
		case <-in.exited:
		case <-ctx.Done():
		}
		wait = min(2*wait, time.Second)
	}
}

// startFailure explains why the server exited while starting.
func (in *Instance) startFailure() error {
	tail := in.tail()
	if strings.Contains(strings.ToLower(tail), "already in use") {
		return in.errorf("%w: the server could not bind %s (%v)%s", ErrPortInUse, in.Addr(), in.exitErr, tail)
	}
	return in.errorf("the server exited while starting (%v); a setting it rejects is the usual cause%s", in.exitErr, tail)
}

// Run runs a setup program (initdb, install-db) as the server's user, in its
// dir and process group, with its output in the server log (where a
// MariaDB server it starts writes too); what names it in the error, which
// quotes the log's error lines and its tail: the program's own output. A
// failed start keeps the log (Start), so the path the error names exists.
func (in *Instance) Run(ctx context.Context, what string, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = in.logFile, in.logFile
	cmd.SysProcAttr = in.procAttr()
	cmd.Dir = in.cfg.Dir
	cmd.Env = in.processEnv()
	fmt.Fprintf(in.logFile, "benchlab: running %s %s\n", name, strings.Join(args, " "))
	if err := cmd.Run(); err != nil {
		return in.errorf("%s failed: %v%s", what, err, in.tail())
	}
	return nil
}

// launch starts the server process itself and a goroutine that notes its exit.
func (in *Instance) launch(ctx context.Context) error {
	name, args := in.cfg.Flavor.Command(in)
	if in.cfg.CPUs != "" {
		taskset, err := exec.LookPath("taskset")
		if err != nil {
			return in.errorf("cpus: taskset (util-linux) is needed to pin the server: %w", err)
		}
		args = append([]string{"-c", in.cfg.CPUs, name}, args...)
		name = taskset
	}
	if of := in.cfg.MemoryOf; of != nil && of.memcg != nil {
		in.memcg, in.memShared = of.memcg, true
	} else if in.cfg.MemoryLimit > 0 {
		cg, err := newMemCgroup(in.cfg.Target, in.cfg.MemoryLimit)
		if err != nil {
			return in.errorf("%w", err)
		}
		in.memcg = cg
	}
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = in.logFile, in.logFile
	cmd.Dir = in.cfg.Dir
	cmd.SysProcAttr = in.procAttr()
	cmd.Env = in.processEnv()
	in.perfcg, in.perfErr = nil, nil
	if os.Geteuid() == 0 {
		in.perfcg, in.perfErr = newPerfCgroup(in.cfg.Target, in.memcg)
	} else {
		in.perfErr = errors.New("profile cgroup: benchlab does not run as root, so the server has no cgroup of its own")
	}
	closeFD, err := enterCgroups(cmd, in.procAttr().Credential, in.memcg, in.perfcg)
	if err != nil {
		return in.errorf("%w", err)
	}
	defer closeFD()
	if in.memcg != nil {
		fmt.Fprintf(in.logFile, "benchlab: memory limited to %s\n", in.memcg.describe(in.memoryLimit()))
	}
	fmt.Fprintf(in.logFile, "benchlab: starting %s %s (listening on %s; environment %s)\n", name, strings.Join(args, " "),
		in.Addr(), strings.Join(cmd.Env, " "))
	if err := cmd.Start(); err != nil {
		return in.errorf("start %s: %w", name, err)
	}
	in.cmd = cmd
	go func() {
		in.exitErr = cmd.Wait()
		if in.exitErr == nil {
			in.exitErr = errors.New("exit status 0")
		}
		close(in.exited)
	}()
	go func() {
		select {
		case <-ctx.Done():
			in.Stop()
		case <-in.stopping:
		}
	}()
	return nil
}

// processEnv is the whole environment of the programs a managed server
// runs (its setup programs and the server): benchlab's PATH (a standard
// one when the injected environment has none), the server's
// dir as HOME, the C locale and UTC. Nothing else of the shell benchlab was
// started from reaches them: neither PG* or MYSQL_* variables, nor
// LD_PRELOAD, MALLOC_* or GLIBC_TUNABLES, nor the shell's locale and time
// zone (which initdb writes into the config) can change what a run
// measures without the manifest saying so.
func (in *Instance) processEnv() []string {
	path := in.cfg.Env.Get("PATH")
	if path == "" {
		path = "/usr/local/bin:/usr/bin:/bin"
	}
	return []string{"PATH=" + path, "HOME=" + in.cfg.Dir, "LANG=C", "LC_ALL=C", "TZ=UTC"}
}

// procAttr puts the process in a group of its own (so Stop can kill all of
// it and a terminal's Ctrl-C reaches benchlab, which stops it cleanly), kills
// it if benchlab dies, and runs it as in.User when set.
func (in *Instance) procAttr() *syscall.SysProcAttr {
	a := childproc.Attr()
	if in.User != "" {
		uid, gid, err := lookupUser(in.User)
		if err == nil {
			a.Credential = &syscall.Credential{Uid: uid, Gid: gid}
		}
	}
	return a
}

// readConfigFile returns the lines of a server config file ("" for none).
func readConfigFile(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("cannot read config file: %w", err)
	}
	return string(b), nil
}

// memoryLimit is the limit of the server's memory cgroup: its own, or
// that of the instance whose cgroup it shares.
func (in *Instance) memoryLimit() int64 {
	if in.memShared && in.cfg.MemoryOf != nil {
		return in.cfg.MemoryOf.cfg.MemoryLimit
	}
	return in.cfg.MemoryLimit
}
