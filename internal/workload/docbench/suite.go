// Package docbench is the document micro-benchmarks: sysbench's idea (one
// collection of table_size documents, each test one kind of operation at
// each thread count) over the MongoDB wire protocol, so that document
// engines get the relative tables SQL engines get from sysbench.
package docbench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"benchlab/internal/engine"
	"benchlab/internal/engine/docdb"
	"benchlab/internal/workload"
)

func init() { workload.Register(Suite{}) }

// Suite is the document micro-benchmarks.
type Suite struct{}

// Name returns "docbench".
func (Suite) Name() string { return "docbench" }

// Summary describes the suite for `benchlab list`.
func (Suite) Summary() string {
	return "document micro-benchmarks (MongoDB protocol): find by _id, range by a secondary index, aggregation, insert, update one field"
}

// Needs says the suite runs on document engines.
func (Suite) Needs() engine.Kind { return engine.KindDoc }

// Report groups.
const (
	GroupReads  = "reads"
	GroupWrites = "writes"
)

// collection holds the documents: _id 1..table_size, k (indexed) a random
// number in 1..table_size as sysbench's k, c and pad random text as its
// columns.
const collection = "docs"

// rangeSize is the documents a range or an aggregation reads, as
// sysbench's range_size.
const rangeSize = 100

// test is one measured test.
type test struct {
	name, group, summary string
	write                bool
	op                   func(w *worker, ctx context.Context) (int64, error)
}

var tests = []test{
	{"point-find", GroupReads, "find one document by _id (a 10-digit string)", false, (*worker).pointFind},
	{"range-index", GroupReads, "find 100 documents by a range of the secondary index k", false, (*worker).rangeIndex},
	{"aggregate", GroupReads, "sum c's length over 100 documents of an _id range ($match, $group)", false, (*worker).aggregate},
	{"update-field", GroupWrites, "set one field (k) of a document found by _id", true, (*worker).updateField},
	{"insert", GroupWrites, "insert one document (its _id an ObjectId the driver makes)", true, (*worker).insert},
}

// Tests lists the tests in run order: reads before writes.
func (Suite) Tests() []workload.Test {
	out := make([]workload.Test, len(tests))
	for i, t := range tests {
		out[i] = workload.Test{Name: t.name, Family: t.name, Group: t.group, Summary: t.summary}
	}
	return out
}

// Check validates the shared fields this suite reads.
func (Suite) Check(p workload.Params) error {
	if p.TableSize < rangeSize {
		return workload.Bad("table_size", p.TableSize, "%d documents is too few; want at least %d", p.TableSize, rangeSize)
	}
	_, err := workload.SelectTests(p.Tests, Suite{}.Tests())
	return err
}

// Plan loads the collection, then runs each selected test, reads for
// read_time and writes for write_time, at every thread count.
func (s Suite) Plan(p workload.Params) ([]workload.Step, error) {
	if err := s.Check(p); err != nil {
		return nil, err
	}
	sel, err := workload.SelectTests(p.Tests, s.Tests())
	if err != nil {
		return nil, err
	}
	steps := []workload.Step{loadStep(p)}
	for _, t := range tests {
		if sel != nil && !sel[t.name] {
			continue
		}
		t := t
		d := p.ReadTime
		if t.write {
			d = p.WriteTime
		}
		steps = append(steps, workload.Step{
			Name: t.name, Family: t.name, Group: t.group, Write: t.write, Duration: d, Warmup: p.Warmup,
			NewWorker: func(ctx context.Context, db engine.DB, id, n int, seed uint64) (workload.Worker, error) {
				return newWorker(ctx, db, p.TableSize, id, n, seed, t.op)
			},
		})
	}
	return steps, nil
}

// loadBatch is the documents per insertMany while loading.
const loadBatch = 1000

// loadStep drops the collection, loads table_size documents and builds
// the index on k after the load, as sysbench creates its secondary index.
func loadStep(p workload.Params) workload.Step {
	return workload.Step{
		Name: "prepare", Warm: true, Write: true,
		Action: func(ctx context.Context, db engine.DB, log io.Writer) (workload.Tally, error) {
			var t workload.Tally
			_, d, err := docdb.Connect(ctx, db, "docbench prepare")
			if err != nil {
				return t, err
			}
			defer docdb.Close(d)
			coll := d.Collection(collection)
			if err := coll.Drop(ctx); err != nil {
				return t, fmt.Errorf("prepare: drop %s: %w", collection, err)
			}
			r := rand.New(rand.NewPCG(p.Seed, 1))
			start := time.Now()
			batch := make([]any, 0, loadBatch)
			for id := int64(1); id <= p.TableSize; id++ {
				batch = append(batch, document(r, id, p.TableSize))
				if len(batch) == loadBatch || id == p.TableSize {
					if _, err := coll.InsertMany(ctx, batch); err != nil {
						return t, fmt.Errorf("prepare: insert documents up to _id %d: %w", id, err)
					}
					t.Statements++
					t.Rows += int64(len(batch))
					batch = batch[:0]
				}
			}
			if _, err := coll.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "k", Value: 1}},
				Options: options.Index().SetName("k_1")}); err != nil {
				return t, fmt.Errorf("prepare: index on k: %w", err)
			}
			t.Statements++
			if n, err := docdb.IndexIDs(ctx, db); err != nil {
				return t, fmt.Errorf("prepare: %w", err)
			} else if n > 0 {
				fmt.Fprintf(log, "prepare: %d backend index(es) for the server's finds (id_index, backend_indexes)\n", n)
			}
			el := time.Since(start)
			fmt.Fprintf(log, "prepare: %d documents loaded and indexed in %s (%.0f documents/s)\n", t.Rows,
				el.Round(time.Millisecond), float64(t.Rows)/el.Seconds())
			return t, nil
		},
	}
}

// key is document id's _id: its number as 10 digits, a string because
// FerretDB v1 over SQLite sends only {_id: string or ObjectId} to SQLite
// as SQL (any other filter makes it decode the whole collection; even that
// SQL scans the table unless the target sets id_index); zero-padded, so
// the strings sort as the numbers.
func key(id int64) string { return fmt.Sprintf("%010d", id) }

// document is document id: k random in 1..size, c 120 and pad 60
// characters of random digit groups, as sysbench's row.
func document(r *rand.Rand, id, size int64) bson.D {
	return bson.D{{Key: "_id", Value: key(id)}, {Key: "k", Value: 1 + r.Int64N(size)},
		{Key: "c", Value: digits(r, 11, 10)}, {Key: "pad", Value: digits(r, 5, 10)}}
}

// digits is groups of 11 random digits joined by '-' (sysbench's c and pad).
func digits(r *rand.Rand, groups, width int) string {
	var b strings.Builder
	for g := 0; g < groups; g++ {
		if g > 0 {
			b.WriteByte('-')
		}
		for i := 0; i <= width; i++ {
			b.WriteByte(byte('0' + r.IntN(10)))
		}
	}
	return b.String()
}
