package docbench

import (
	"context"
	"math/rand/v2"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"benchlab/internal/engine"
	"benchlab/internal/engine/docdb"
	"benchlab/internal/workload"
)

// worker runs one test's operations on a client of its own.
type worker struct {
	db   *mongo.Database
	coll *mongo.Collection
	r    *rand.Rand
	size int64
	op   func(w *worker, ctx context.Context) (int64, error)
}

func newWorker(ctx context.Context, db engine.DB, size int64, id, n int, seed uint64,
	op func(w *worker, ctx context.Context) (int64, error)) (*worker, error) {
	_, d, err := docdb.Connect(ctx, db, "docbench worker")
	if err != nil {
		return nil, err
	}
	return &worker{db: d, coll: d.Collection(collection), r: rand.New(rand.NewPCG(seed, uint64(id))), size: size, op: op}, nil
}

// Op runs one operation; its Rows are the documents read or written.
func (w *worker) Op(ctx context.Context) (workload.Tally, error) {
	rows, err := w.op(w, ctx)
	return workload.Tally{Statements: 1, Rows: rows}, err
}

// Close disconnects the worker's client.
func (w *worker) Close() error { return docdb.Close(w.db) }

func (w *worker) id() int64 { return 1 + w.r.Int64N(w.size) }

func (w *worker) pointFind(ctx context.Context) (int64, error) {
	var doc bson.Raw
	if err := w.coll.FindOne(ctx, bson.D{{Key: "_id", Value: key(w.id())}}).Decode(&doc); err != nil {
		return 0, err
	}
	return 1, nil
}

func (w *worker) rangeIndex(ctx context.Context) (int64, error) {
	lo := 1 + w.r.Int64N(w.size-rangeSize+1)
	cur, err := w.coll.Find(ctx, bson.D{{Key: "k", Value: bson.D{{Key: "$gte", Value: lo}, {Key: "$lt", Value: lo + rangeSize}}}},
		options.Find().SetProjection(bson.D{{Key: "c", Value: 1}}))
	if err != nil {
		return 0, err
	}
	return drain(ctx, cur)
}

func (w *worker) aggregate(ctx context.Context) (int64, error) {
	lo := 1 + w.r.Int64N(w.size-rangeSize+1)
	cur, err := w.coll.Aggregate(ctx, mongo.Pipeline{
		{{Key: "$match", Value: bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: key(lo)}, {Key: "$lt", Value: key(lo + rangeSize)}}}}}},
		{{Key: "$group", Value: bson.D{{Key: "_id", Value: nil}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}},
			{Key: "k", Value: bson.D{{Key: "$sum", Value: "$k"}}}}}},
	})
	if err != nil {
		return 0, err
	}
	if _, err := drain(ctx, cur); err != nil {
		return 0, err
	}
	return rangeSize, nil
}

func (w *worker) updateField(ctx context.Context) (int64, error) {
	res, err := w.coll.UpdateOne(ctx, bson.D{{Key: "_id", Value: key(w.id())}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "k", Value: 1 + w.r.Int64N(w.size)}}}})
	if err != nil {
		return 0, err
	}
	return res.MatchedCount, nil
}

func (w *worker) insert(ctx context.Context) (int64, error) {
	doc := document(w.r, 0, w.size)[1:] // no _id: the driver makes an ObjectId
	if _, err := w.coll.InsertOne(ctx, doc); err != nil {
		return 0, err
	}
	return 1, nil
}

// drain reads a cursor to its end and returns the documents read.
func drain(ctx context.Context, cur *mongo.Cursor) (int64, error) {
	defer cur.Close(context.WithoutCancel(ctx))
	var n int64
	for cur.Next(ctx) {
		n++
	}
	return n, cur.Err()
}
