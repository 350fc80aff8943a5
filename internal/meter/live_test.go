package meter

import (
	"sync"
	"testing"
	"time"
)

// TestLiveDrains checks that each drain holds exactly the operations recorded
// since the previous one, and that a drain racing the writer loses nothing.
func TestLiveDrains(t *testing.T) {
	var l Live
	var w Window
	l.Record(5*time.Microsecond, 2, 1, false)
	l.Record(7*time.Millisecond, 1, 0, true)
	l.DrainInto(&w)
	// The failed operation is an error with its statement, not an event:
	// no rows, no latency.
	if w.Events != 1 || w.Statements != 3 || w.Rows != 1 || w.Errors != 1 || w.Max != 5*time.Microsecond {
		t.Fatalf("first drain %+v", w)
	}
	if q := w.Quantile(0.5); q < 4*time.Microsecond || q > 6*time.Microsecond {
		t.Errorf("median %s, want about 5us", q)
	}
	var w2 Window
	l.DrainInto(&w2)
	if w2.Events != 0 || w2.Statements != 0 || w2.Max != 0 || w2.Quantile(0.5) != 0 {
		t.Fatalf("a drain with nothing recorded since: %+v", w2.Events)
	}
	l.Record(time.Second, 1, 4, false)
	var w3 Window
	l.DrainInto(&w3)
	if w3.Events != 1 || w3.Rows != 4 || w3.Quantile(1) != time.Second {
		t.Errorf("third drain: events %d rows %d max-quantile %s", w3.Events, w3.Rows, w3.Quantile(1))
	}

	// One writer, one drainer at the same time: the drained sums are the
	// recorded ones.
	var live Live
	var total Window
	const n = 200000
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < n; i++ {
			live.Record(time.Duration(i%1000)*time.Microsecond, 3, 1, i%7 == 0)
		}
	}()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		live.DrainInto(&total)
	}
	var buckets int64
	for _, c := range total.Buckets {
		buckets += c
	}
	failed := int64((n + 6) / 7)
	if total.Events != n-failed || total.Statements != 3*n || total.Rows != n-failed || buckets != n-failed || total.Errors != failed {
		t.Errorf("drained events %d statements %d rows %d buckets %d errors %d; recorded %d ops", total.Events,
			total.Statements, total.Rows, buckets, total.Errors, n)
	}
}

// TestLiveRecordBatch checks that a batch counts as its operations recorded
// one by one would: events, statements, rows, one error (the last operation,
// which is no event), the latency of each done one in the buckets, and the
// largest as the maximum.
func TestLiveRecordBatch(t *testing.T) {
	var one, batch Live
	lat := []int64{3000, 5000, 2_000_000, 4000}
	for i, ns := range lat {
		failed := i == len(lat)-1
		rows := int64(1)
		if failed {
			rows = 0
		}
		one.Record(time.Duration(ns), 1, rows, failed)
	}
	batch.RecordBatch(lat, 4, 3, true)
	var a, b Window
	one.DrainInto(&a)
	batch.DrainInto(&b)
	if a != b {
		t.Fatalf("batch drained %+v\nwant as one by one %+v", b, a)
	}
	if b.Events != 3 || b.Errors != 1 || b.Max != 2*time.Millisecond {
		t.Errorf("events %d errors %d max %s", b.Events, b.Errors, b.Max)
	}
}
