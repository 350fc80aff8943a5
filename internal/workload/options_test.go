package workload

import (
	"errors"
	"maps"
	"slices"
	"testing"
)

// TestSelectTests resolves names and families, and names the field and the
// known tests for an unknown name.
func TestSelectTests(t *testing.T) {
	tests := []Test{{Name: "a_range=10", Family: "a"}, {Name: "a_range=100", Family: "a"}, {Name: "b", Family: "b"}}
	sel, err := SelectTests([]string{"a"}, tests)
	if err != nil || !slices.Equal(slices.Sorted(maps.Keys(sel)), []string{"a_range=10", "a_range=100"}) {
		t.Errorf("family: %v %v", sel, err)
	}
	if sel, err := SelectTests(nil, tests); sel != nil || err != nil {
		t.Errorf("empty selection: %v %v, want nil (every test)", sel, err)
	}
	_, err = SelectTests([]string{"c"}, tests)
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "tests" || fe.Value != "c" ||
		err.Error() != `workload.tests: unknown test "c"; known: a, a_range=10, a_range=100, b` {
		t.Errorf("unknown: %v", err)
	}
}
