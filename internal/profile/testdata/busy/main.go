// Command busy spins on one CPU in spinHot for the seconds given as its
// argument (default 20): the process TestRecordBusyChild profiles.
package main

import (
	"os"
	"strconv"
	"time"
)

var sink uint64

//go:noinline
func spinHot(until time.Time) {
	x := uint64(1)
	for i := 0; ; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		if i%(1<<20) == 0 && time.Now().After(until) {
			break
		}
	}
	sink = x
}

func main() {
	secs := 20.0
	if len(os.Args) > 1 {
		if v, err := strconv.ParseFloat(os.Args[1], 64); err == nil {
			secs = v
		}
	}
	spinHot(time.Now().Add(time.Duration(secs * float64(time.Second))))
}
