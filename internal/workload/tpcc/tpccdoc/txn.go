package tpccdoc

import (
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	g "benchlab/internal/workload/tpcc/tpccgen"
)

// find reads one document into out; errNoDoc when there is none.
func (x *tx) find(coll *mongo.Collection, filter bson.D, out any, opts ...options.Lister[options.FindOneOptions]) error {
	x.n++
	err := coll.FindOne(x.ctx, filter, opts...).Decode(out)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return errNoDoc
	}
	return err
}

// all reads every document of a find into out (a pointer to a slice).
func (x *tx) all(coll *mongo.Collection, filter bson.D, out any, opts ...options.Lister[options.FindOptions]) error {
	x.n++
	cur, err := coll.Find(x.ctx, filter, opts...)
	if err != nil {
		return err
	}
	return cur.All(x.ctx, out)
}

// modify is findAndModify: update the document and read it as it was
// before (before) or after.
func (x *tx) modify(coll *mongo.Collection, filter, update bson.D, before bool, out any) error {
	x.n++
	o := options.FindOneAndUpdate().SetReturnDocument(options.After)
	if before {
		o.SetReturnDocument(options.Before)
	}
	err := coll.FindOneAndUpdate(x.ctx, filter, update, o).Decode(out)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return errNoDoc
	}
	return err
}

func (x *tx) update(coll *mongo.Collection, filter, update bson.D) (int64, error) {
	x.n++
	res, err := coll.UpdateOne(x.ctx, filter, update)
	if err != nil {
		return 0, err
	}
	return res.MatchedCount, nil
}

func (x *tx) insert(coll *mongo.Collection, doc any) error {
	x.n++
	_, err := coll.InsertOne(x.ctx, doc)
	return err
}

// counter reads a district's or warehouse's document and applies inc to
// it: one findAndModify, or a find and an update conditional on what the
// find read (errConflict when another terminal moved it in between).
func (t *Terminal) counter(x *tx, coll *mongo.Collection, filter, inc bson.D, field string, before bool, out *bson.M) error {
	update := bson.D{{Key: "$inc", Value: inc}}
	if t.cfg.FindAndModify {
		return x.modify(coll, filter, update, before, out)
	}
	if err := x.find(coll, filter, out); err != nil {
		return err
	}
	cond := append(append(bson.D{}, filter...), bson.E{Key: field, Value: (*out)[field]})
	n, err := x.update(coll, cond, update)
	if err != nil {
		return err
	}
	if n == 0 {
		return errConflict
	}
	return nil
}

func num(v any) float64 { return number(v) }

func now() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }

// newOrder is clause 2.4: the items are read first, so an unused item
// rolls back before anything is written (no transaction to undo it).
func (t *Terminal) newOrder(x *tx) error {
	d, c, lines, allLocal := t.newOrderInputs()
	var cust, wh bson.M
	if err := x.find(t.db.Collection(cCustomer), byID(customerID(t.w, d, c)), &cust,
		options.FindOne().SetProjection(bson.D{{Key: "c_discount", Value: 1}, {Key: "c_last", Value: 1}, {Key: "c_credit", Value: 1}})); err != nil {
		return fmt.Errorf("customer: %w", err)
	}
	if err := x.find(t.db.Collection(cWarehouse), byID(warehouseID(t.w)), &wh, options.FindOne().SetProjection(bson.D{{Key: "w_tax", Value: 1}})); err != nil {
		return fmt.Errorf("warehouse: %w", err)
	}
	price := map[int]float64{}
	for _, l := range lines {
		if _, ok := price[l.item]; ok {
			continue
		}
		var it struct {
			Price float64 `bson:"i_price"`
		}
		err := x.find(t.db.Collection(cItem), byID(itemID(l.item)), &it, options.FindOne().SetProjection(bson.D{{Key: "i_price", Value: 1},
			{Key: "i_name", Value: 1}, {Key: "i_data", Value: 1}}))
		if errors.Is(err, errNoDoc) {
			return errRollback
		}
		if err != nil {
			return fmt.Errorf("item: %w", err)
		}
		price[l.item] = it.Price
	}
	var dist bson.M
	if err := t.counter(x, t.db.Collection(cDistrict), byID(districtID(t.w, d)), bson.D{{Key: "d_next_o_id", Value: 1}},
		"d_next_o_id", true, &dist); err != nil {
		return fmt.Errorf("district: %w", err)
	}
	o := int(num(dist["d_next_o_id"]))
	when := now()
	var docs []bson.D
	for i, l := range lines {
		var s bson.M
		if err := x.find(t.db.Collection(cStock), byID(stockID(l.supply, l.item)), &s); err != nil {
			return fmt.Errorf("stock (%d, %d): %w", l.supply, l.item, err)
		}
		q := int(num(s["s_quantity"]))
		if q >= l.qty+10 {
			q -= l.qty
		} else {
			q += 91 - l.qty
		}
		remote := 0
		if l.supply != t.w {
			remote = 1
		}
		if _, err := x.update(t.db.Collection(cStock), byID(stockID(l.supply, l.item)),
			bson.D{{Key: "$set", Value: bson.D{{Key: "s_quantity", Value: q}}}, {Key: "$inc", Value: bson.D{{Key: "s_ytd", Value: l.qty},
				{Key: "s_order_cnt", Value: 1}, {Key: "s_remote_cnt", Value: remote}}}}); err != nil {
			return fmt.Errorf("stock update: %w", err)
		}
		docs = append(docs, bson.D{{Key: "ol_number", Value: i + 1}, {Key: "ol_i_id", Value: l.item},
			{Key: "ol_supply_w_id", Value: l.supply}, {Key: "ol_delivery_d", Value: nil}, {Key: "ol_quantity", Value: l.qty},
			{Key: "ol_amount", Value: float64(l.qty) * price[l.item]}, {Key: "ol_dist_info", Value: s[fmt.Sprintf("s_dist_%02d", d)]}})
	}
	order := bson.D{{Key: "_id", Value: orderID(t.w, d, o)}, {Key: "o_id", Value: o}, {Key: "o_d_id", Value: d}, {Key: "o_w_id", Value: t.w},
		{Key: "o_c_id", Value: c}, {Key: "o_entry_d", Value: when}, {Key: "o_carrier_id", Value: nil}, {Key: "o_ol_cnt", Value: len(lines)},
		{Key: "o_all_local", Value: allLocal}}
	if t.cfg.Denormalize {
		order = append(order, bson.E{Key: "order_line", Value: docs})
	}
	if err := x.insert(t.db.Collection(cOrders), order); err != nil {
		return fmt.Errorf("order: %w", err)
	}
	if !t.cfg.Denormalize {
		many := make([]any, len(docs))
		for i, doc := range docs {
			many[i] = append(bson.D{{Key: "_id", Value: lineID(t.w, d, o, i+1)}, {Key: "ol_o_id", Value: o}, {Key: "ol_d_id", Value: d},
				{Key: "ol_w_id", Value: t.w}}, doc...)
		}
		x.n++
		if _, err := t.db.Collection(cOrderLine).InsertMany(x.ctx, many); err != nil {
			return fmt.Errorf("order lines: %w", err)
		}
	}
	// The new order last: a Delivery that finds it finds the order and its
	// lines written.
	if err := x.insert(t.db.Collection(cNewOrder), bson.D{{Key: "_id", Value: orderID(t.w, d, o)}, {Key: "no_o_id", Value: o},
		{Key: "no_d_id", Value: d}, {Key: "no_w_id", Value: t.w}}); err != nil {
		return fmt.Errorf("new order: %w", err)
	}
	return nil
}

// customerByName is clause 2.5.2.2: the customer at position ceil(n/2) of
// those with the last name, by first name.
func (t *Terminal) customerByName(x *tx, w, d int) (int, error) {
	var rows []struct {
		ID int `bson:"c_id"`
	}
	if err := x.all(t.db.Collection(cCustomer), bson.D{{Key: "c_w_id", Value: w}, {Key: "c_d_id", Value: d},
		{Key: "c_last", Value: g.LastName(t.r.NURand(255, g.CRun, 0, t.cfg.Scale.LastNames()))}}, &rows,
		options.Find().SetSort(bson.D{{Key: "c_first", Value: 1}}).SetProjection(bson.D{{Key: "c_id", Value: 1}})); err != nil {
		return 0, fmt.Errorf("customer by name: %w", err)
	}
	if len(rows) == 0 {
		return 0, fmt.Errorf("customer by name: %w", errNoDoc)
	}
	return rows[(len(rows)-1)/2].ID, nil
}

// payment is clause 2.5: 85% of customers pay at their home warehouse, 60%
// are found by last name.
func (t *Terminal) payment(x *tx) error {
	d := t.r.Between(1, g.DistrictsPerWarehouse)
	cw, cd := t.w, d
	if t.cfg.Warehouses > 1 && t.r.Between(1, 100) > 85 {
		cw, cd = t.otherWarehouse(), t.r.Between(1, g.DistrictsPerWarehouse)
	}
	amt := money(t.r.Between(100, 500000), 2)
	var wh, dist bson.M
	if err := t.counter(x, t.db.Collection(cWarehouse), byID(warehouseID(t.w)), bson.D{{Key: "w_ytd", Value: amt}},
		"w_ytd", false, &wh); err != nil {
		return fmt.Errorf("warehouse: %w", err)
	}
	if err := t.counter(x, t.db.Collection(cDistrict), byID(districtID(t.w, d)), bson.D{{Key: "d_ytd", Value: amt}},
		"d_ytd", false, &dist); err != nil {
		return fmt.Errorf("district: %w", err)
	}
	c := t.r.NURand(1023, g.CID, 1, t.cfg.Scale.Customers)
	if t.r.Between(1, 100) <= 60 {
		var err error
		if c, err = t.customerByName(x, cw, cd); err != nil {
			return err
		}
	}
	key := byID(customerID(cw, cd, c))
	var cust bson.M
	if err := x.find(t.db.Collection(cCustomer), key, &cust); err != nil {
		return fmt.Errorf("customer: %w", err)
	}
	update := bson.D{{Key: "$inc", Value: bson.D{{Key: "c_balance", Value: -amt}, {Key: "c_ytd_payment", Value: amt},
		{Key: "c_payment_cnt", Value: 1}}}}
	if cust["c_credit"] == "BC" {
		data, _ := cust["c_data"].(string)
		nd := fmt.Sprintf("%d %d %d %d %d %.2f | %s", c, cd, cw, d, t.w, amt, data)
		update = append(update, bson.E{Key: "$set", Value: bson.D{{Key: "c_data", Value: nd[:min(len(nd), 500)]}}})
	}
	if _, err := x.update(t.db.Collection(cCustomer), key, update); err != nil {
		return fmt.Errorf("customer update: %w", err)
	}
	wn, _ := wh["w_name"].(string)
	dn, _ := dist["d_name"].(string)
	return x.insert(t.db.Collection(cHistory), bson.D{{Key: "h_c_id", Value: c}, {Key: "h_c_d_id", Value: cd},
		{Key: "h_c_w_id", Value: cw}, {Key: "h_d_id", Value: d}, {Key: "h_w_id", Value: t.w}, {Key: "h_date", Value: now()},
		{Key: "h_amount", Value: amt}, {Key: "h_data", Value: wn + "    " + dn}})
}

// orderStatus is clause 2.6: a customer's last order and its lines.
func (t *Terminal) orderStatus(x *tx) error {
	d := t.r.Between(1, g.DistrictsPerWarehouse)
	c := t.r.NURand(1023, g.CID, 1, t.cfg.Scale.Customers)
	if t.r.Between(1, 100) <= 60 {
		var err error
		if c, err = t.customerByName(x, t.w, d); err != nil {
			return err
		}
	}
	var cust, order bson.M
	if err := x.find(t.db.Collection(cCustomer), byID(customerID(t.w, d, c)),
		&cust, options.FindOne().SetProjection(bson.D{{Key: "c_balance", Value: 1}, {Key: "c_first", Value: 1},
			{Key: "c_middle", Value: 1}, {Key: "c_last", Value: 1}})); err != nil {
		return fmt.Errorf("customer: %w", err)
	}
	err := x.find(t.db.Collection(cOrders), bson.D{{Key: "o_w_id", Value: t.w}, {Key: "o_d_id", Value: d}, {Key: "o_c_id", Value: c}},
		&order, options.FindOne().SetSort(bson.D{{Key: "o_id", Value: -1}}))
	if errors.Is(err, errNoDoc) {
		return nil // a customer may have no order yet
	}
	if err != nil {
		return fmt.Errorf("last order: %w", err)
	}
	if t.cfg.Denormalize {
		return nil // the lines came embedded in the order
	}
	_, _, err = t.lines(x, d, int(num(order["o_id"])), int(num(order["o_ol_cnt"])), nil)
	return err
}

// lines reads (or with set, updates and reads back) an order's lines in
// order_line, one lookup by _id each, and returns their items and the sum
// of their amounts.
func (t *Terminal) lines(x *tx, d, o, n int, set bson.D) ([]int, float64, error) {
	var items []int
	var sum float64
	for k := 1; k <= n; k++ {
		var l struct {
			Item   int     `bson:"ol_i_id"`
			Amount float64 `bson:"ol_amount"`
		}
		var err error
		if set != nil && t.cfg.FindAndModify {
			err = x.modify(t.db.Collection(cOrderLine), byID(lineID(t.w, d, o, k)), bson.D{{Key: "$set", Value: set}}, false, &l)
		} else {
			err = x.find(t.db.Collection(cOrderLine), byID(lineID(t.w, d, o, k)), &l)
			if err == nil && set != nil {
				_, err = x.update(t.db.Collection(cOrderLine), byID(lineID(t.w, d, o, k)), bson.D{{Key: "$set", Value: set}})
			}
		}
		if err != nil {
			return nil, 0, fmt.Errorf("order line (%d, %d, %d, %d): %w", t.w, d, o, k, err)
		}
		items = append(items, l.Item)
		sum += l.Amount
	}
	return items, sum, nil
}
