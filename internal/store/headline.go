package store

import (
	"context"
	"database/sql"
	"fmt"

	"benchlab/internal/analysis"
)

// saveHeadline stores r's headline, unit and direction; a result without a
// unit (no producer stamped it) keeps a NULL headline, as older rows have.
func saveHeadline(ctx context.Context, tx bound, r *Result) error {
	var v sql.NullFloat64
	if r.Unit != "" {
		v = sql.NullFloat64{Float64: r.Headline, Valid: true}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE results SET headline=?, unit=?, direction=? WHERE id=?`,
		v, r.Unit, int64(r.Direction), r.ID); err != nil {
		return fmt.Errorf("store headline of %s: %w", r.Test, err)
	}
	return nil
}

// headlineColumns are the results columns of a result's headline, in the
// order headlineRow.dest scans them.
const headlineColumns = `headline, unit, direction`

// headlineRow holds a results row's headlineColumns as scanned, until apply.
type headlineRow struct {
	value sql.NullFloat64
	dir   int64
}

// dest returns where to scan headlineColumns into, for result r.
func (h *headlineRow) dest(r *Result) []any { return []any{&h.value, &r.Unit, &h.dir} }

// apply sets r's headline from the scanned columns. A row stored before
// headlines were kept (NULL) reads with no unit.
func (h *headlineRow) apply(r *Result) {
	if !h.value.Valid {
		r.Unit = ""
		return
	}
	r.Headline, r.Direction = h.value.Float64, analysis.Direction(h.dir)
}
