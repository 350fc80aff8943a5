package tpcc

import (
	"context"
	"fmt"
	"strconv"

	"benchlab/internal/engine"
	"benchlab/internal/workload"
	"benchlab/internal/workload/tpcc/tpccgen"
)

// districtsPerWarehouse is clause 4.3.3.1's; the other sizes of a
// warehouse follow the scale factor (tpccgen.Scale).
const districtsPerWarehouse = tpccgen.DistrictsPerWarehouse

// loadBatch is the rows per multi-row INSERT.
const loadBatch = 500

// loader writes the initial population with multi-row INSERTs of literals
// (every generated string is alphanumeric, so quoting is enough).
type loader struct {
	conn engine.Conn
	r    *rnd
	now  string
	t    *workload.Tally
	// sc is the population per warehouse (tpccgen.ScaleOf(1): the full one).
	sc tpccgen.Scale
}

// batch accumulates the rows of one INSERT.
type batch struct {
	l    *loader
	head string
	buf  []byte
	n    int
}

func (l *loader) batch(table, cols string) *batch {
	return &batch{l: l, head: "INSERT INTO " + table + " (" + cols + ") VALUES "}
}

// row adds one row of SQL literals, sending the batch when it is full.
func (b *batch) row(ctx context.Context, vals ...string) error {
	if b.n == 0 {
		b.buf = append(b.buf[:0], b.head...)
	} else {
		b.buf = append(b.buf, ',')
	}
	b.buf = append(b.buf, '(')
	for i, v := range vals {
		if i > 0 {
			b.buf = append(b.buf, ',')
		}
		b.buf = append(b.buf, v...)
	}
	b.buf = append(b.buf, ')')
	if b.n++; b.n == loadBatch {
		return b.flush(ctx)
	}
	return nil
}

func (b *batch) flush(ctx context.Context) error {
	if b.n == 0 {
		return nil
	}
	got, err := b.l.conn.Exec(ctx, string(b.buf))
	if err != nil {
		return fmt.Errorf("%s...: %w", b.head, err)
	}
	b.l.t.Statements++
	b.l.t.Rows += got
	b.n = 0
	return nil
}

func q(s string) string { return "'" + s + "'" }
func n(i int) string    { return strconv.Itoa(i) }

func (l *loader) all(ctx context.Context, warehouses int) error {
	if err := l.items(ctx); err != nil {
		return err
	}
	for w := 1; w <= warehouses; w++ {
		if err := l.warehouse(ctx, w); err != nil {
			return fmt.Errorf("warehouse %d: %w", w, err)
		}
	}
	return nil
}

func (l *loader) items(ctx context.Context) error {
	b := l.batch("item", "i_id, i_im_id, i_name, i_price, i_data")
	for i := 1; i <= l.sc.Items; i++ {
		if err := b.row(ctx, n(i), n(l.r.Between(1, 10000)), q(l.r.AString(14, 24)), fixed(l.r.Between(100, 10000), 2),
			q(l.r.Data())); err != nil {
			return err
		}
	}
	return b.flush(ctx)
}

// address is street 1, street 2, city, state and zip as literals.
func (l *loader) address() []string {
	r := l.r
	return []string{q(r.AString(10, 20)), q(r.AString(10, 20)), q(r.AString(10, 20)), q(r.AString(2, 2)), q(r.Zip())}
}

func (l *loader) warehouse(ctx context.Context, w int) error {
	r := l.r
	wh := l.batch("warehouse", "w_id, w_name, w_street_1, w_street_2, w_city, w_state, w_zip, w_tax, w_ytd")
	if err := wh.row(ctx, append(append([]string{n(w), q(r.AString(6, 10))}, l.address()...),
		fixed(r.Between(0, 2000), 4), "300000.00")...); err != nil {
		return err
	}
	if err := wh.flush(ctx); err != nil {
		return err
	}
	st := l.batch("stock", "s_i_id, s_w_id, s_quantity, s_dist_01, s_dist_02, s_dist_03, s_dist_04, s_dist_05, "+
		"s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10, s_ytd, s_order_cnt, s_remote_cnt, s_data")
	for i := 1; i <= l.sc.Items; i++ {
		vals := []string{n(i), n(w), n(r.Between(10, 100))}
		for range 10 {
			vals = append(vals, q(r.AString(24, 24)))
		}
		if err := st.row(ctx, append(vals, "0", "0", "0", q(r.Data()))...); err != nil {
			return err
		}
	}
	if err := st.flush(ctx); err != nil {
		return err
	}
	ds := l.batch("district", "d_id, d_w_id, d_name, d_street_1, d_street_2, d_city, d_state, d_zip, d_tax, d_ytd, d_next_o_id")
	for d := 1; d <= districtsPerWarehouse; d++ {
		if err := ds.row(ctx, append(append([]string{n(d), n(w), q(r.AString(6, 10))}, l.address()...),
			fixed(r.Between(0, 2000), 4), "30000.00", n(l.sc.Orders()+1))...); err != nil {
			return err
		}
	}
	if err := ds.flush(ctx); err != nil {
		return err
	}
	for d := 1; d <= districtsPerWarehouse; d++ {
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
	cu := l.batch("customer", "c_id, c_d_id, c_w_id, c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, "+
		"c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance, c_ytd_payment, c_payment_cnt, "+
		"c_delivery_cnt, c_data")
	hi := l.batch("history", "h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data")
	for c := 1; c <= l.sc.Customers; c++ {
		last := c - 1
		if c > 1000 {
			last = r.NURand(255, cLoad, 0, l.sc.LastNames())
		}
		credit := "GC"
		if r.IntN(10) == 0 {
			credit = "BC"
		}
		vals := append([]string{n(c), n(d), n(w), q(r.AString(8, 16)), q("OE"), q(lastName(last))}, l.address()...)
		vals = append(vals, q(r.NString(16)), q(l.now), q(credit), "50000.00", fixed(r.Between(0, 5000), 4),
			"-10.00", "10.00", "1", "0", q(r.AString(300, 500)))
		if err := cu.row(ctx, vals...); err != nil {
			return err
		}
		if err := hi.row(ctx, n(c), n(d), n(w), n(d), n(w), q(l.now), "10.00", q(r.AString(12, 24))); err != nil {
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
	// o_c_id is a random permutation of the customer ids.
	cids := r.Perm(l.sc.Customers)
	or := l.batch("oorder", "o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local")
	ol := l.batch("order_line", "ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, "+
		"ol_quantity, ol_amount, ol_dist_info")
	no := l.batch("new_order", "no_o_id, no_d_id, no_w_id")
	first := l.sc.FirstNewOrder()
	for o := 1; o <= l.sc.Orders(); o++ {
		carrier, delivered := n(r.Between(1, 10)), q(l.now)
		if o >= first {
			carrier, delivered = "NULL", "NULL"
		}
		lines := r.Between(5, 15)
		if err := or.row(ctx, n(o), n(d), n(w), n(cids[o-1]+1), q(l.now), carrier, n(lines), "1"); err != nil {
			return err
		}
		for k := 1; k <= lines; k++ {
			amount := "0.00"
			if o >= first {
				amount = fixed(r.Between(1, 999999), 2)
			}
			if err := ol.row(ctx, n(o), n(d), n(w), n(k), n(r.Between(1, l.sc.Items)), n(w), delivered, "5", amount,
				q(r.AString(24, 24))); err != nil {
				return err
			}
		}
		if o >= first {
			if err := no.row(ctx, n(o), n(d), n(w)); err != nil {
				return err
			}
		}
	}
	for _, b := range []*batch{or, ol, no} {
		if err := b.flush(ctx); err != nil {
			return err
		}
	}
	return nil
}
