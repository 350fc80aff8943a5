package cli

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"time"

	"benchlab/internal/dsn"
	"benchlab/internal/spec"
	"benchlab/internal/store"
)

// preflight checks, before anything runs or is stored, what would otherwise
// fail late: the results database can be written, and every running server
// named by a DSN answers on its port. Its errors are usage errors (exit 2).
func preflight(s spec.Spec, storeFile string) error {
	if err := checkStoreWritable(storeFile); err != nil {
		return err
	}
	if s.WorkDir != "" {
		if err := checkDirWritable(s.WorkDir); err != nil {
			return err
		}
	}
	for i, t := range s.Targets {
		if t.DSN == "" {
			continue
		}
		d, err := dsn.Parse(t.DSN)
		if err != nil {
			return usagef("target[%d].dsn: %v", i, err)
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
			return usagef("target[%d].dsn: no server answers at %s (%v); start it or fix the host and port", i, addr, dsn.Innermost(err))
		}
		c.Close()
	}
	return nil
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
			return usagef("results database %s is a directory; want a file (--store)", path)
		}
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			return usagef("results database %s cannot be written: %v (--store)", path, errors.Unwrap(err))
		}
		f.Close()
		return nil
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case err != nil:
		return usagef("results database %s: directory %s does not exist (--store)", path, dir)
	case !fi.IsDir():
		return usagef("results database %s: %s is not a directory (--store)", path, dir)
	}
	f, err := os.CreateTemp(dir, ".benchlab-writable-*")
	if err != nil {
		return usagef("results database %s: directory %s is not writable (--store): %v", path, dir, errors.Unwrap(err))
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
				return usagef("work dir %s: %s is not a directory (--workdir)", dir, d)
			}
			break
		}
		parent := filepath.Dir(d)
		if parent == d {
			return usagef("work dir %s: no existing parent directory (--workdir)", dir)
		}
		d = parent
	}
	f, err := os.CreateTemp(d, ".benchlab-writable-*")
	if err != nil {
		return usagef("work dir %s: %s is not writable (--workdir): %v", dir, d, errors.Unwrap(err))
	}
	name := f.Name()
	f.Close()
	os.Remove(name)
	return nil
}
