package store

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// The journal keeps what a run measured when its store fails midway (a
// full disk, a shared PostgreSQL server gone): each result and run end the
// store refuses is appended, as a line of JSON, to a file next to a
// SQLite store (<store>.pending.jsonl) or, when that cannot be written
// either or the store is PostgreSQL, under the user's state directory
// ($XDG_STATE_HOME or ~/.local/state, benchlab/pending/). The next Open of
// the store stores them and removes the file.

// pendingEntry is one line of the journal: a result or a run's end.
type pendingEntry struct {
	// Key is random: a replay stores an entry once (table
	// pending_applied), even when a crash kept the file after its entries
	// were stored.
	Key   string    `json:"key"`
	Store string    `json:"store"`
	At    time.Time `json:"at"`
	// Error is why the store refused the entry.
	Error  string  `json:"error"`
	Result *Result `json:"result,omitempty"`
	Run    *Run    `json:"run,omitempty"`
}

// PendingError is the error of a write the store refused and the journal
// kept: Err is the store's error, Path the journal.
type PendingError struct {
	Err   error
	Path  string
	Store string
}

// Error says what failed and where the journal keeps it.
func (e *PendingError) Error() string {
	return fmt.Sprintf("%v; kept in %s, which the next benchlab command that opens %s stores", e.Err, e.Path, e.Store)
}

// Unwrap is the store's error.
func (e *PendingError) Unwrap() error { return e.Err }

// Replayed is a journal that Open stored into the store, and removed.
type Replayed struct {
	Path    string
	Entries int
}

// Journal makes SaveResult and FinishRun keep in the journal what the
// store refuses, so that a run whose store fails keeps what it measured,
// and bounds each of a run's writes by timeout (0: none), so that a store
// that hangs (a server stopped, a network gone) fails as one that refuses.
func (s *Store) Journal(timeout time.Duration) { s.journal, s.timeout = true, timeout }

// WriteTimeout is the bound on a run's writes that run gives Journal:
// far above any write's time (a SQLite write waits 10 s for a lock).
const WriteTimeout = time.Minute

// bounded is ctx bounded by the store's write timeout.
func (s *Store) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.timeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, s.timeout)
}

// Replayed lists the journals Open stored.
func (s *Store) Replayed() []Replayed { return s.replayed }

// journalPaths are where the store's journal may be, in the order they
// are tried.
func (s *Store) journalPaths() []string {
	var out []string
	if !s.pg {
		out = append(out, s.path+".pending.jsonl")
	}
	if dir := stateDir(); dir != "" {
		sum := sha256.Sum256([]byte(s.id))
		out = append(out, filepath.Join(dir, "benchlab", "pending", hex.EncodeToString(sum[:8])+".jsonl"))
	}
	return out
}

// stateDir is the user's state directory (XDG), or "" when unknown.
func stateDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return d
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "state")
	}
	return ""
}

// keep appends e to the first journal that takes it and returns the
// store's error err as a PendingError naming it, or err with why it could
// not be kept.
func (s *Store) keep(err error, e pendingEntry) error {
	var key [16]byte
	rand.Read(key[:])
	e.Key, e.Store, e.At, e.Error = hex.EncodeToString(key[:]), s.id, time.Now().UTC(), err.Error()
	line, jerr := json.Marshal(e)
	if jerr != nil {
		return fmt.Errorf("%w; it could not be kept in a journal either: %v", err, jerr)
	}
	line = append(line, '\n')
	paths := s.journalPaths()
	if len(paths) == 0 {
		return fmt.Errorf("%w; it could not be kept in a journal either: no place for one (set XDG_STATE_HOME or HOME)", err)
	}
	var errs []error
	for _, p := range paths {
		werr := appendLine(p, line)
		if werr == nil {
			return &PendingError{Err: err, Path: p, Store: s.path}
		}
		errs = append(errs, werr)
	}
	return fmt.Errorf("%w; it could not be kept in a journal either: %v", err, errors.Join(errs...))
}

// openLocked opens path with flags and takes its exclusive lock; a file
// removed while this waited for the lock (a replay stored it) is nil.
func openLocked(path string, flags int) (*os.File, error) {
	f, err := os.OpenFile(path, flags, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink == 0 {
		f.Close()
		return nil, nil
	}
	return f, nil
}

// appendLine appends line to the journal at path, under its lock, and
// syncs it; a line that does not fit is taken back whole.
func appendLine(path string, line []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	for {
		f, err := openLocked(path, os.O_RDWR|os.O_APPEND|os.O_CREATE)
		if err != nil {
			return err
		}
		if f == nil {
			continue
		}
		defer f.Close()
		size, err := f.Seek(0, io.SeekEnd)
		if err != nil {
			return err
		}
		if _, err = f.Write(line); err == nil {
			err = f.Sync()
		}
		if err != nil {
			f.Truncate(size)
			if size == 0 {
				os.Remove(path)
			}
			return err
		}
		return nil
	}
}

// replay stores the entries of every journal of the store, each once,
// and removes the journals; a journal that cannot be stored stays, and
// its error says how to open the store without it.
func (s *Store) replay(ctx context.Context) error {
	for _, p := range s.journalPaths() {
		n, err := s.replayFile(ctx, p)
		if err != nil {
			return fmt.Errorf("results kept in %s when the store failed could not be stored: %w (move the file away to open the store without them)", p, err)
		}
		if n > 0 {
			s.replayed = append(s.replayed, Replayed{Path: p, Entries: n})
		}
	}
	return nil
}

// replayFile stores the journal at path and removes it, under its lock,
// and returns how many entries it held.
func (s *Store) replayFile(ctx context.Context, path string) (int, error) {
	f, err := openLocked(path, os.O_RDWR)
	if errors.Is(err, os.ErrNotExist) || (err == nil && f == nil) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return 0, err
	}
	lines := bytes.Split(data, []byte("\n"))
	var entries []pendingEntry
	for i, l := range lines {
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		var e pendingEntry
		if err := json.Unmarshal(l, &e); err != nil {
			if i == len(lines)-1 {
				break // the last line, cut by a crash while it was written
			}
			return 0, fmt.Errorf("line %d: %w", i+1, err)
		}
		if e.Store != s.id {
			return 0, fmt.Errorf("line %d: kept for another store (%s)", i+1, e.Store)
		}
		entries = append(entries, e)
	}
	for _, e := range entries {
		if err := s.applyPending(ctx, e); err != nil {
			return 0, err
		}
	}
	if err := os.Remove(path); err != nil {
		return 0, err
	}
	return len(entries), nil
}

// applyPending stores one entry unless a replay has, in one transaction.
func (s *Store) applyPending(ctx context.Context, e pendingEntry) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	b := s.tx(tx)
	var n int
	if err := b.QueryRowContext(ctx, `SELECT count(*) FROM pending_applied WHERE key = ?`, e.Key).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	switch {
	case e.Result != nil:
		err = writeResult(ctx, b, e.Result)
	case e.Run != nil:
		// A run whose attempt lost its job's lease is stored superseded.
		err = finishRun(ctx, b, e.Run)
	}
	if err != nil && !errors.Is(err, ErrSuperseded) {
		return err
	}
	if _, err := b.ExecContext(ctx, `INSERT INTO pending_applied (key, at) VALUES (?, ?)`, e.Key, fmtTime(time.Now())); err != nil {
		return err
	}
	return tx.Commit()
}
