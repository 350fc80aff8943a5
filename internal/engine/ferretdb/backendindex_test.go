package ferretdb_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"benchlab/internal/engine/docdb"
	"benchlab/internal/engine/ferretdb"
	"benchlab/internal/server/servertest"
)

// TestBackendIndexes shows what settings.backend_indexes does over
// PostgreSQL: FerretDB's find of customers by (c_w_id, c_d_id, c_last)
// is a sequential scan of the table before, and a scan of the GIN twin
// of the collection's declared index after. PostgreSQL's auto_explain logs
// the plan of every query FerretDB sends, each marked by the find's
// comment, so the test reads the plans FerretDB's own SQL got.
func TestBackendIndexes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and FerretDB")
	}
	db, dir := open(t, map[string]string{"backend": "postgresql", "backend_indexes": "true",
		"postgres.session_preload_libraries": "auto_explain", "postgres.auto_explain.log_min_duration": "0"})
	ctx := context.Background()
	info, err := db.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Settings[ferretdb.SettingBackendIndexes] != "true" || info.Settings[ferretdb.SettingIDIndex] != "true" {
		t.Errorf("manifest settings %v; want backend_indexes and id_index recorded", info.Settings)
	}
	_, d, err := docdb.Connect(ctx, db, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer docdb.Close(d)
	c := d.Collection("customer")
	if _, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "c_w_id", Value: 1}, {Key: "c_d_id", Value: 1},
		{Key: "c_last", Value: 1}, {Key: "c_first", Value: 1}}}); err != nil {
		t.Fatal(err)
	}
	const districts, perDistrict = 10, 1000
	for dist := 1; dist <= districts; dist++ {
		docs := make([]any, 0, perDistrict)
		for i := range perDistrict {
			docs = append(docs, bson.D{{Key: "_id", Value: fmt.Sprintf("1:%d:%d", dist, i)}, {Key: "c_w_id", Value: 1},
				{Key: "c_d_id", Value: dist}, {Key: "c_last", Value: fmt.Sprintf("NAME%03d", i%300)},
				{Key: "c_first", Value: fmt.Sprintf("F%04d", i)}})
		}
		if _, err := c.InsertMany(ctx, docs); err != nil {
			t.Fatal(err)
		}
	}
	byName := func(comment string) {
		t.Helper()
		var got []bson.M
		cur, err := c.Find(ctx, bson.D{{Key: "c_w_id", Value: 1}, {Key: "c_d_id", Value: 4}, {Key: "c_last", Value: "NAME123"}},
			options.Find().SetSort(bson.D{{Key: "c_first", Value: 1}}).SetComment(comment))
		if err == nil {
			err = cur.All(ctx, &got)
		}
		// NAME123 is customers 123, 423 and 723 of the district.
		if err != nil || len(got) != 3 {
			t.Fatalf("find by last name (%s): %d customers, %v; want 3", comment, len(got), err)
		}
	}
	byName("benchlab-before")
	n, err := docdb.IndexIDs(ctx, db)
	// The _id index (id_index's) and the twin of the one declared.
	if err != nil || n != 2 {
		t.Fatalf("IndexIDs: %d, %v; want 2", n, err)
	}
	byName("benchlab-after")
	docdb.Close(d)
	if err := db.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	servertest.NoProcs(t, dir)
	logBytes, err := os.ReadFile(info.Settings["postgres_server_log"])
	if err != nil {
		t.Fatalf("PostgreSQL's log: %v", err)
	}
	before, after := planOf(string(logBytes), "benchlab-before"), planOf(string(logBytes), "benchlab-after")
	t.Logf("FerretDB's find by last name, before:\n%s\nafter:\n%s", before, after)
	if !strings.Contains(before, "Seq Scan on customer_") {
		t.Errorf("plan of the find by last name before backend_indexes:\n%s\nwant the sequential scan FerretDB %s gets",
			before, ferretdb.Version())
	}
	if !strings.Contains(after, "Index Scan on customer_") || !strings.Contains(after, "_bl") || strings.Contains(after, "Seq Scan") {
		t.Errorf("plan of the find by last name after backend_indexes:\n%s\nwant a scan of the added GIN index", after)
	}
}

// planOf is the plan auto_explain logged for the query whose text holds
// the comment mark: the log's lines from that query's text up to the next
// log entry.
func planOf(log, mark string) string {
	lines := strings.Split(log, "\n")
	for i, l := range lines {
		if !strings.Contains(l, "Query Text:") || !strings.Contains(l, "/* "+mark+" */") {
			continue
		}
		end := i + 1
		for end < len(lines) && !strings.Contains(lines[end], "LOG:") && !strings.Contains(lines[end], "ERROR:") {
			end++
		}
		return strings.Join(lines[i:end], "\n")
	}
	return "(no plan logged for " + mark + ")"
}
