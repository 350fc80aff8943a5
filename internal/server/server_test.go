package server

import (
	"strings"
	"testing"
)

func TestRedactDSN(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"postgres://bob:s3cret@db.example:5432/x?sslmode=disable", "postgres://bob:xxxxx@db.example:5432/x?sslmode=disable"},
		{"host=h user=bob password=s3cret dbname=x", "host=h user=bob password=xxxxx dbname=x"},
		{"host=h password='a b' dbname=x", "host=h password=xxxxx dbname=x"},
		{"bob:s3cret@tcp(127.0.0.1:3306)/sbtest", "bob:xxxxx@tcp(127.0.0.1:3306)/sbtest"},
		{"bob@tcp(127.0.0.1:3306)/sbtest", "bob@tcp(127.0.0.1:3306)/sbtest"},
		{"postgres://h/x", "postgres://h/x"},
	} {
		if got := RedactDSN(c.in); got != c.want || strings.Contains(got, "s3cret") {
			t.Errorf("RedactDSN(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := RedactIn("connect failed for s3cret", "s3cret"); strings.Contains(got, "s3cret") {
		t.Errorf("RedactIn left the secret: %q", got)
	}
}

func TestCheckCPUList(t *testing.T) {
	for _, ok := range []string{"0", "0-1", "0,2,4-5"} {
		if err := CheckCPUList(ok); err != nil {
			t.Errorf("CheckCPUList(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a", "3-1", "1,,2", "-1"} {
		if err := CheckCPUList(bad); err == nil {
			t.Errorf("CheckCPUList(%q) accepted", bad)
		}
	}
}

func TestVersionOrder(t *testing.T) {
	if !versionLess("12.22 (x)", "16.15 (x)") || !versionLess("9.6.10 (x)", "12.1 (x)") || versionLess("16.15 (x)", "16.2 (x)") {
		t.Error("versionLess orders versions as strings")
	}
}

func TestDropRedacted(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:secret@127.0.0.1:5432/db":          "postgres://u@127.0.0.1:5432/db",
		"host=127.0.0.1 user=u password=secret dbname=x": "host=127.0.0.1 user=u dbname=x",
		"u:secret@tcp(127.0.0.1:3306)/db":                "u@tcp(127.0.0.1:3306)/db",
		"postgres://u@127.0.0.1/db":                      "postgres://u@127.0.0.1/db",
	} {
		if got := DropRedacted(RedactDSN(in)); got != want {
			t.Errorf("DropRedacted(RedactDSN(%q)) = %q, want %q", in, got, want)
		}
	}
}
