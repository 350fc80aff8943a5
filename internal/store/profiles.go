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
	var blob []byte
	if len(p.Folded) > 0 {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		if _, err := zw.Write(p.Folded); err != nil {
			return fmt.Errorf("store profile of %s: compress: %w", r.Test, err)
		}
		if err := zw.Close(); err != nil {
			return fmt.Errorf("store profile of %s: compress: %w", r.Test, err)
		}
		blob = b.Bytes()
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM profiles WHERE result_id = ?`, r.ID); err != nil {
		return fmt.Errorf("store profile of %s: %w", r.Test, err)
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO profiles (result_id, hz, samples, note, folded_gz) VALUES (?,?,?,?,?)`,
		r.ID, p.Hz, p.Samples, p.Note, blob)
	if err != nil {
		return fmt.Errorf("store profile of %s: %w", r.Test, err)
	}
	return nil
}

// loadProfile reads r's profile, if it has one.
func (s *Store) loadProfile(ctx context.Context, r *Result) error {
	var p Profile
	var blob []byte
	err := s.q().QueryRowContext(ctx, `SELECT hz, samples, note, folded_gz FROM profiles WHERE result_id = ?`, r.ID).
		Scan(&p.Hz, &p.Samples, &p.Note, &blob)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read profile of result %d: %w", r.ID, err)
	}
	if len(blob) > 0 {
		zr, err := gzip.NewReader(bytes.NewReader(blob))
		if err != nil {
			return fmt.Errorf("read profile of result %d: %w", r.ID, err)
		}
		if p.Folded, err = io.ReadAll(zr); err != nil {
			return fmt.Errorf("read profile of result %d: %w", r.ID, err)
		}
	}
	r.Profile = &p
	return nil
}
