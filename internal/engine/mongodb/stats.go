package mongodb

import (
	"context"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// statPaths are serverStatus's counters a step's efficiency table gives
// per operation, where the server has them (MongoDB has all; FerretDB v1
// some): operations by type, network bytes and requests, the documents
// read and written, and WiredTiger's cache traffic.
var statPaths = []string{
	"opcounters.insert", "opcounters.query", "opcounters.update", "opcounters.delete", "opcounters.getmore",
	"opcounters.command",
	"network.bytesIn", "network.bytesOut", "network.numRequests",
	"metrics.document.returned", "metrics.document.inserted", "metrics.document.updated", "metrics.document.deleted",
	"wiredTiger.cache.pages read into cache", "wiredTiger.cache.pages written from cache",
	"wiredTiger.cache.bytes read into cache", "wiredTiger.cache.bytes written from cache",
}

// ReadStats returns serverStatus's counters by the names "serverStatus."
// plus their path; a server that does not answer serverStatus gives none.
func (db *DB) ReadStats(ctx context.Context) (map[string]float64, error) {
	var st bson.M
	if err := db.admin.Database("admin").RunCommand(ctx, bson.D{{Key: "serverStatus", Value: 1}}).Decode(&st); err != nil {
		if ctx.Err() != nil || db.Died() != nil {
			return nil, db.errf("serverStatus: %w", err)
		}
		return map[string]float64{}, nil
	}
	out := map[string]float64{}
	for _, p := range statPaths {
		if v, ok := lookup(st, p); ok {
			out["serverStatus."+p] = v
		}
	}
	return out, nil
}

// DBSize is dbStats' storage and index sizes of the benchmark database.
func (db *DB) DBSize(ctx context.Context) (int64, error) {
	var st bson.M
	if err := db.admin.Database(db.cfg.Database).RunCommand(ctx, bson.D{{Key: "dbStats", Value: 1}}).Decode(&st); err != nil {
		return 0, db.errf("dbStats: %w", err)
	}
	storage, _ := number(st["storageSize"])
	index, _ := number(st["indexSize"])
	if storage == 0 {
		storage, _ = number(st["dataSize"])
	}
	return int64(storage + index), nil
}

// lookup follows a path of keys separated by dots through nested
// documents; the last key may hold spaces (WiredTiger's names).
func lookup(m bson.M, path string) (float64, bool) {
	keys := strings.SplitN(path, ".", 3)
	var cur any = m
	for i, k := range keys {
		d, ok := cur.(bson.M)
		if !ok {
			if dd, ok2 := cur.(bson.D); ok2 {
				d = bson.M{}
				for _, e := range dd {
					d[e.Key] = e.Value
				}
			} else {
				return 0, false
			}
		}
		if i == len(keys)-1 {
			return number(d[k])
		}
		cur = d[k]
	}
	return 0, false
}

// number reads any BSON number as a float64.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}
