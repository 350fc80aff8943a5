package postgres

import (
	"reflect"
	"testing"
)

// TestTextRow checks that a row's raw values come back as strings, NULL
// (nil) and empty values as "", copied out of the message buffer (which
// pgx reuses for the next message), in two allocations whatever the row's
// width.
func TestTextRow(t *testing.T) {
	buf := []byte("42hello3.50")
	raw := [][]byte{buf[0:2], nil, buf[2:7], buf[7:7], buf[7:11]}
	want := []string{"42", "", "hello", "", "3.50"}
	got := textRow(raw)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("textRow = %q, want %q", got, want)
	}
	for i := range buf {
		buf[i] = 'x' // the next message overwrites the buffer
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after the buffer was reused: %q, want %q (the row must be a copy)", got, want)
	}
	if n := testing.AllocsPerRun(100, func() { textRow(raw) }); n != 2 {
		t.Errorf("%v allocations per row of %d columns, want 2", n, len(raw))
	}
	if got := textRow(nil); len(got) != 0 {
		t.Errorf("textRow(nil) = %q, want no columns", got)
	}
}
