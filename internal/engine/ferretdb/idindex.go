package ferretdb

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	// FerretDB's own SQLite library, so that the index is built with the
	// JSON functions FerretDB's queries run.
	_ "modernc.org/sqlite"

	"benchlab/internal/engine"
	"benchlab/internal/engine/mongodb"
	"benchlab/internal/engine/postgres"
)

// SettingIDIndex is the ferretdb setting that adds, in the backend, an
// index matching the SQL FerretDB v1.24.2 sends for a filter on _id.
// FerretDB's own _id index does not serve that SQL on either backend:
// over SQLite it indexes _ferretdb_sjson->"_id" while the query compares
// _ferretdb_sjson->'$._id' (another expression to SQLite's planner); over
// PostgreSQL it is a btree on _jsonb->'_id' while the query tests
// containment (@>), which only a GIN index answers. So every lookup by
// _id reads the whole table. Off by default: FerretDB as released.
// docs/suites/tpcc-documents.md has the measurements.
const SettingIDIndex = "id_index"

// settingOn reads a true/false setting of t (id_index, backend_indexes);
// CheckTarget has checked it parses.
func settingOn(t engine.Target, name string) bool {
	on, _ := strconv.ParseBool(t.Settings[name])
	return on
}

// internalTable reports whether a backend table is FerretDB's metadata.
func internalTable(name string) bool { return strings.HasPrefix(name, "_ferretdb_") }

// sqliteIDIndexes adds the index to every collection's table of the
// benchmark database's SQLite file in dataDir: how many it added.
func sqliteIDIndexes(ctx context.Context, dataDir string) (int, error) {
	path := filepath.Join(dataDir, mongodb.Database+".sqlite")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(30000)")
	if err != nil {
		return 0, fmt.Errorf("id_index: open %s: %w", path, err)
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "SELECT name FROM sqlite_master WHERE type = 'table'")
	if err != nil {
		return 0, fmt.Errorf("id_index: list tables of %s: %w", path, err)
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return 0, fmt.Errorf("id_index: %w", err)
		}
		if !internalTable(n) {
			tables = append(tables, n)
		}
	}
	rows.Close()
	for _, tb := range tables {
		q := fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %q ON %q (_ferretdb_sjson->'$._id')`, tb+"_benchlab_id", tb)
		if _, err := db.ExecContext(ctx, q); err != nil {
			return 0, fmt.Errorf("id_index: table %s: %w", tb, err)
		}
	}
	return len(tables), nil
}

// pgIDIndexes adds a GIN index on _jsonb->'_id' to every collection's
// table in the benchmark database's schema: how many it added.
func pgIDIndexes(ctx context.Context, pg *postgres.DB) (int, error) {
	c, err := pg.Connect(ctx)
	if err != nil {
		return 0, fmt.Errorf("id_index: %w", err)
	}
	defer c.Close()
	rows, err := c.Values(ctx, "SELECT table_name FROM information_schema.tables WHERE table_schema = $1", mongodb.Database)
	if err != nil {
		return 0, fmt.Errorf("id_index: list tables: %w", err)
	}
	n := 0
	for _, r := range rows {
		if internalTable(r[0]) {
			continue
		}
		q := fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %q ON %q.%q USING gin ((_jsonb->'_id'))`, r[0]+"_benchlab_id", mongodb.Database, r[0])
		if _, err := c.Exec(ctx, q); err != nil {
			return 0, fmt.Errorf("id_index: table %s: %w", r[0], err)
		}
		n++
	}
	return n, nil
}
