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

// loadEfficiency reads r.Eff and r.DBBytes from r's row.
func (s *Store) loadEfficiency(ctx context.Context, r *Result) error {
	var secs sql.NullFloat64
	var device sql.NullString
	var db sql.NullInt64
	floats := make([]sql.NullFloat64, 2)
	ints := make([]sql.NullInt64, 8)
	devInts := make([]sql.NullInt64, 8)
	machine := make([]sql.NullFloat64, 3)
	dest := []any{&secs}
	for i := range floats {
		dest = append(dest, &floats[i])
	}
	for i := range ints {
		dest = append(dest, &ints[i])
	}
	dest = append(dest, &device)
	for i := range devInts {
		dest = append(dest, &devInts[i])
	}
	for i := range machine {
		dest = append(dest, &machine[i])
	}
	dest = append(dest, &db)
	if err := s.q().QueryRowContext(ctx, `SELECT `+effColumns+` FROM results WHERE id = ?`, r.ID).Scan(dest...); err != nil {
		return fmt.Errorf("read efficiency of result %d: %w", r.ID, err)
	}
	if db.Valid {
		r.DBBytes = db.Int64
	}
	if !secs.Valid {
		return nil
	}
	e := &Efficiency{Seconds: secs.Float64, Device: device.String}
	for i, p := range effFloats(e) {
		*p = fromNullF(floats[i])
	}
	for i, p := range effInts(e) {
		*p = fromNullI(ints[i])
	}
	for i, p := range effDevInts(e) {
		*p = fromNullI(devInts[i])
	}
	for i, p := range effMachine(e) {
		*p = fromNullF(machine[i])
	}
	r.Eff = e
	return nil
}
