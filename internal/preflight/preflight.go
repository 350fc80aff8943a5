// Package preflight checks, before a run starts or stores anything, what
// would otherwise fail late: the results database and the work dir can be
// written, the ports servers are told to use are free, servers named by a
// DSN answer, server installs run, the disk and the memory hold what the
// suite will write and cache. Its errors (*Error) name the field or flag
// to change; the cli reports them as usage errors (exit 2).
package preflight

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"benchlab/internal/dsn"
	"benchlab/internal/engine"
	"benchlab/internal/server"
	"benchlab/internal/spec"
	"benchlab/internal/store"
	"benchlab/internal/workload"
)

// Options are the run's flags the checks before it depend on.
type Options struct {
	// KeepData keeps every run's data dir, so the disk must hold them all.
	KeepData bool
	// SkipSpace skips the free-space and memory checks (--skip-space-check).
	SkipSpace bool
}

// Error is a check that failed: what is wrong and what to change.
type Error struct{ msg string }

func (e *Error) Error() string { return e.msg }

func errorf(format string, args ...any) error { return &Error{fmt.Sprintf(format, args...)} }

// Check checks, before anything runs or is stored, what would otherwise
// fail late: the results database can be written, the work dir too, every
// port a managed server is told to listen on is free, every running server
// named by a DSN answers on its port, every server install benchlab starts
// has programs that run, the data dirs' filesystem has room for the data
// the suite will write, and an embedded engine's per-connection caches fit
// in the available memory.
func Check(s spec.Spec, storeFile string, o Options) error {
	if err := checkStoreWritable(storeFile); err != nil {
		return err
	}
	if s.WorkDir != "" {
		if err := checkDirWritable(s.WorkDir); err != nil {
			return err
		}
	}
	if err := checkInstalls(s); err != nil {
		return err
	}
	if err := checkPorts(s); err != nil {
		return err
	}
	if err := checkDSNs(s); err != nil {
		return err
	}
	if o.SkipSpace {
		return nil
	}
	if err := checkSpace(s, o.KeepData); err != nil {
		return err
	}
	return checkCacheMemory(s, MemAvailable())
}

// checkCacheMemory refuses a run whose embedded engine's per-connection
// caches could outgrow the machine's available memory (available bytes;
// 0 when unknown): each thread's connection may cache up to the smaller of
// its cache setting and the data (SQLite: cache_size, 64 MiB by default),
// all inside benchlab's process, where an overrun ends in swapping or the
// OOM killer rather than in a measurement.
func checkCacheMemory(s spec.Spec, available int64) error {
	if available <= 0 {
		return nil
	}
	conns, data := cacheConns(s)
	for _, t := range s.Targets {
		d, ok := engine.Lookup(t.Engine)
		c, cacher := d.(engine.ConnectionCacher)
		if !ok || !cacher || t.DSN != "" {
			continue
		}
		each := c.ConnectionCache(t.TargetSettings())
		if data >= 0 {
			each = min(each, data)
		}
		if need := conns * each; need > available {
			return errorf("memory: target %s (%s) may cache about %s in benchlab's process (%d connections x %s each: its "+
				"per-connection cache setting, at most the data's estimated size) and %s is available; lower its cache "+
				"(SQLite: cache_size in [target.settings], e.g. -2000 for 2 MB) or the threads, or run anyway with --skip-space-check",
				t.Name, t.Engine, BytesIEC(need), conns, BytesIEC(each), BytesIEC(available))
		}
	}
	return nil
}

// cacheConns are the connections an embedded target opens (its threads and
// an administrative one) and the data's estimated size (-1 when unknown),
// which bound its per-connection caches.
func cacheConns(s spec.Spec) (conns, data int64) {
	p := s.Params()
	conns = 1 + int64(slices.Max(append([]int{0}, p.Threads...)))
	data = -1
	if suite, ok := workload.Lookup(s.Workload.Suite); ok {
		if size, ok := workload.SizeOf(suite, p); ok && size.Bytes > 0 {
			data = size.Bytes
		}
	}
	return conns, data
}

// MemAvailable is /proc/meminfo's MemAvailable in bytes, 0 when unknown.
func MemAvailable() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				n, err := strconv.ParseInt(f[0], 10, 64)
				if err == nil {
					return n * 1024
				}
			}
		}
	}
	return 0
}

// checkInstalls checks that the install of every server benchlab starts
// is usable: its programs are there, run (`--version`) and are reachable by
// the user the server runs as (server.CheckInstall).
func checkInstalls(s spec.Spec) error {
	for i, t := range s.Targets {
		if err := server.CheckInstall(t.EngineTarget(s.Getenv)); err != nil {
			return errorf("target[%d].%v", i, err)
		}
	}
	return nil
}

// checkPorts checks that the port a managed server target names
// (settings.port) is free on the address servers listen on.
func checkPorts(s spec.Spec) error {
	for i, t := range s.Targets {
		if t.DSN != "" {
			continue
		}
		for k, v := range t.Settings {
			if !strings.EqualFold(k, "port") {
				continue
			}
			port := fmt.Sprint(v)
			l, err := net.Listen("tcp", net.JoinHostPort(server.Host, port))
			if err != nil {
				return errorf("target[%d].settings.%s: port %s on %s is in use (%v); stop what listens there, pick another port, "+
					"or remove the setting and benchlab picks a free one", i, k, port, server.Host, dsn.Innermost(err))
			}
			l.Close()
		}
	}
	return nil
}

// checkDSNs checks that every running server named by a DSN answers on its
// port, and that it can do what the target asks of it where its engine
// checks that (engine.DSNChecker).
func checkDSNs(s spec.Spec) error {
	if err := checkDSNPorts(s); err != nil {
		return err
	}
	for i, t := range s.Targets {
		d, ok := engine.Lookup(t.Engine)
		c, checks := d.(engine.DSNChecker)
		if t.DSN == "" || !ok || !checks {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := c.CheckDSN(ctx, t.EngineTarget(s.Getenv))
		cancel()
		if err != nil {
			return errorf("target[%d].%v", i, err)
		}
	}
	return nil
}

// checkDSNPorts checks that every running server named by a DSN answers
// on its port.
func checkDSNPorts(s spec.Spec) error {
	for i, t := range s.Targets {
		if t.DSN == "" {
			continue
		}
		d, err := dsn.Parse(t.DSN)
		if err != nil {
			return errorf("target[%d].dsn: %v", i, err)
		}
		if d.Host == "" {
			continue // a unix socket
		}
		port := d.Port
		if port == "" {
			port = map[string]string{"postgres": "5432", "mysql": "3306"}[d.Family]
		}
		addr := net.JoinHostPort(d.Host, port)
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			return errorf("target[%d].dsn: no server answers at %s (%v); start it or fix the host and port", i, addr, dsn.Innermost(err))
		}
		c.Close()
	}
	return nil
}

// checkSpace compares the suite's estimate of the data one run writes
// (workload.Sizer) with the free space of the filesystem the data dirs go on
// (the work dir, or the temp dir): runs follow one another and each removes
// its data dir, unless --keep-data keeps them all. Targets reached by a DSN
// keep their data on their own server and are left out.
func checkSpace(s spec.Spec, keepData bool) error {
	suite, ok := workload.Lookup(s.Workload.Suite)
	if !ok {
		return nil
	}
	size, ok := workload.SizeOf(suite, s.Params())
	if !ok || size.Bytes <= 0 {
		return nil
	}
	var names []string
	for _, t := range s.Targets {
		if t.DSN == "" {
			names = append(names, t.Name)
		}
	}
	local := len(names)
	if local == 0 {
		return nil
	}
	need, what := size.Bytes, "one run's data"
	if keepData {
		need *= int64(local * s.Workload.Repeats)
		what = fmt.Sprintf("%d runs' data (--keep-data)", local*s.Workload.Repeats)
	}
	dir, flag := s.WorkDir, "--workdir"
	if dir == "" {
		dir, flag = os.TempDir(), "--workdir (default: the temp dir)"
	}
	at := existingParent(dir)
	var fs unix.Statfs_t
	if err := unix.Statfs(at, &fs); err != nil {
		return nil // unknown: the run finds out
	}
	free := int64(fs.Bavail) * int64(fs.Bsize)
	if need <= free {
		return nil
	}
	return errorf("disk space: %s needs about %s for target(s) %s (%s suite: %s) and %s has %s free; "+
		"make the data smaller, put it on a larger filesystem with %s, or run anyway with --skip-space-check",
		what, BytesIEC(need), strings.Join(names, ", "), s.Workload.Suite, size.Basis, at, BytesIEC(free), flag)
}

// existingParent is dir, or its nearest parent that exists.
func existingParent(dir string) string {
	for {
		if _, err := os.Stat(dir); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return dir
		}
		dir = parent
	}
}

// BytesIEC formats a byte count with a binary unit: 512 B, 1.5 MiB, 12.0 GiB.
func BytesIEC(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, u := float64(n), 0
	for v >= unit && u < 6 {
		v /= unit
		u++
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGTPE"[u-1])
}

// checkStoreWritable checks that a SQLite results file can be opened for
// writing, or created in its directory; a PostgreSQL store is checked when
// it is opened.
func checkStoreWritable(path string) error {
	if store.IsPostgres(path) {
		return nil
	}
	if fi, err := os.Stat(path); err == nil {
		if fi.IsDir() {
			return errorf("results database %s is a directory; want a file (--store)", path)
		}
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			return errorf("results database %s cannot be written: %v (--store)", path, errors.Unwrap(err))
		}
		f.Close()
		return nil
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case err != nil:
		return errorf("results database %s: directory %s does not exist (--store)", path, dir)
	case !fi.IsDir():
		return errorf("results database %s: %s is not a directory (--store)", path, dir)
	}
	f, err := os.CreateTemp(dir, ".benchlab-writable-*")
	if err != nil {
		return errorf("results database %s: directory %s is not writable (--store): %v", path, dir, errors.Unwrap(err))
	}
	name := f.Name()
	f.Close()
	os.Remove(name)
	return nil
}

// checkDirWritable checks that the work dir, or the nearest existing parent
// it would be created in, is a writable directory.
func checkDirWritable(dir string) error {
	d := dir
	for {
		fi, err := os.Stat(d)
		if err == nil {
			if !fi.IsDir() {
				return errorf("work dir %s: %s is not a directory (--workdir)", dir, d)
			}
			break
		}
		parent := filepath.Dir(d)
		if parent == d {
			return errorf("work dir %s: no existing parent directory (--workdir)", dir)
		}
		d = parent
	}
	f, err := os.CreateTemp(d, ".benchlab-writable-*")
	if err != nil {
		return errorf("work dir %s: %s is not writable (--workdir): %v", dir, d, errors.Unwrap(err))
	}
	name := f.Name()
	f.Close()
	os.Remove(name)
	return nil
}

// CacheNeed is the memory an embedded target's per-connection caches may
// take in benchlab's process (checkCacheMemory's estimate), 0 for an engine
// that does not say.
func CacheNeed(s spec.Spec, t spec.Target) int64 {
	d, ok := engine.Lookup(t.Engine)
	c, cacher := d.(engine.ConnectionCacher)
	if !ok || !cacher || t.DSN != "" {
		return 0
	}
	conns, data := cacheConns(s)
	each := c.ConnectionCache(t.TargetSettings())
	if data >= 0 {
		each = min(each, data)
	}
	return conns * each
}
