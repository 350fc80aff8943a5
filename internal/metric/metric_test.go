package metric

import (
	"testing"

	"benchlab/internal/analysis"
)

// TestRegistry finds a registered metric by name, falls back to QPS for an
// unknown name, gives a metric without a series the statements' one, and
// refuses a duplicate.
func TestRegistry(t *testing.T) {
	m := Register(Metric{Name: "test_rows", Direction: analysis.LowerIsBetter,
		Value: func(c Counts) float64 { return PerSecond(c.Rows, c.Seconds) }})
	if got, ok := Lookup("test_rows"); !ok || got.Direction != analysis.LowerIsBetter {
		t.Fatalf("lookup: %+v %v", got, ok)
	}
	c := Counts{Seconds: 2, Statements: 10, Rows: 4}
	if v := Of("test_rows").Value(c); v != 2 {
		t.Errorf("value %v, want 2 rows/s", v)
	}
	if v := m.Series(c); v != 5 || m.SeriesUnit != "statements" {
		t.Errorf("default series %v %q, want 5 statements/s", v, m.SeriesUnit)
	}
	if Of("no such metric").Name != QPS.Name {
		t.Error("an unknown name must read as qps")
	}
	defer func() {
		if recover() == nil {
			t.Error("a duplicate registration did not panic")
		}
	}()
	Register(Metric{Name: "test_rows", Value: m.Value})
}
