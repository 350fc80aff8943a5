package ferretdb_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"benchlab/internal/engine"
	"benchlab/internal/engine/docdb"
	"benchlab/internal/engine/ferretdb"
	"benchlab/internal/engine/mongodb"
	"benchlab/internal/server/servertest"
)

func TestMain(m *testing.M) {
	ferretdb.ServeIfAsked()
	os.Exit(m.Run())
}

// open starts a ferretdb target of backend under a temp dir and returns it
// with its dir.
func open(t *testing.T, settings map[string]string) (*mongodb.DB, string) {
	t.Helper()
	getenv, _ := servertest.Env(t)
	dir := t.TempDir()
	db, err := ferretdb.Driver{}.Open(context.Background(), engine.Target{Name: "f", Engine: "ferretdb", Settings: settings, Getenv: getenv}, dir)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return db.(*mongodb.DB), dir
}

// roundTrip writes a document through a worker's client and reads it back.
func roundTrip(t *testing.T, db *mongodb.DB) {
	t.Helper()
	ctx := context.Background()
	_, d, err := docdb.Connect(ctx, db, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer docdb.Close(d)
	if _, err := d.Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: 7}, {Key: "v", Value: "seven"}}); err != nil {
		t.Fatalf("insert: %v", err)
	}
	var got struct{ V string }
	if err := d.Collection("c").FindOne(ctx, bson.D{{Key: "_id", Value: 7}}).Decode(&got); err != nil || got.V != "seven" {
		t.Fatalf("find: %+v, %v", got, err)
	}
}

func TestSQLiteBackend(t *testing.T) {
	db, dir := open(t, nil)
	roundTrip(t, db)
	ctx := context.Background()
	info, err := db.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Engine != "ferretdb" || info.Version != ferretdb.Version() || info.Settings["backend"] != "sqlite" ||
		!strings.Contains(info.Build, "SQLite") {
		t.Errorf("info %+v; want ferretdb %s on sqlite", info, ferretdb.Version())
	}
	if db.Transactions() {
		t.Error("FerretDB v1 says it runs multi-document transactions")
	}
	if len(db.PIDs()) != 1 {
		t.Errorf("PIDs %v, want FerretDB's one", db.PIDs())
	}
	if n, err := db.DBSize(ctx); err != nil || n <= 0 {
		t.Errorf("DBSize %d, %v; want the SQLite database's size", n, err)
	}
	if _, err := db.ReadStats(ctx); err != nil {
		t.Errorf("ReadStats: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "ferretdb", "data", "*.sqlite"))
	if len(files) == 0 {
		t.Errorf("no SQLite file in the data dir")
	}
	if err := db.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	servertest.NoProcs(t, dir)
}

func TestPostgreSQLBackend(t *testing.T) {
	db, dir := open(t, map[string]string{"backend": "postgresql", "postgres.shared_buffers": "64MB"})
	roundTrip(t, db)
	info, err := db.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.Settings["backend"] != "postgresql" || info.Settings["postgres_version"] == "" {
		t.Errorf("info %+v; want the postgresql backend and its version", info)
	}
	if len(db.PIDs()) != 2 {
		t.Errorf("PIDs %v, want FerretDB's and PostgreSQL's", db.PIDs())
	}
	if err := db.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	servertest.NoProcs(t, dir)
}

func TestCheckTarget(t *testing.T) {
	for _, c := range []struct {
		t    engine.Target
		want string
	}{
		{engine.Target{DSN: "mongodb://127.0.0.1:1/"}, "dsn:"},
		{engine.Target{Basedir: "/usr"}, "basedir:"},
		{engine.Target{Version: "0.9"}, "version:"},
		{engine.Target{Settings: map[string]string{"backend": "hana"}}, "settings.backend:"},
		{engine.Target{Settings: map[string]string{"postgres.work_mem": "4MB"}}, "settings.postgres.work_mem:"},
		{engine.Target{Settings: map[string]string{"cache": "1"}}, "settings.cache:"},
		{engine.Target{Memory: "1KB"}, "memory:"},
	} {
		err := ferretdb.Driver{}.CheckTarget(c.t)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%+v: %v; want an error starting %q", c.t, err, c.want)
		}
	}
	if err := (ferretdb.Driver{}).CheckTarget(engine.Target{Version: ferretdb.Version(), Settings: map[string]string{"backend": "SQLite"}}); err != nil {
		t.Errorf("a good target: %v", err)
	}
}
