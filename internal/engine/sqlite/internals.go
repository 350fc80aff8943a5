package sqlite

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"benchlab/internal/engine"
)

// SQLite keeps no statistics views; what its WAL does is in two files whose
// layout SQLite documents (its "WAL-mode file format" page): the WAL
// itself, whose 32-byte header holds a checkpoint sequence number that
// grows by one each time a writer restarts the log after a checkpoint
// copied all of it back into the database, and the WAL index (the -shm
// file), whose header holds the last valid frame (mxFrame, at byte 16) and
// whose checkpoint info holds the frames already copied back (nBackfill, at
// byte 96), both in the machine's byte order. Reading them takes no lock
// and touches no connection: a read may see a header being rewritten, off
// by one commit.

// ReadStats reads SQLite's one counter (engine.StatsReader):
// "sqlite.wal_restarts", the WAL's checkpoint sequence number, whose
// growth counts the checkpoints after which the log started over. Nothing
// when the database is not in WAL mode (no WAL file).
func (db *DB) ReadStats(ctx context.Context) (map[string]float64, error) {
	out := map[string]float64{}
	hdr, err := readAt(db.path+"-wal", 0, 32)
	if err != nil || hdr == nil {
		return out, err
	}
	out["sqlite.wal_restarts"] = float64(binary.BigEndian.Uint32(hdr[12:16]))
	return out, nil
}

// ReadInternals reads ReadStats' counter and the WAL's gauges
// (engine.InternalsReader): "sqlite.wal_bytes", the WAL file's size (it
// grows to its high-water mark and stays there unless truncated),
// "sqlite.wal_frames", the frames in the log now, and
// "sqlite.wal_unbackfilled", those of them no checkpoint has copied into
// the database yet (what a crash would replay).
func (db *DB) ReadInternals(ctx context.Context) (engine.Internals, error) {
	counters, err := db.ReadStats(ctx)
	if err != nil {
		return engine.Internals{}, err
	}
	gauges := map[string]float64{}
	if fi, err := os.Stat(db.path + "-wal"); err == nil {
		gauges["sqlite.wal_bytes"] = float64(fi.Size())
	} else if !errors.Is(err, fs.ErrNotExist) {
		return engine.Internals{}, fmt.Errorf("sqlite: WAL: %w", err)
	}
	idx, err := readAt(db.path+"-shm", 0, 100)
	if err != nil {
		return engine.Internals{}, err
	}
	if len(idx) == 100 {
		frames := binary.NativeEndian.Uint32(idx[16:20])
		backfilled := binary.NativeEndian.Uint32(idx[96:100])
		gauges["sqlite.wal_frames"] = float64(frames)
		if backfilled <= frames {
			gauges["sqlite.wal_unbackfilled"] = float64(frames - backfilled)
		}
	}
	return engine.Internals{Counters: counters, Gauges: gauges}, nil
}

// readAt reads n bytes at off of file, nil when the file does not exist or
// is shorter.
func readAt(file string, off int64, n int) ([]byte, error) {
	f, err := os.Open(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	defer f.Close()
	b := make([]byte, n)
	if _, err := f.ReadAt(b, off); err != nil {
		return nil, nil
	}
	return b, nil
}
