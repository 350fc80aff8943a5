package ferretdb

import (
	"context"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"benchlab/internal/engine/mongodb"
	"benchlab/internal/engine/postgres"
)

// SettingBackendIndexes is the ferretdb setting that gives every index a
// collection declares (createIndexes) a twin in PostgreSQL that the SQL
// FerretDB v1.24.2 sends can use, and the _id index of id_index with it.
//
// Over PostgreSQL FerretDB pushes equality on top-level fields down as
// _jsonb->'field' @> value, one condition per field, and sorts and limits
// in its own process. Its indexes are btree indexes on _jsonb->'field',
// which cannot answer @>; a GIN index on the same expressions can, so a
// find of customers by (c_w_id, c_d_id, c_last) reads the district's few
// customers of that name instead of the whole table, and a find of a
// district's new orders reads that district's. Sorting stays in FerretDB.
//
// Over SQLite FerretDB sends no condition but one on _id alone: every
// other find is SELECT _ferretdb_sjson FROM <table> with no WHERE, which
// no index can serve, so the setting is refused there.
//
// It changes the system under test (the indexes cost writes), so it is off
// by default and the manifest records it.
const SettingBackendIndexes = "backend_indexes"

// checkBackendIndexes says what is wrong with the setting on a target of
// backend.
func checkBackendIndexes(v, backend string) error {
	on, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("settings.%s: %q is not true or false", SettingBackendIndexes, v)
	}
	if on && backend != BackendPostgreSQL {
		return fmt.Errorf("settings.%s: only for backend = \"postgresql\": over SQLite FerretDB %s sends SQL no filter but "+
			"one on _id alone (any other find is SELECT _ferretdb_sjson FROM <table> without WHERE), so no index can "+
			"serve it; id_index covers _id", SettingBackendIndexes, Version())
	}
	return nil
}

// jsonbKey is how pg_get_indexdef spells a key of FerretDB's indexes.
const jsonbKey = "(_jsonb -> '"

// pgBackendIndexes adds a GIN index on the key expressions of every btree
// index FerretDB made on a collection's table in the benchmark database's
// schema, _id's aside (id_index's): how many it added.
func pgBackendIndexes(ctx context.Context, pg *postgres.DB) (int, error) {
	c, err := pg.Connect(ctx)
	if err != nil {
		return 0, fmt.Errorf("backend_indexes: %w", err)
	}
	defer c.Close()
	// Each index's key expressions, joined by a unit separator.
	rows, err := c.Values(ctx, `SELECT t.relname, i.relname,
	array_to_string(ARRAY(SELECT pg_get_indexdef(x.indexrelid, k, true) FROM generate_series(1, x.indnkeyatts) k ORDER BY k), chr(31))
FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
JOIN pg_namespace n ON n.oid = t.relnamespace JOIN pg_am a ON a.oid = i.relam
WHERE n.nspname = $1 AND a.amname = 'btree' ORDER BY 1, 2`, mongodb.Database)
	if err != nil {
		return 0, fmt.Errorf("backend_indexes: list FerretDB's indexes: %w", err)
	}
	n := 0
	for _, r := range rows {
		table, index, keys := r[0], r[1], strings.Split(r[2], "\x1f")
		if internalTable(table) || !ferretKeys(keys) {
			continue
		}
		q := fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %q ON %q.%q USING gin (%s)`, twinName(index), mongodb.Database, table,
			strings.Join(keys, ", "))
		if _, err := c.Exec(ctx, q); err != nil {
			return n, fmt.Errorf("backend_indexes: table %s, index %s: %w", table, index, err)
		}
		n++
	}
	return n, nil
}

// ferretKeys reports whether keys are a FerretDB index's on document
// fields, other than the _id index id_index covers.
func ferretKeys(keys []string) bool {
	if len(keys) == 1 && keys[0] == jsonbKey+"_id'::text)" {
		return false
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, jsonbKey) {
			return false
		}
	}
	return len(keys) > 0
}

// twinName is the GIN twin's name of FerretDB's index: a prefix of its
// name and a hash of all of it, within PostgreSQL's 63 bytes.
func twinName(index string) string {
	h := fnv.New32a()
	h.Write([]byte(index))
	return fmt.Sprintf("%.44s_bl%08x", index, h.Sum32())
}
