//go:build probe

package tpccdoc_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"benchlab/internal/engine"
	"benchlab/internal/engine/docdb"
	"benchlab/internal/engine/ferretdb"
	"benchlab/internal/engine/mongodb"
	"benchlab/internal/server/servertest"
)

func timeit(t *testing.T, name string, n int, f func(i int) error) {
	start := time.Now()
	for i := 0; i < n; i++ {
		if err := f(i); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	t.Logf("%-40s %8.2f ms/op", name, float64(time.Since(start).Microseconds())/1000/float64(n))
}

func TestProbe(t *testing.T) {
	settings := map[string]string{}
	if os.Getenv("PROBE_PG") != "" {
		settings["backend"] = "postgresql"
	}
	getenv, _ := servertest.Env(t)
	dir := t.TempDir()
	db, err := ferretdb.Driver{}.Open(context.Background(), engine.Target{Name: "f", Engine: "ferretdb", Settings: settings, Getenv: getenv}, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	_, d, err := docdb.Connect(ctx, db.(*mongodb.DB), "probe")
	if err != nil {
		t.Fatal(err)
	}
	c := d.Collection("cust")
	c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "w", Value: 1}, {Key: "d", Value: 1}, {Key: "c", Value: 1}}})
	N := 30000
	var docs []any
	start := time.Now()
	for i := 0; i < N; i++ {
		docs = append(docs, bson.D{{Key: "_id", Value: fmt.Sprintf("1:%d:%d", i/3000+1, i%3000+1)}, {Key: "w", Value: 1}, {Key: "d", Value: i/3000 + 1}, {Key: "c", Value: i%3000 + 1},
			{Key: "last", Value: fmt.Sprintf("L%d", i%1000)}, {Key: "bal", Value: 0.0}, {Key: "data", Value: strings.Repeat("x", 400)}})
		if len(docs) == 1000 {
			if _, err := c.InsertMany(ctx, docs); err != nil {
				t.Fatal(err)
			}
			docs = nil
		}
	}
	t.Logf("load %d docs: %s", N, time.Since(start))
	var out bson.M
	timeit(t, "findOne _id string", 50, func(i int) error {
		return c.FindOne(ctx, bson.D{{Key: "_id", Value: fmt.Sprintf("1:%d:%d", i%10+1, i*37%3000+1)}}).Decode(&out)
	})
	timeit(t, "findOne _id string + projection", 50, func(i int) error {
		return c.FindOne(ctx, bson.D{{Key: "_id", Value: fmt.Sprintf("1:%d:%d", i%10+1, i*37%3000+1)}}, options.FindOne().SetProjection(bson.D{{Key: "bal", Value: 1}})).Decode(&out)
	})
	timeit(t, "findOne w,d,c", 2, func(i int) error {
		return c.FindOne(ctx, bson.D{{Key: "w", Value: 1}, {Key: "d", Value: i%10 + 1}, {Key: "c", Value: i*37%3000 + 1}}).Decode(&out)
	})
	timeit(t, "find w,d,last sort", 2, func(i int) error {
		cur, err := c.Find(ctx, bson.D{{Key: "w", Value: 1}, {Key: "d", Value: i%10 + 1}, {Key: "last", Value: fmt.Sprintf("L%d", i)}}, options.Find().SetSort(bson.D{{Key: "c", Value: 1}}))
		if err != nil {
			return err
		}
		var all []bson.M
		return cur.All(ctx, &all)
	})
	timeit(t, "find _id $in 10", 2, func(i int) error {
		var ids bson.A
		for k := 0; k < 10; k++ {
			ids = append(ids, fmt.Sprintf("1:%d:%d", k+1, i*37%3000+1))
		}
		cur, err := c.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}})
		if err != nil {
			return err
		}
		var all []bson.M
		return cur.All(ctx, &all)
	})
	timeit(t, "updateOne _id $inc", 50, func(i int) error {
		_, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: fmt.Sprintf("1:%d:%d", i%10+1, i*37%3000+1)}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "bal", Value: 1.5}}}})
		return err
	})
	timeit(t, "findOneAndUpdate _id $inc", 50, func(i int) error {
		return c.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: fmt.Sprintf("1:%d:%d", i%10+1, i*37%3000+1)}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "bal", Value: 1.5}}}}).Decode(&out)
	})
	timeit(t, "insertOne", 50, func(i int) error {
		_, err := d.Collection("h").InsertOne(ctx, bson.D{{Key: "x", Value: i}})
		return err
	})
	timeit(t, "insertOne into big (string _id)", 50, func(i int) error {
		_, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: fmt.Sprintf("9:%d", i)}, {Key: "x", Value: i}})
		return err
	})
	timeit(t, "deleteOne _id", 50, func(i int) error {
		_, err := c.DeleteOne(ctx, bson.D{{Key: "_id", Value: fmt.Sprintf("9:%d", i)}})
		return err
	})
	if os.Getenv("PROBE_PAUSE") != "" {
		t.Logf("dir %s; pausing", dir)
		time.Sleep(10 * time.Minute)
	}
}
