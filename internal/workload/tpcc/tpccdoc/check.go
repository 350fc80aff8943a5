package tpccdoc

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// number reads a BSON number as a float64.
func number(v any) float64 {
	switch x := v.(type) {
	case int32:
		return float64(x)
	case int64:
		return float64(x)
	case float64:
		return x
	}
	return math.NaN()
}

// district is what the checks gather about one district.
type district struct {
	ytd, next          float64
	maxOrder, olSum    float64
	maxNO, minNO, noN  float64
	lines              float64
	embeddedMismatch   string
	seenOrder, seenNew bool
}

type dkey struct{ w, d int }

// Check tests the consistency conditions 1 to 4 of clause 3.3.2 and
// returns an error naming each broken one and where. It reads each
// collection once, with a plain find (which every MongoDB-protocol server
// answers; FerretDB v1 over SQLite would scan a collection for each
// filtered query anyway), and sums per district in the client.
func Check(ctx context.Context, db *mongo.Database, cfg Config) error {
	ds := map[dkey]*district{}
	get := func(w, d int) *district {
		k := dkey{w, d}
		if ds[k] == nil {
			ds[k] = &district{}
		}
		return ds[k]
	}
	wytd := map[int]float64{}
	err := scan(ctx, db.Collection(cWarehouse), bson.D{{Key: "w_id", Value: 1}, {Key: "w_ytd", Value: 1}}, func(m bson.M) {
		wytd[int(number(m["w_id"]))] = number(m["w_ytd"])
	})
	if err == nil {
		err = scan(ctx, db.Collection(cDistrict), bson.D{{Key: "d_w_id", Value: 1}, {Key: "d_id", Value: 1}, {Key: "d_ytd", Value: 1},
			{Key: "d_next_o_id", Value: 1}}, func(m bson.M) {
			x := get(int(number(m["d_w_id"])), int(number(m["d_id"])))
			x.ytd, x.next = number(m["d_ytd"]), number(m["d_next_o_id"])
		})
	}
	if err == nil {
		proj := bson.D{{Key: "o_w_id", Value: 1}, {Key: "o_d_id", Value: 1}, {Key: "o_id", Value: 1}, {Key: "o_ol_cnt", Value: 1}}
		if cfg.Denormalize {
			proj = append(proj, bson.E{Key: "order_line.ol_number", Value: 1})
		}
		err = scan(ctx, db.Collection(cOrders), proj, func(m bson.M) {
			x := get(int(number(m["o_w_id"])), int(number(m["o_d_id"])))
			o, n := number(m["o_id"]), number(m["o_ol_cnt"])
			x.seenOrder, x.maxOrder, x.olSum = true, math.Max(x.maxOrder, o), x.olSum+n
			if lines, ok := m["order_line"].(bson.A); cfg.Denormalize && (!ok || float64(len(lines)) != n) && x.embeddedMismatch == "" {
				x.embeddedMismatch = fmt.Sprintf("order %v holds %d lines, o_ol_cnt %v", m["o_id"], len(lines), m["o_ol_cnt"])
			}
		})
	}
	if err == nil {
		err = scan(ctx, db.Collection(cNewOrder), bson.D{{Key: "no_w_id", Value: 1}, {Key: "no_d_id", Value: 1}, {Key: "no_o_id", Value: 1}},
			func(m bson.M) {
				x := get(int(number(m["no_w_id"])), int(number(m["no_d_id"])))
				o := number(m["no_o_id"])
				if !x.seenNew {
					x.seenNew, x.minNO, x.maxNO = true, o, o
				}
				x.maxNO, x.minNO, x.noN = math.Max(x.maxNO, o), math.Min(x.minNO, o), x.noN+1
			})
	}
	if err == nil && !cfg.Denormalize {
		err = scan(ctx, db.Collection(cOrderLine), bson.D{{Key: "ol_w_id", Value: 1}, {Key: "ol_d_id", Value: 1}}, func(m bson.M) {
			get(int(number(m["ol_w_id"])), int(number(m["ol_d_id"]))).lines++
		})
	}
	if err != nil {
		return fmt.Errorf("consistency: %w", err)
	}
	if broken := judge(cfg, wytd, ds); len(broken) > 0 {
		return fmt.Errorf("tpcc consistency: %s", strings.Join(broken[:min(len(broken), 6)], "; "))
	}
	return nil
}

// judge applies conditions 1 to 4 to what Check gathered.
func judge(cfg Config, wytd map[int]float64, ds map[dkey]*district) []string {
	var broken []string
	keys := make([]dkey, 0, len(ds))
	for k := range ds {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].w < keys[j].w || keys[i].w == keys[j].w && keys[i].d < keys[j].d })
	sums := map[int]float64{}
	for _, k := range keys {
		x := ds[k]
		sums[k.w] += x.ytd
		at := fmt.Sprintf("district (%d, %d)", k.w, k.d)
		if x.seenOrder && x.seenNew && (x.next-1 != x.maxOrder || x.next-1 != x.maxNO) {
			broken = append(broken, fmt.Sprintf("2: d_next_o_id - 1 = max(o_id) = max(no_o_id) fails at %s (%.0f, %.0f, %.0f)",
				at, x.next-1, x.maxOrder, x.maxNO))
		}
		if x.seenNew && x.maxNO-x.minNO+1 != x.noN {
			broken = append(broken, fmt.Sprintf("3: max(no_o_id) - min(no_o_id) + 1 = count(new_order) fails at %s (%.0f - %.0f + 1, %.0f)",
				at, x.maxNO, x.minNO, x.noN))
		}
		if !cfg.Denormalize && x.olSum != x.lines {
			broken = append(broken, fmt.Sprintf("4: sum(o_ol_cnt) = count(order_line) fails at %s (%.0f, %.0f)", at, x.olSum, x.lines))
		}
		if x.embeddedMismatch != "" {
			broken = append(broken, fmt.Sprintf("4: o_ol_cnt = the lines embedded fails at %s: %s", at, x.embeddedMismatch))
		}
	}
	for w := 1; w <= cfg.Warehouses; w++ {
		// Amounts are doubles, as py-tpcc stores them: a cent is the tolerance.
		if y, ok := wytd[w]; !ok || math.Abs(y-sums[w]) > 0.01 {
			broken = append(broken, fmt.Sprintf("1: w_ytd = sum(d_ytd) fails at warehouse %d (%.2f, %.2f)", w, y, sums[w]))
		}
	}
	return broken
}

// scan reads every document of coll with projection proj.
func scan(ctx context.Context, coll *mongo.Collection, proj bson.D, fn func(bson.M)) error {
	cur, err := coll.Find(ctx, bson.D{}, options.Find().SetProjection(proj).SetBatchSize(10_000))
	if err != nil {
		return fmt.Errorf("%s: %w", coll.Name(), err)
	}
	defer cur.Close(context.WithoutCancel(ctx))
	for cur.Next(ctx) {
		var m bson.M
		if err := cur.Decode(&m); err != nil {
			return fmt.Errorf("%s: %w", coll.Name(), err)
		}
		fn(m)
	}
	if err := cur.Err(); err != nil {
		return fmt.Errorf("%s: %w", coll.Name(), err)
	}
	return nil
}
