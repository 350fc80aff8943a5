package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// RoleInfo describes which role of a step a result belongs to.
type RoleInfo struct {
	// Name is the role ("query", "insert", ...); empty for single-role steps.
	Name string
	// Secondary marks a role other than the step's headline; summaries of
	// throughput use only headline results.
	Secondary bool
	// TargetRate is the role's rate limit in operations per second (0: none).
	TargetRate float64
	// Service is the plain service time of rate-limited operations, from
	// their actual start; Result.Latency counts from the intended start.
	Service Latency
}

func saveRole(ctx context.Context, tx bound, r *Result) error {
	s := r.Role.Service
	facts := ""
	if len(r.Facts) > 0 {
		b, err := json.Marshal(r.Facts)
		if err != nil {
			return fmt.Errorf("store facts of %s: %w", r.Test, err)
		}
		facts = string(b)
	}
	_, err := tx.ExecContext(ctx, `UPDATE results SET role=?, primary_role=?, target_rate=?,
		svc_p50_ns=?, svc_p95_ns=?, svc_p99_ns=?, svc_max_ns=?, svc_mean_ns=?, facts=? WHERE id=?`,
		r.Role.Name, !r.Role.Secondary, r.Role.TargetRate, int64(s.P50), int64(s.P95), int64(s.P99), int64(s.Max),
		int64(s.Mean), facts, r.ID)
	if err != nil {
		return fmt.Errorf("store role of %s: %w", r.Test, err)
	}
	return nil
}

// roleColumns are the results columns of RoleInfo, in the order
// roleRow.dest scans them.
const roleColumns = `role, primary_role, target_rate, svc_p50_ns, svc_p95_ns, svc_p99_ns, svc_max_ns, svc_mean_ns`

// roleRow holds a results row's roleColumns as scanned, until apply.
type roleRow struct {
	primary                 bool
	p50, p95, p99, mx, mean int64
}

// dest returns where to scan roleColumns into, for result r.
func (w *roleRow) dest(r *Result) []any {
	return []any{&r.Role.Name, &w.primary, &r.Role.TargetRate, &w.p50, &w.p95, &w.p99, &w.mx, &w.mean}
}

// apply sets r's role from the scanned columns.
func (w *roleRow) apply(r *Result) {
	r.Role.Secondary = !w.primary
	r.Role.Service = Latency{Mean: time.Duration(w.mean), P50: time.Duration(w.p50), P95: time.Duration(w.p95),
		P99: time.Duration(w.p99), Max: time.Duration(w.mx)}
}
