package tpccdoc

import (
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	g "benchlab/internal/workload/tpcc/tpccgen"
)

// oldestNewOrder takes district d's oldest undelivered order: one
// findAndModify that deletes it, or a find and a delete of what it found;
// 0 when none is left or another terminal took it first.
func (t *Terminal) oldestNewOrder(x *tx, d int) (int, error) {
	filter := bson.D{{Key: "no_w_id", Value: t.w}, {Key: "no_d_id", Value: d}}
	sort := bson.D{{Key: "no_o_id", Value: 1}}
	var no bson.M
	x.n++
	var err error
	if t.cfg.FindAndModify {
		err = t.db.Collection(cNewOrder).FindOneAndDelete(x.ctx, filter, options.FindOneAndDelete().SetSort(sort)).Decode(&no)
	} else {
		err = t.db.Collection(cNewOrder).FindOne(x.ctx, filter, options.FindOne().SetSort(sort)).Decode(&no)
	}
	if errors.Is(err, mongo.ErrNoDocuments) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	o := int(num(no["no_o_id"]))
	if t.cfg.FindAndModify {
		return o, nil
	}
	x.n++
	res, err := t.db.Collection(cNewOrder).DeleteOne(x.ctx, append(filter, bson.E{Key: "no_o_id", Value: o}))
	if err != nil || res.DeletedCount == 0 {
		return 0, err
	}
	return o, nil
}

// delivery is clause 2.7: the oldest undelivered order of each district of
// the warehouse, in one go (as harnesses run it, not queued).
func (t *Terminal) delivery(x *tx) error {
	carrier := t.r.Between(1, 10)
	when := now()
	for d := 1; d <= g.DistrictsPerWarehouse; d++ {
		o, err := t.oldestNewOrder(x, d)
		if err != nil {
			return fmt.Errorf("new order: %w", err)
		}
		if o == 0 {
			continue
		}
		key := byID(orderID(t.w, d, o))
		var order struct {
			C     int      `bson:"o_c_id"`
			Count int      `bson:"o_ol_cnt"`
			Lines []bson.M `bson:"order_line"`
		}
		if err := x.find(t.db.Collection(cOrders), key, &order); err != nil {
			return fmt.Errorf("order: %w", err)
		}
		set := bson.D{{Key: "o_carrier_id", Value: carrier}}
		var sum float64
		if t.cfg.Denormalize {
			for _, l := range order.Lines {
				l["ol_delivery_d"] = when
				sum += num(l["ol_amount"])
			}
			set = append(set, bson.E{Key: "order_line", Value: order.Lines})
		}
		if _, err := x.update(t.db.Collection(cOrders), key, bson.D{{Key: "$set", Value: set}}); err != nil {
			return fmt.Errorf("order update: %w", err)
		}
		if !t.cfg.Denormalize {
			if _, sum, err = t.lines(x, d, o, order.Count, bson.D{{Key: "ol_delivery_d", Value: when}}); err != nil {
				return err
			}
		}
		if _, err := x.update(t.db.Collection(cCustomer), byID(customerID(t.w, d, order.C)),
			bson.D{{Key: "$inc", Value: bson.D{{Key: "c_balance", Value: sum}, {Key: "c_delivery_cnt", Value: 1}}}}); err != nil {
			return fmt.Errorf("customer: %w", err)
		}
	}
	return nil
}

// stockLevel is clause 2.8: distinct items of the district's last 20
// orders whose stock is below a threshold of 10 to 20. An order another
// terminal is still writing (its number taken, the order or its lines not
// yet there: no transactions) is left out.
func (t *Terminal) stockLevel(x *tx) error {
	var dist bson.M
	if err := x.find(t.db.Collection(cDistrict), byID(districtID(t.w, t.district)), &dist,
		options.FindOne().SetProjection(bson.D{{Key: "d_next_o_id", Value: 1}})); err != nil {
		return fmt.Errorf("district: %w", err)
	}
	next := int(num(dist["d_next_o_id"]))
	threshold := t.r.Between(10, 20)
	seen := map[int]bool{}
	for o := next - 20; o < next; o++ {
		var order struct {
			Count int `bson:"o_ol_cnt"`
			Lines []struct {
				Item int `bson:"ol_i_id"`
			} `bson:"order_line"`
		}
		err := x.find(t.db.Collection(cOrders), byID(orderID(t.w, t.district, o)), &order,
			options.FindOne().SetProjection(bson.D{{Key: "o_ol_cnt", Value: 1}, {Key: "order_line.ol_i_id", Value: 1}}))
		if errors.Is(err, errNoDoc) {
			continue
		}
		if err != nil {
			return fmt.Errorf("order: %w", err)
		}
		items := make([]int, 0, order.Count)
		for _, l := range order.Lines {
			items = append(items, l.Item)
		}
		if !t.cfg.Denormalize {
			if items, _, err = t.lines(x, t.district, o, order.Count, nil); errors.Is(err, errNoDoc) {
				continue
			} else if err != nil {
				return err
			}
		}
		for _, i := range items {
			seen[i] = true
		}
	}
	low := 0
	for i := range seen {
		var s struct {
			Quantity int `bson:"s_quantity"`
		}
		if err := x.find(t.db.Collection(cStock), byID(stockID(t.w, i)), &s,
			options.FindOne().SetProjection(bson.D{{Key: "s_quantity", Value: 1}})); err != nil {
			return fmt.Errorf("stock: %w", err)
		}
		if s.Quantity < threshold {
			low++
		}
	}
	return nil
}
