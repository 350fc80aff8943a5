package dbbench

import "testing"

// TestParseSmallIngest reads the ingested bytes of a step that wrote under
// 5 MB, which the cumulative line prints as 0.00 GB: from the interval line
// when it spans the same writes, and not when it covers fewer.
func TestParseSmallIngest(t *testing.T) {
	const head = "fillseq      :       3.998 micros/op 250062 ops/sec 0.020 seconds 5000 operations;   97.7 MB/s\n"
	for _, c := range []struct {
		name, stats string
		want        int64
	}{
		{"one dump", "Cumulative writes: 5000 writes, 5000 keys, 5000 commit groups, 1.0 writes per commit group, ingest: 0.00 GB, 83.28 MB/s\n" +
			"Interval writes: 5000 writes, 5000 keys, 5000 commit groups, 1.0 writes per commit group, ingest: 2.06 MB, 83.28 MB/s\n",
			2160066 /* 2.06 MiB */},
		{"interval shorter", "Cumulative writes: 5000 writes, 5000 keys, 5000 commit groups, 1.0 writes per commit group, ingest: 0.00 GB, 83.28 MB/s\n" +
			"Interval writes: 1000 writes, 1000 keys, 1000 commit groups, 1.0 writes per commit group, ingest: 0.41 MB, 83.28 MB/s\n", 0},
		{"large", "Cumulative writes: 90000 writes, 90000 keys, 90000 commit groups, 1.0 writes per commit group, ingest: 0.06 GB, 83.28 MB/s\n" +
			"Interval writes: 90000 writes, 90000 keys, 90000 commit groups, 1.0 writes per commit group, ingest: 61.44 MB, 83.28 MB/s\n",
			64424509 /* 0.06 GiB */},
	} {
		_, st, err := Parse(head + c.stats)
		if err != nil {
			t.Fatal(err)
		}
		if st.IngestBytes != c.want {
			t.Errorf("%s: IngestBytes %d, want %d", c.name, st.IngestBytes, c.want)
		}
	}
}
