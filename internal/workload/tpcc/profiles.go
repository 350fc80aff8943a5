package tpcc

import (
	"fmt"
	"slices"
)

// This file is TPC-C's five transaction profiles (new-order, payment, order-
// status, delivery, stock-level), each in one database transaction.

// otherWarehouse is a warehouse other than w, uniformly.
func (t *terminal) otherWarehouse() int {
	o := t.r.Between(1, t.warehouses-1)
	if o >= t.w {
		o++
	}
	return o
}

// newOrder is clause 2.4: an order of 5 to 15 lines, 1% of them for an
// unused item, which rolls the transaction back.
func (t *terminal) newOrder(x *tx) error {
	s := &t.st
	d := t.r.Between(1, districtsPerWarehouse)
	c := t.r.NURand(1023, cID, 1, t.sc.Customers)
	type line struct{ item, supply, qty int }
	lines := make([]line, t.r.Between(5, 15))
	allLocal := 1
	for i := range lines {
		lines[i] = line{item: t.r.NURand(8191, cItem, 1, t.sc.Items), supply: t.w, qty: t.r.Between(1, 10)}
		if t.warehouses > 1 && t.r.Between(1, 100) == 1 {
			lines[i].supply, allLocal = t.otherWarehouse(), 0
		}
	}
	if t.r.Between(1, 100) == 1 {
		lines[len(lines)-1].item = t.sc.Items + 1
	}
	// Stock rows are locked in one order everywhere, so two New-Orders
	// cannot deadlock on them; the unused item stays last in its warehouse.
	slices.SortStableFunc(lines, func(a, b line) int {
		if a.supply != b.supply {
			return a.supply - b.supply
		}
		return a.item - b.item
	})
	if _, err := one(x.values(s.noCustomer, t.w, d, c)); err != nil {
		return err
	}
	if _, err := one(x.values(s.noWarehouse, t.w)); err != nil {
		return err
	}
	dist, err := one(x.values(s.noDistrict, t.w, d))
	if err != nil {
		return err
	}
	o := atoi(dist[0])
	if _, err := x.exec(s.noDistrictNext, t.w, d); err != nil {
		return err
	}
	if _, err := x.exec(s.noOrder, o, d, t.w, c, now(), len(lines), allLocal); err != nil {
		return err
	}
	if _, err := x.exec(s.noNewOrder, o, d, t.w); err != nil {
		return err
	}
	for i, l := range lines {
		it, err := x.values(s.noItem, l.item)
		if err != nil {
			return err
		}
		if len(it) == 0 {
			return errRollback
		}
		stock, err := one(x.values(s.noStock[d-1], l.item, l.supply))
		if err != nil {
			return err
		}
		q := atoi(stock[0])
		if q >= l.qty+10 {
			q -= l.qty
		} else {
			q += 91 - l.qty
		}
		remote := 0
		if l.supply != t.w {
			remote = 1
		}
		if _, err := x.exec(s.noUpdateStock, q, l.qty, remote, l.item, l.supply); err != nil {
			return err
		}
		if _, err := x.exec(s.noLine, o, d, t.w, i+1, l.item, l.supply, l.qty, fixed(l.qty*cents(it[0][0]), 2), stock[2]); err != nil {
			return err
		}
	}
	x.t.Rows = 1
	return nil
}

// customerByName is clause 2.5.2.2's selection by last name: the customer
// at position ceil(n/2) of those with the name, ordered by first name.
func (t *terminal) customerByName(x *tx, w, d int) (int, error) {
	rows, err := x.values(t.st.byName, w, d, lastName(t.r.NURand(255, cRun, 0, t.sc.LastNames())))
	if err != nil {
		return 0, err
	}
	if len(rows) == 0 {
		return 0, errNoRow
	}
	return atoi(rows[(len(rows)-1)/2][0]), nil
}

// payment is clause 2.5: 85% of customers pay at their home warehouse, 60%
// are found by last name.
func (t *terminal) payment(x *tx) error {
	s := &t.st
	d := t.r.Between(1, districtsPerWarehouse)
	cw, cd := t.w, d
	if t.warehouses > 1 && t.r.Between(1, 100) > 85 {
		cw, cd = t.otherWarehouse(), t.r.Between(1, districtsPerWarehouse)
	}
	amount := t.r.Between(100, 500000)
	amt := fixed(amount, 2)
	if _, err := x.exec(s.payWarehouseYTD, amt, t.w); err != nil {
		return err
	}
	wh, err := one(x.values(s.payWarehouse, t.w))
	if err != nil {
		return err
	}
	if _, err := x.exec(s.payDistrictYTD, amt, t.w, d); err != nil {
		return err
	}
	di, err := one(x.values(s.payDistrict, t.w, d))
	if err != nil {
		return err
	}
	c := t.r.NURand(1023, cID, 1, t.sc.Customers)
	if t.r.Between(1, 100) <= 60 {
		if c, err = t.customerByName(x, cw, cd); err != nil {
			return err
		}
	}
	cu, err := one(x.values(s.payCustomer, cw, cd, c))
	if err != nil {
		return err
	}
	if cu[9] == "BC" {
		data, err := one(x.values(s.payCustomerData, cw, cd, c))
		if err != nil {
			return err
		}
		nd := fmt.Sprintf("%d %d %d %d %d %s | %s", c, cd, cw, d, t.w, amt, data[0])
		if _, err := x.exec(s.payBalanceData, amt, amt, nd[:min(len(nd), 500)], cw, cd, c); err != nil {
			return err
		}
	} else if _, err := x.exec(s.payBalance, amt, amt, cw, cd, c); err != nil {
		return err
	}
	_, err = x.exec(s.payHistory, c, cd, cw, d, t.w, now(), amt, wh[5]+"    "+di[5])
	return err
}

// orderStatus is clause 2.6: a customer's last order and its lines.
func (t *terminal) orderStatus(x *tx) error {
	s := &t.st
	d := t.r.Between(1, districtsPerWarehouse)
	c := t.r.NURand(1023, cID, 1, t.sc.Customers)
	var err error
	if t.r.Between(1, 100) <= 60 {
		if c, err = t.customerByName(x, t.w, d); err != nil {
			return err
		}
	}
	if _, err := one(x.values(s.osCustomer, t.w, d, c)); err != nil {
		return err
	}
	o, err := x.values(s.osLastOrder, t.w, d, c)
	if err != nil || len(o) == 0 {
		return err // a customer may have no order yet
	}
	_, err = x.values(s.osLines, t.w, d, atoi(o[0][0]))
	return err
}

// delivery is clause 2.7: the oldest undelivered order of each district of
// the warehouse, in one transaction (as harnesses run it, not queued).
func (t *terminal) delivery(x *tx) error {
	s := &t.st
	carrier := t.r.Between(1, 10)
	when := now()
	for d := 1; d <= districtsPerWarehouse; d++ {
		no, err := x.values(s.dlOldest, t.w, d)
		if err != nil {
			return err
		}
		if len(no) == 0 {
			continue // none left in this district
		}
		o := atoi(no[0][0])
		if n, err := x.exec(s.dlDelete, t.w, d, o); err != nil || n == 0 {
			if err != nil {
				return err
			}
			continue // another terminal delivered it
		}
		or, err := one(x.values(s.dlOrderCustomer, t.w, d, o))
		if err != nil {
			return err
		}
		if _, err := x.exec(s.dlCarrier, carrier, t.w, d, o); err != nil {
			return err
		}
		if _, err := x.exec(s.dlLineDate, when, t.w, d, o); err != nil {
			return err
		}
		sum, err := one(x.values(s.dlLineSum, t.w, d, o))
		if err != nil {
			return err
		}
		if _, err := x.exec(s.dlCustomer, fixed(cents(sum[0]), 2), t.w, d, atoi(or[0])); err != nil {
			return err
		}
	}
	return nil
}

// stockLevel is clause 2.8: distinct items of the district's last 20
// orders whose stock is below a threshold of 10 to 20.
func (t *terminal) stockLevel(x *tx) error {
	s := &t.st
	next, err := one(x.values(s.slNextOrder, t.w, t.district))
	if err != nil {
		return err
	}
	o := atoi(next[0])
	_, err = one(x.values(s.slLowStock, t.w, t.district, o, o-20, t.w, t.r.Between(10, 20)))
	return err
}
