package analysis

import (
	"fmt"
	"math"
)

// This file is the within-run variance of one run: the method of batch
// means over its 1-second series.

// Batch-means settings. A run's 1-second series is autocorrelated (a
// checkpoint or a compaction slows several seconds in a row), so the
// variance of its mean is not the variance of a second divided by the
// number of seconds. Grouping the seconds into batches and growing the
// batches until their means are nearly uncorrelated gives an honest
// variance of the mean (the method of batch means, Law and Kelton,
// "Simulation Modeling and Analysis", ch. 9).
const (
	// MinBatches is the fewest batches a variance is computed from; with
	// fewer the series is too short and no within-run variance is given.
	MinBatches = 8
	// MaxBatchLag1 is the largest lag-1 autocorrelation of the batch means
	// accepted as "nearly uncorrelated". Its standard error under
	// independence is about 1/sqrt(batches), 0.35 at 8 batches, so the check
	// catches strong correlation only; the batch size doubles until it holds.
	MaxBatchLag1 = 0.2
)

// BatchMeans is the within-run variation of one measured step, from its
// per-second series.
type BatchMeans struct {
	// Mean is the mean of the seconds used (the trailing seconds that do not
	// fill a batch are left out).
	Mean float64
	// Size is the batch size in seconds and Batches the number of batches.
	Size, Batches int
	// Lag1 is the lag-1 autocorrelation of the batch means at Size.
	Lag1 float64
	// VarMean is the variance of Mean: the sample variance of the batch
	// means divided by Batches.
	VarMean float64
	// OK is true when at least MinBatches batches had |Lag1| <=
	// MaxBatchLag1; otherwise Reason says why no variance is given.
	OK     bool
	Reason string
}

// BatchMeansOf computes the batch means of a per-second series: batch size
// 1, 2, 4, ... until the lag-1 autocorrelation of the batch means is at most
// MaxBatchLag1, as long as at least MinBatches batches remain. Non-finite
// values are dropped first.
func BatchMeansOf(series []float64) BatchMeans {
	xs, _ := finite(series)
	var last BatchMeans
	for size := 1; len(xs)/size >= MinBatches; size *= 2 {
		k := len(xs) / size
		means := make([]float64, k)
		for i := range k {
			var s float64
			for _, x := range xs[i*size : (i+1)*size] {
				s += x
			}
			means[i] = s / float64(size)
		}
		m := mean(means)
		sd := stddev(means, m, 1)
		last = BatchMeans{Mean: m, Size: size, Batches: k, Lag1: lag1(means, m), VarMean: sd * sd / float64(k)}
		if math.Abs(last.Lag1) <= MaxBatchLag1 || sd == 0 {
			last.OK = true
			return last
		}
	}
	if last.Batches == 0 {
		last.Reason = fmt.Sprintf("%d seconds are fewer than the %d batches needed", len(xs), MinBatches)
		return last
	}
	last.Reason = fmt.Sprintf("batch means of %d s still correlated (lag-1 %.2f > %.2f) with %d batches",
		last.Size, last.Lag1, MaxBatchLag1, last.Batches)
	return last
}

// lag1 is the lag-1 autocorrelation of xs around m: Σ(x_i−m)(x_{i+1}−m) /
// Σ(x_i−m)²; 0 for a constant series.
func lag1(xs []float64, m float64) float64 {
	var num, den float64
	for i, x := range xs {
		d := x - m
		den += d * d
		if i+1 < len(xs) {
			num += d * (xs[i+1] - m)
		}
	}
	if den == 0 {
		return 0
	}
	return num / den
}
