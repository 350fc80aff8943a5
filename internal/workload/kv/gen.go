package kv

import "math/rand/v2"

// EncodeKey writes key number v into dst (len(dst) is the key size) the way
// db_bench's GenerateKeyFromInt does without prefixes: the low min(size, 8)
// bytes of v big-endian, then ASCII '0' up to the key size. Keys therefore
// sort in numeric order.
func EncodeKey(dst []byte, v uint64) {
	n := min(len(dst), 8)
	for i := 0; i < n; i++ {
		dst[i] = byte(v >> (uint(n-i-1) * 8))
	}
	for i := n; i < len(dst); i++ {
		dst[i] = '0'
	}
}

// DecodeKey returns the key number of a key made by EncodeKey.
func DecodeKey(k []byte) uint64 {
	var v uint64
	for i := 0; i < min(len(k), 8); i++ {
		v = v<<8 | uint64(k[i])
	}
	return v
}

// parkMiller is the Lehmer generator of RocksDB's util/random.h (and
// LevelDB's): seed * 16807 mod 2^31-1. db_bench's value data comes from it
// with seed 301, so reproducing it makes values byte-identical.
type parkMiller struct{ seed uint32 }

func newParkMiller(s uint32) *parkMiller {
	s &= 0x7fffffff
	if s == 0 || s == 2147483647 {
		s = 1
	}
	return &parkMiller{seed: s}
}

func (r *parkMiller) next() uint32 {
	const m = 2147483647
	product := uint64(r.seed) * 16807
	// (product >> 31) + (product & m) computes product mod m without a
	// division, as RocksDB does.
	s := uint32((product >> 31) + (product & m))
	if s > m {
		s -= m
	}
	r.seed = s
	return s
}

func (r *parkMiller) uniform(n uint32) uint32 { return r.next() % n }

// ValueData is the block db_bench's RandomGenerator cuts values from: at
// least 1 MiB (or one value) made of 100-byte fragments, each a run of
// printable random characters of length 100·ratio repeated to fill the
// fragment, so that a value compresses to about ratio of its size.
func ValueData(ratio float64, valueSize int) []byte {
	rnd := newParkMiller(301)
	size := max(1<<20, valueSize)
	data := make([]byte, 0, size+100)
	const fragment = 100
	raw := max(int(fragment*ratio), 1)
	piece := make([]byte, raw)
	for len(data) < size {
		for i := range piece {
			piece[i] = byte(' ' + rnd.uniform(95))
		}
		for n := 0; n < fragment; n += raw {
			data = append(data, piece[:min(raw, fragment-n)]...)
		}
	}
	return data
}

// values hands out consecutive slices of a shared ValueData block, wrapping
// to the start when the next value would run past the end, as db_bench's
// RandomGenerator::Generate does. Each writer has its own.
type values struct {
	data []byte
	pos  int
}

func (g *values) next(n int) []byte {
	if g.pos+n > len(g.data) {
		g.pos = 0
	}
	g.pos += n
	return g.data[g.pos-n : g.pos]
}

// keys draws uniformly random key numbers below n, as db_bench's
// GetRandomKey does with its default distribution.
type keys struct {
	rng *rand.Rand
	n   uint64
}

func newKeys(seed uint64, n int64) keys {
	return keys{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), n: uint64(n)}
}

func (k keys) next() uint64 { return k.rng.Uint64N(k.n) }
