package store

import (
	"context"
	"database/sql"
	"fmt"
)

// effColumns are the results columns of Efficiency and DBBytes, in the order
// effFields returns their values.
const effColumns = `eff_seconds, server_cpu_s, client_cpu_s,
	server_read_bytes, server_write_bytes, server_read_calls, server_write_calls,
	client_read_bytes, client_write_bytes, client_read_calls, client_write_calls,
	device, dev_reads, dev_writes, dev_read_bytes, dev_write_bytes,
	server_cs, client_cs, server_peak_rss_bytes, client_peak_rss_bytes,
	machine_cpu_s, machine_busy_s, machine_steal_s, db_bytes`

// effFloats, effInts, effDevInts and effMachine return pointers to e's
// fields in effColumns order; eff_seconds, device and db_bytes sit between
// or around them and are handled by the callers.
func effFloats(e *Efficiency) []*float64 {
	return []*float64{&e.ServerCPU, &e.ClientCPU}
}

func effInts(e *Efficiency) []*int64 {
	return []*int64{&e.ServerReadBytes, &e.ServerWriteBytes, &e.ServerReadCalls, &e.ServerWriteCalls,
		&e.ClientReadBytes, &e.ClientWriteBytes, &e.ClientReadCalls, &e.ClientWriteCalls}
}

func effDevInts(e *Efficiency) []*int64 {
	return []*int64{&e.DevReads, &e.DevWrites, &e.DevReadBytes, &e.DevWriteBytes,
		&e.ServerCS, &e.ClientCS, &e.ServerPeakRSS, &e.ClientPeakRSS}
}

func effMachine(e *Efficiency) []*float64 {
	return []*float64{&e.MachineCPU, &e.MachineBusy, &e.MachineSteal}
}

// nullF stores NotMeasured as NULL and everything else as is.
func nullF(v float64) any {
	if v == NotMeasured {
		return nil
	}
	return v
}

func nullI(v int64) any {
	if v == NotMeasured {
		return nil
	}
	return v
}

func fromNullF(v sql.NullFloat64) float64 {
	if !v.Valid {
		return NotMeasured
	}
	return v.Float64
}

func fromNullI(v sql.NullInt64) int64 {
	if !v.Valid {
		return NotMeasured
	}
	return v.Int64
}

// saveEfficiency writes r.Eff and r.DBBytes into r's row, which must exist.
func saveEfficiency(ctx context.Context, tx bound, r *Result) error {
	vals := make([]any, 0, 25)
	if e := r.Eff; e != nil {
		vals = append(vals, e.Seconds)
		for _, p := range effFloats(e) {
			vals = append(vals, nullF(*p))
		}
		for _, p := range effInts(e) {
			vals = append(vals, nullI(*p))
		}
		vals = append(vals, e.Device)
		for _, p := range effDevInts(e) {
			vals = append(vals, nullI(*p))
		}
		for _, p := range effMachine(e) {
			vals = append(vals, nullF(*p))
		}
	} else {
		for range 23 {
			vals = append(vals, nil)
		}
	}
	if r.DBBytes != 0 {
		vals = append(vals, r.DBBytes)
	} else {
		vals = append(vals, nil)
	}
	vals = append(vals, r.ID)
	_, err := tx.ExecContext(ctx, `UPDATE results SET (`+effColumns+`) = (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) WHERE id = ?`, vals...)
	if err != nil {
		return fmt.Errorf("store efficiency of %s: %w", r.Test, err)
	}
	return nil
}

// effRow holds a results row's effColumns as scanned, until apply.
type effRow struct {
	secs    sql.NullFloat64
	device  sql.NullString
	db      sql.NullInt64
	floats  [2]sql.NullFloat64
	ints    [8]sql.NullInt64
	devInts [8]sql.NullInt64
	machine [3]sql.NullFloat64
}

// dest returns where to scan effColumns into.
func (w *effRow) dest() []any {
	dest := []any{&w.secs}
	for i := range w.floats {
		dest = append(dest, &w.floats[i])
	}
	for i := range w.ints {
		dest = append(dest, &w.ints[i])
	}
	dest = append(dest, &w.device)
	for i := range w.devInts {
		dest = append(dest, &w.devInts[i])
	}
	for i := range w.machine {
		dest = append(dest, &w.machine[i])
	}
	return append(dest, &w.db)
}

// apply sets r.Eff and r.DBBytes from the scanned columns; r.Eff stays nil
// when the result has no efficiency (eff_seconds NULL).
func (w *effRow) apply(r *Result) {
	if w.db.Valid {
		r.DBBytes = w.db.Int64
	}
	if !w.secs.Valid {
		return
	}
	e := &Efficiency{Seconds: w.secs.Float64, Device: w.device.String}
	for i, p := range effFloats(e) {
		*p = fromNullF(w.floats[i])
	}
	for i, p := range effInts(e) {
		*p = fromNullI(w.ints[i])
	}
	for i, p := range effDevInts(e) {
		*p = fromNullI(w.devInts[i])
	}
	for i, p := range effMachine(e) {
		*p = fromNullF(w.machine[i])
	}
	r.Eff = e
}
