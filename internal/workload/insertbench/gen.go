package insertbench

import (
	"encoding/base64"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"
)

// Value ranges of docs/method.md 1.3 (iibench.py --cashregisters, --products,
// --customers, --max_price) and the data column's length (np.sh passes
// data_length_min 10 and data_length_max 20, data_random_pct 50).
const (
	cashRegisters  = 1000
	products       = 10000
	customers      = 100000
	maxPrice       = 500
	dataLengthMin  = 10
	dataLengthMax  = 20
	dataRandomPct  = 50
	randomPoolSize = 4 << 20 // bytes of random data encoded once per process
)

var (
	poolOnce sync.Once
	pool     string
)

// randomPool is the base64 encoding of 4 MiB of random bytes, made once; the
// random part of each data value is cut from it at a random offset.
func randomPool() string {
	poolOnce.Do(func() {
		r := rand.New(rand.NewPCG(0x1b5eed, 0x5eed1b))
		b := make([]byte, randomPoolSize)
		for i := 0; i+8 <= len(b); i += 8 {
			v := r.Uint64()
			for j := 0; j < 8; j++ {
				b[i+j] = byte(v >> (8 * j))
			}
		}
		pool = base64.StdEncoding.EncodeToString(b)
	})
	return pool
}

// rowGen renders the rows of multi-row INSERTs for one client.
type rowGen struct {
	r    *rand.Rand
	pool string
	buf  []byte
}

func newRowGen(seed uint64) *rowGen {
	return &rowGen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), pool: randomPool()}
}

// insert renders INSERT prefix + n rows. Every row of the batch has the same
// timestamp, the client's local time (docs/method.md 1.3); price is written with
// two decimals into the int column, as the original client does.
func (g *rowGen) insert(prefix string, n int, now time.Time) string {
	b := append(g.buf[:0], prefix...)
	ts := now.Format("2006-01-02 15:04:05")
	for i := 0; i < n; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "('"...)
		b = append(b, ts...)
		b = append(b, "',"...)
		b = strconv.AppendInt(b, g.r.Int64N(cashRegisters), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, g.r.Int64N(customers), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, g.r.Int64N(products), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, g.r.Int64N(maxPrice), 10)
		b = append(b, ".00,'"...)
		b = g.data(b)
		b = append(b, "')"...)
	}
	g.buf = b
	return string(b)
}

// data appends one data value: length uniform in [10, 20], of which
// int(len * 0.75 * 50/100) trailing characters are random and the rest 'a'.
func (g *rowGen) data(b []byte) []byte {
	n := dataLengthMin + g.r.IntN(dataLengthMax-dataLengthMin+1)
	rnd := int(float64(n) * 0.75 * dataRandomPct / 100)
	for i := 0; i < n-rnd; i++ {
		b = append(b, 'a')
	}
	off := g.r.IntN(len(g.pool) - rnd)
	return append(b, g.pool[off:off+rnd]...)
}
