package workload

// Size is what one run of a suite's plan writes, estimated from its params
// before anything runs: the plan uses the loads' rows for their time, and
// `benchlab run` compares the bytes with the free space of the data dirs'
// filesystem.
type Size struct {
	// Loads are the rows (or keys) each loading step writes, by step name
	// ("prepare", "fillseq", "l.i0").
	Loads map[string]int64
	// Bytes is the data's estimated size on disk at its largest during one
	// run: the load, its indexes, the growth under the write tests and the
	// write-ahead log.
	Bytes int64
	// Basis says how Bytes was estimated, in a few words naming the fields
	// that size it ("8 tables x 1000000 rows x ~500 B (table_size)").
	Basis string
}

// Rows is the sum of the loads' rows.
func (s Size) Rows() int64 {
	var n int64
	for _, r := range s.Loads {
		n += r
	}
	return n
}

// Sizer is a Suite that estimates, before anything runs, what a run of its
// plan writes.
type Sizer interface {
	Size(p Params) Size
}

// SizeOf returns suite's estimate for p, and false for suites that give
// none (custom SQL, connect).
func SizeOf(s Suite, p Params) (Size, bool) {
	z, ok := s.(Sizer)
	if !ok {
		return Size{}, false
	}
	return z.Size(p), true
}

// MaxRows is the most rows (or keys) one table may be sized to: ten
// billion, generous for any real experiment but finite, so that a typo of
// three extra zeros is refused at once instead of loading for days.
const MaxRows = 10_000_000_000
