// Package docdb is what document suites see of an engine that stores
// documents and speaks the MongoDB wire protocol (a MongoDB server by DSN,
// FerretDB started per run): clients of the official Go driver on the
// benchmark database, and what the server can do.
package docdb

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"benchlab/internal/engine"
)

// DB is the view of an engine.DB that holds documents.
type DB interface {
	engine.DB
	// Connect opens a client of its own for one worker, holding one
	// connection, as each py-tpcc client process has its own.
	Connect(ctx context.Context) (*mongo.Client, error)
	// Database names the benchmark database the suites write to.
	Database() string
	// Transactions reports whether the server runs multi-document
	// transactions (FerretDB v1 does not).
	Transactions() bool
}

// Of returns db's document view, or an error naming who needed it (a
// suite, a step) when the engine does not store documents.
func Of(db engine.DB, who string) (DB, error) {
	d, ok := db.(DB)
	if !ok {
		return nil, fmt.Errorf("%s: the engine does not store documents (want mongodb or ferretdb)", who)
	}
	return d, nil
}

// Connect opens a worker's client on db's benchmark database, with errors
// that name who.
func Connect(ctx context.Context, db engine.DB, who string) (DB, *mongo.Database, error) {
	d, err := Of(db, who)
	if err != nil {
		return nil, nil, err
	}
	c, err := d.Connect(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: connect: %w", who, err)
	}
	return d, c.Database(d.Database()), nil
}

// Close disconnects a database's client, as Connect opened it.
func Close(db *mongo.Database) error {
	if db == nil {
		return nil
	}
	return db.Client().Disconnect(context.Background())
}

// IDIndexer is a document DB that can add to its storage the indexes its
// finds can use, which FerretDB v1.24.2's own indexes cannot serve: the
// index on _id (a ferretdb target's id_index) and, over PostgreSQL, a
// GIN twin of each index a collection declares (backend_indexes). Suites
// call it once their collections exist and are loaded.
type IDIndexer interface {
	IndexIDs(ctx context.Context) (int, error)
}

// IndexIDs calls db's IndexIDs when it has one: the indexes added.
func IndexIDs(ctx context.Context, db engine.DB) (int, error) {
	if x, ok := db.(IDIndexer); ok {
		return x.IndexIDs(ctx)
	}
	return 0, nil
}
