package store

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
)

// Profiles are kept in a table of their own, one row per result that was
// profiled; the folded stacks are gzip-compressed (a PostgreSQL step's
// stacks run to hundreds of kilobytes of text, mostly repeated frames).

// saveProfile writes r.Profile for r's row, replacing any stored before.
func saveProfile(ctx context.Context, tx bound, r *Result) error {
	if r.Profile == nil {
		return nil
	}
	p := r.Profile
	blob, err := gzipped(p.Folded)
	if err != nil {
		return fmt.Errorf("store profile of %s: compress: %w", r.Test, err)
	}
	offBlob, err := gzipped(p.OffCPU)
	if err != nil {
		return fmt.Errorf("store profile of %s: compress: %w", r.Test, err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM profiles WHERE result_id = ?`, r.ID); err != nil {
		return fmt.Errorf("store profile of %s: %w", r.Test, err)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO profiles (result_id, hz, samples, note, folded_gz, offcpu_gz) VALUES (?,?,?,?,?,?)`,
		r.ID, p.Hz, p.Samples, p.Note, blob, offBlob)
	if err != nil {
		return fmt.Errorf("store profile of %s: %w", r.Test, err)
	}
	return nil
}

// loadProfile reads r's profile, if it has one.
func (s *Store) loadProfile(ctx context.Context, r *Result) error {
	var p Profile
	var blob, offBlob []byte
	err := s.q().QueryRowContext(ctx, `SELECT hz, samples, note, folded_gz, offcpu_gz FROM profiles WHERE result_id = ?`, r.ID).
		Scan(&p.Hz, &p.Samples, &p.Note, &blob, &offBlob)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read profile of result %d: %w", r.ID, err)
	}
	if p.Folded, err = gunzipped(blob); err != nil {
		return fmt.Errorf("read profile of result %d: %w", r.ID, err)
	}
	if p.OffCPU, err = gunzipped(offBlob); err != nil {
		return fmt.Errorf("read off-CPU profile of result %d: %w", r.ID, err)
	}
	r.Profile = &p
	return nil
}

// gzipped compresses b; nil stays nil.
func gzipped(b []byte) ([]byte, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	if _, err := zw.Write(b); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// gunzipped expands what gzipped made; nil stays nil.
func gunzipped(b []byte) ([]byte, error) {
	if len(b) == 0 {
		return nil, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}
