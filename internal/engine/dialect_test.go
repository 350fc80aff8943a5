package engine

import (
	"errors"
	"testing"
)

// TestDialectCapabilities checks the clauses suites take from a dialect
// instead of testing its name.
func TestDialectCapabilities(t *testing.T) {
	for _, c := range []struct {
		d                   Dialect
		forUpdate, forceIdx string
		deleteLimit, alter  bool
	}{
		{SQLite, "", "", false, false},
		{Postgres, " FOR UPDATE", "", false, false},
		{MySQL, " FOR UPDATE", " FORCE INDEX (pi1_pdc)", true, true},
	} {
		if got := c.d.ForUpdate(); got != c.forUpdate {
			t.Errorf("%s ForUpdate() = %q, want %q", c.d.Name, got, c.forUpdate)
		}
		if got := c.d.ForceIndex("pi1_pdc"); got != c.forceIdx {
			t.Errorf("%s ForceIndex() = %q, want %q", c.d.Name, got, c.forceIdx)
		}
		if c.d.DeleteLimit != c.deleteLimit || c.d.AlterAddIndex != c.alter {
			t.Errorf("%s DeleteLimit %v AlterAddIndex %v, want %v %v", c.d.Name, c.d.DeleteLimit, c.d.AlterAddIndex, c.deleteLimit, c.alter)
		}
	}
	_, err := Spell("test", Dialect{Name: "oracle"}, map[string]string{"mysql": "x"})
	var ud *UnknownDialectError
	if !errors.As(err, &ud) || ud.Dialect != "oracle" {
		t.Errorf("Spell for an unknown dialect: %v", err)
	}
}
