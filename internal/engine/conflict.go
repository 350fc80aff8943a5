package engine

import "sync"

// Conflict is why a transaction failed because of a concurrent one, so that
// running it again may succeed: pgbench's --max-tries retries serialization
// failures and deadlocks; lock wait timeouts are retried as sysbench retries
// MySQL's 1205.
type Conflict int

const (
	// NoConflict is any other error (or none): running again will not help.
	NoConflict Conflict = iota
	// Serialization is a serialization failure (SQLSTATE 40001; MariaDB's
	// 1020 "record has changed since last read"; SQLite's BUSY_SNAPSHOT).
	Serialization
	// Deadlock is a detected deadlock (SQLSTATE 40P01, MySQL 1213).
	Deadlock
	// LockTimeout is a lock wait that timed out (MySQL 1205, SQLite BUSY).
	LockTimeout
)

// String names the conflict.
func (c Conflict) String() string {
	switch c {
	case Serialization:
		return "serialization failure"
	case Deadlock:
		return "deadlock"
	case LockTimeout:
		return "lock wait timeout"
	}
	return "no conflict"
}

var (
	conflictMu  sync.RWMutex
	classifiers []func(error) Conflict
)

// RegisterConflicts adds an engine's classifier of its own errors (each
// driver knows its error codes); engines register in init.
func RegisterConflicts(f func(error) Conflict) {
	conflictMu.Lock()
	defer conflictMu.Unlock()
	classifiers = append(classifiers, f)
}

// ConflictOf classifies err with the registered engines' classifiers.
func ConflictOf(err error) Conflict {
	if err == nil {
		return NoConflict
	}
	conflictMu.RLock()
	defer conflictMu.RUnlock()
	for _, f := range classifiers {
		if c := f(err); c != NoConflict {
			return c
		}
	}
	return NoConflict
}
