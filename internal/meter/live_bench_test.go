package meter

import (
	"testing"
	"time"
)

func BenchmarkLiveRecord(b *testing.B) {
	var l Live
	for i := 0; i < b.N; i++ {
		l.Record(time.Duration(i&1023)*time.Microsecond, 1, 1, false)
	}
}
