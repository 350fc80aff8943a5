package sqlbind

import "testing"

func TestNumbered(t *testing.T) {
	for in, want := range map[string]string{
		"SELECT 1":                     "SELECT 1",
		"SELECT c FROM t WHERE id = ?": "SELECT c FROM t WHERE id = $1",
		"INSERT INTO t VALUES (?,?,?)": "INSERT INTO t VALUES ($1,$2,$3)",
		"UPDATE t SET a = ? WHERE b IN (?" + ",?,?,?,?,?,?,?,?,?)": "UPDATE t SET a = $1 WHERE b IN ($2,$3,$4,$5,$6,$7,$8,$9,$10,$11)",
	} {
		if got := Numbered(in); got != want {
			t.Errorf("Numbered(%q) = %q; want %q", in, got, want)
		}
	}
}
