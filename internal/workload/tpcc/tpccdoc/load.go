package tpccdoc

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"benchlab/internal/workload"
	g "benchlab/internal/workload/tpcc/tpccgen"
)

// loadBatch is the documents per insertMany (py-tpcc's batch writes).
const loadBatch = 1000

// loader writes the population, drawing the same values in the same
// order as the SQL suite's loader.
type loader struct {
	db  *mongo.Database
	r   *g.Rand
	now time.Time
	t   *workload.Tally
	cfg Config
}

// batcher collects one collection's documents for insertMany.
type batcher struct {
	l    *loader
	coll string
	docs []any
}

func (l *loader) batch(coll string) *batcher { return &batcher{l: l, coll: coll} }

func (b *batcher) add(ctx context.Context, doc bson.D) error {
	b.docs = append(b.docs, doc)
	if len(b.docs) == loadBatch {
		return b.flush(ctx)
	}
	return nil
}

func (b *batcher) flush(ctx context.Context) error {
	if len(b.docs) == 0 {
		return nil
	}
	if _, err := b.l.db.Collection(b.coll).InsertMany(ctx, b.docs); err != nil {
		return fmt.Errorf("insert into %s: %w", b.coll, err)
	}
	b.l.t.Statements++
	b.l.t.Rows += int64(len(b.docs))
	b.docs = b.docs[:0]
	return nil
}

// money is a decimal drawn as an integer of hundredths (or of 10^-scale),
// stored as a double as py-tpcc stores it.
func money(n, scale int) float64 {
	f := float64(n)
	for range scale {
		f /= 10
	}
	return f
}

func (l *loader) all(ctx context.Context) error {
	if err := l.items(ctx); err != nil {
		return err
	}
	for w := 1; w <= l.cfg.Warehouses; w++ {
		if err := l.warehouse(ctx, w); err != nil {
			return fmt.Errorf("warehouse %d: %w", w, err)
		}
	}
	return nil
}

func (l *loader) items(ctx context.Context) error {
	b := l.batch(cItem)
	r := l.r
	for i := 1; i <= l.cfg.Scale.Items; i++ {
		if err := b.add(ctx, bson.D{{Key: "_id", Value: itemID(i)}, {Key: "i_id", Value: i}, {Key: "i_im_id", Value: r.Between(1, 10000)},
			{Key: "i_name", Value: r.AString(14, 24)}, {Key: "i_price", Value: money(r.Between(100, 10000), 2)},
			{Key: "i_data", Value: r.Data()}}); err != nil {
			return err
		}
	}
	return b.flush(ctx)
}

// address is street 1, street 2, city, state and zip with prefix p.
func (l *loader) address(p string) bson.D {
	r := l.r
	return bson.D{{Key: p + "_street_1", Value: r.AString(10, 20)}, {Key: p + "_street_2", Value: r.AString(10, 20)},
		{Key: p + "_city", Value: r.AString(10, 20)}, {Key: p + "_state", Value: r.AString(2, 2)}, {Key: p + "_zip", Value: r.Zip()}}
}

func (l *loader) warehouse(ctx context.Context, w int) error {
	r := l.r
	wh := append(bson.D{{Key: "_id", Value: warehouseID(w)}, {Key: "w_id", Value: w}, {Key: "w_name", Value: r.AString(6, 10)}}, l.address("w")...)
	wh = append(wh, bson.E{Key: "w_tax", Value: money(r.Between(0, 2000), 4)}, bson.E{Key: "w_ytd", Value: 300000.0})
	if _, err := l.db.Collection(cWarehouse).InsertOne(ctx, wh); err != nil {
		return fmt.Errorf("insert into warehouse: %w", err)
	}
	l.t.Statements++
	l.t.Rows++
	st := l.batch(cStock)
	for i := 1; i <= l.cfg.Scale.Items; i++ {
		doc := bson.D{{Key: "_id", Value: stockID(w, i)}, {Key: "s_i_id", Value: i}, {Key: "s_w_id", Value: w}, {Key: "s_quantity", Value: r.Between(10, 100)}}
		for k := 1; k <= 10; k++ {
			doc = append(doc, bson.E{Key: fmt.Sprintf("s_dist_%02d", k), Value: r.AString(24, 24)})
		}
		doc = append(doc, bson.E{Key: "s_ytd", Value: 0}, bson.E{Key: "s_order_cnt", Value: 0},
			bson.E{Key: "s_remote_cnt", Value: 0}, bson.E{Key: "s_data", Value: r.Data()})
		if err := st.add(ctx, doc); err != nil {
			return err
		}
	}
	if err := st.flush(ctx); err != nil {
		return err
	}
	ds := l.batch(cDistrict)
	for d := 1; d <= g.DistrictsPerWarehouse; d++ {
		doc := append(bson.D{{Key: "_id", Value: districtID(w, d)}, {Key: "d_id", Value: d}, {Key: "d_w_id", Value: w}, {Key: "d_name", Value: r.AString(6, 10)}},
			l.address("d")...)
		doc = append(doc, bson.E{Key: "d_tax", Value: money(r.Between(0, 2000), 4)}, bson.E{Key: "d_ytd", Value: 30000.0},
			bson.E{Key: "d_next_o_id", Value: l.cfg.Scale.Orders() + 1})
		if err := ds.add(ctx, doc); err != nil {
			return err
		}
	}
	if err := ds.flush(ctx); err != nil {
		return err
	}
	for d := 1; d <= g.DistrictsPerWarehouse; d++ {
		if err := l.customers(ctx, w, d); err != nil {
			return err
		}
		if err := l.orders(ctx, w, d); err != nil {
			return err
		}
	}
	return nil
}

func (l *loader) customers(ctx context.Context, w, d int) error {
	r := l.r
	cu, hi := l.batch(cCustomer), l.batch(cHistory)
	for c := 1; c <= l.cfg.Scale.Customers; c++ {
		last := c - 1
		if c > 1000 {
			last = r.NURand(255, g.CLoad, 0, l.cfg.Scale.LastNames())
		}
		credit := "GC"
		if r.IntN(10) == 0 {
			credit = "BC"
		}
		doc := bson.D{{Key: "_id", Value: customerID(w, d, c)}, {Key: "c_id", Value: c}, {Key: "c_d_id", Value: d}, {Key: "c_w_id", Value: w},
			{Key: "c_first", Value: r.AString(8, 16)}, {Key: "c_middle", Value: "OE"}, {Key: "c_last", Value: g.LastName(last)}}
		doc = append(doc, l.address("c")...)
		doc = append(doc, bson.D{{Key: "c_phone", Value: r.NString(16)}, {Key: "c_since", Value: l.now},
			{Key: "c_credit", Value: credit}, {Key: "c_credit_lim", Value: 50000.0},
			{Key: "c_discount", Value: money(r.Between(0, 5000), 4)}, {Key: "c_balance", Value: -10.0},
			{Key: "c_ytd_payment", Value: 10.0}, {Key: "c_payment_cnt", Value: 1}, {Key: "c_delivery_cnt", Value: 0},
			{Key: "c_data", Value: r.AString(300, 500)}}...)
		if err := cu.add(ctx, doc); err != nil {
			return err
		}
		if err := hi.add(ctx, bson.D{{Key: "h_c_id", Value: c}, {Key: "h_c_d_id", Value: d}, {Key: "h_c_w_id", Value: w},
			{Key: "h_d_id", Value: d}, {Key: "h_w_id", Value: w}, {Key: "h_date", Value: l.now}, {Key: "h_amount", Value: 10.0},
			{Key: "h_data", Value: r.AString(12, 24)}}); err != nil {
			return err
		}
	}
	if err := cu.flush(ctx); err != nil {
		return err
	}
	return hi.flush(ctx)
}

func (l *loader) orders(ctx context.Context, w, d int) error {
	r := l.r
	cids := r.Perm(l.cfg.Scale.Customers)
	or, ol, no := l.batch(cOrders), l.batch(cOrderLine), l.batch(cNewOrder)
	for o := 1; o <= l.cfg.Scale.Orders(); o++ {
		var carrier, delivered any = r.Between(1, 10), l.now
		if o >= l.cfg.Scale.FirstNewOrder() {
			carrier, delivered = nil, nil
		}
		n := r.Between(5, 15)
		order := bson.D{{Key: "_id", Value: orderID(w, d, o)}, {Key: "o_id", Value: o}, {Key: "o_d_id", Value: d}, {Key: "o_w_id", Value: w},
			{Key: "o_c_id", Value: cids[o-1] + 1}, {Key: "o_entry_d", Value: l.now}, {Key: "o_carrier_id", Value: carrier},
			{Key: "o_ol_cnt", Value: n}, {Key: "o_all_local", Value: 1}}
		var lines bson.A
		for k := 1; k <= n; k++ {
			amount := 0.0
			if o >= l.cfg.Scale.FirstNewOrder() {
				amount = money(r.Between(1, 999999), 2)
			}
			line := bson.D{{Key: "ol_number", Value: k}, {Key: "ol_i_id", Value: r.Between(1, l.cfg.Scale.Items)},
				{Key: "ol_supply_w_id", Value: w}, {Key: "ol_delivery_d", Value: delivered}, {Key: "ol_quantity", Value: 5},
				{Key: "ol_amount", Value: amount}, {Key: "ol_dist_info", Value: r.AString(24, 24)}}
			if l.cfg.Denormalize {
				lines = append(lines, line)
				continue
			}
			line = append(bson.D{{Key: "_id", Value: lineID(w, d, o, k)}, {Key: "ol_o_id", Value: o}, {Key: "ol_d_id", Value: d}, {Key: "ol_w_id", Value: w}}, line...)
			if err := ol.add(ctx, line); err != nil {
				return err
			}
		}
		if l.cfg.Denormalize {
			order = append(order, bson.E{Key: "order_line", Value: lines})
		}
		if err := or.add(ctx, order); err != nil {
			return err
		}
		if o >= l.cfg.Scale.FirstNewOrder() {
			if err := no.add(ctx, bson.D{{Key: "_id", Value: orderID(w, d, o)}, {Key: "no_o_id", Value: o}, {Key: "no_d_id", Value: d}, {Key: "no_w_id", Value: w}}); err != nil {
				return err
			}
		}
	}
	for _, b := range []*batcher{or, ol, no} {
		if err := b.flush(ctx); err != nil {
			return err
		}
	}
	return nil
}
