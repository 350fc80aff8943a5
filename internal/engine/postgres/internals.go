package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"benchlab/internal/engine"
)

// gaugeQuery is one source of gauges ReadInternals reads: a statement
// returning one JSON object of numbers, each named "<source>.<key>".
type gaugeQuery struct {
	source string
	// extension, when set, is the extension the query needs: the query is
	// left out where it is not installed (and cannot be, see useExtension).
	extension string
	query     string
	// zero lists keys that are 0 when the object lacks them (a wait event
	// type no backend waited on in that second).
	zero []string
}

// gaugeQueries are PostgreSQL's gauges:
//
//   - pg_activity: autovacuum workers running, and the client backends
//     running a statement (active), other than the reading session.
//   - pg_wait: those active backends by what they wait on at the moment
//     of the read (pg_stat_activity's wait_event_type: LWLock, Lock, IO,
//     IPC, ...), and CPU for those waiting on nothing. One sample a
//     second: over a step, the counts are a sampled profile of the waits.
//   - pg_buffercache: shared buffers dirty and in use, from the
//     pg_buffercache extension (contrib). PostgreSQL 15 has no dirty-buffer
//     count without it; where it is not installed and cannot be, the
//     series is absent.
//
// Adding a gauge is adding a query (or a key to one) here.
var gaugeQueries = []gaugeQuery{
	{source: "pg_activity", query: "SELECT json_build_object(" +
		"'autovacuum_workers', count(*) FILTER (WHERE backend_type = 'autovacuum worker'), " +
		"'active_backends', count(*) FILTER (WHERE backend_type = 'client backend' AND state = 'active' " +
		"AND pid <> pg_backend_pid())) FROM pg_stat_activity"},
	{source: "pg_wait", query: "SELECT coalesce(json_object_agg(t, n), '{}') FROM (" +
		"SELECT coalesce(wait_event_type, 'CPU') t, count(*) n FROM pg_stat_activity " +
		"WHERE backend_type = 'client backend' AND state = 'active' AND pid <> pg_backend_pid() GROUP BY 1) w",
		zero: []string{"CPU", "LWLock", "Lock", "IO", "IPC", "BufferPin", "Client", "Timeout", "Extension", "Activity"}},
	{source: "pg_buffercache", extension: "pg_buffercache", query: "SELECT json_build_object(" +
		"'dirty_buffers', count(*) FILTER (WHERE isdirty), 'used_buffers', count(relfilenode)) FROM pg_buffercache"},
}

// ReadInternals reads the counters of ReadStats and the gauges of
// gaugeQueries (engine.InternalsReader) in one statement on the
// administrative connection (one transaction, taken off xact_commit as
// ReadStats' are). Unlike ReadStats it does not wait for closed
// sessions to publish their counts: it runs every second while the
// workers work, and a second's rate may then miss up to a second of a
// backend's counts (ReadStats' precision note), which the next second has.
func (db *DB) ReadInternals(ctx context.Context) (engine.Internals, error) {
	db.statsMu.Lock()
	defer db.statsMu.Unlock()
	if err := db.loadViews(ctx); err != nil {
		return engine.Internals{}, err
	}
	if db.gauges == nil {
		gs, err := db.usableGauges(ctx)
		if err != nil {
			return engine.Internals{}, err
		}
		db.gauges = gs
	}
	queries := make([]string, len(db.gauges))
	for i, g := range db.gauges {
		queries[i] = g.query
	}
	counters, raw, err := db.readViews(ctx, queries)
	if err != nil {
		return engine.Internals{}, err
	}
	gauges := map[string]float64{}
	for i, g := range db.gauges {
		var row map[string]float64
		if raw[i] != nil {
			if err := json.Unmarshal(raw[i], &row); err != nil {
				return engine.Internals{}, fmt.Errorf("postgres: gauges: %s: %w", g.source, err)
			}
		}
		for _, k := range g.zero {
			gauges[g.source+"."+k] = 0
		}
		for k, v := range row {
			gauges[g.source+"."+k] = v
		}
	}
	return engine.Internals{Counters: counters, Gauges: gauges}, nil
}

// usableGauges are the gaugeQueries this server can answer: those whose
// extension is installed in the benchmark database, or that benchlab could
// install there because it started the server (a DSN's server is left as
// it is).
func (db *DB) usableGauges(ctx context.Context) ([]gaugeQuery, error) {
	var out []gaugeQuery
	for _, g := range gaugeQueries {
		if g.extension != "" {
			ok, err := db.useExtension(ctx, g.extension)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
		}
		out = append(out, g)
	}
	return out, nil
}

// useExtension says whether extension name is installed in the benchmark
// database, installing it first on a server benchlab started when the
// server offers it.
func (db *DB) useExtension(ctx context.Context, name string) (bool, error) {
	var installed, available bool
	db.ownXacts++
	err := db.admin.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = $1), "+
		"EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = $1)", name).Scan(&installed, &available)
	if err != nil {
		return false, db.Wrap(fmt.Errorf("postgres: gauges: extension %s: %w", name, err))
	}
	if installed || !available || db.Instance() == nil {
		return installed, nil
	}
	db.ownXacts++
	if _, err := db.admin.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS "+name); err != nil {
		return false, db.Wrap(fmt.Errorf("postgres: gauges: create extension %s: %w", name, err))
	}
	return true, nil
}
