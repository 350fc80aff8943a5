package fleet_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// scaleSpec is the shortest useful job: a 1000-row SQLite load and one
// point query test of one second.
const scaleSpec = `name = "scale"
[[target]]
name = "lite"
engine = "sqlite"
[workload]
suite = "sysbench"
tests = ["point-query"]
threads = [1]
read_time = "1s"
warmup = "0s"
postwrite_wait = "0s"
report_interval = "0s"
table_size = 1000
repeats = 1
`

// BenchmarkLabScale measures what one PostgreSQL store costs a lab: for 1,
// 2, 4 and 8 workers on this host (child processes with --once), it queues
// 3 short SQLite jobs per worker, runs them, and reports jobs per minute,
// the queue latency (queued to taken: median and max), and the store's load
// per job (transactions committed and rows written in its database, as
// pg_stat_database counts them). Run it with make lab-scale; the figures
// are the machine's, with whatever else it runs at the time.
func BenchmarkLabScale(b *testing.B) {
	for _, n := range []int{1, 2, 4, 8} {
		b.Run(fmt.Sprintf("workers=%d", n), func(b *testing.B) {
			for range b.N {
				labScaleOnce(b, n, 3*n)
			}
		})
	}
}

func labScaleOnce(b *testing.B, workers, jobs int) {
	b.StopTimer()
	dsn := labStore(b)
	dir := b.TempDir()
	sp := filepath.Join(dir, "scale.toml")
	if err := os.WriteFile(sp, []byte(scaleSpec), 0o644); err != nil {
		b.Fatal(err)
	}
	for range jobs {
		if code, _, errOut := run(b, "queue", sp, "--store", dsn); code != 0 {
			b.Fatalf("queue: exit %d %s", code, errOut)
		}
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	stat := func() (xact, rows int64) {
		if _, err := conn.Exec(ctx, "SELECT pg_stat_clear_snapshot()"); err != nil {
			b.Fatal(err)
		}
		err := conn.QueryRow(ctx, `SELECT xact_commit, tup_inserted + tup_updated + tup_deleted
			FROM pg_stat_database WHERE datname = current_database()`).Scan(&xact, &rows)
		if err != nil {
			b.Fatal(err)
		}
		return xact, rows
	}
	x0, r0 := stat()
	tmp := b.TempDir()
	start := time.Now()
	b.StartTimer()
	cmds := make([]*exec.Cmd, workers)
	outs := make([]bytes.Buffer, workers)
	for i := range cmds {
		cmds[i] = childCmd([]string{"TMPDIR=" + tmp}, "worker", "--store", dsn, "--once")
		cmds[i].Stdout, cmds[i].Stderr = &outs[i], &outs[i]
		if err := cmds[i].Start(); err != nil {
			b.Fatal(err)
		}
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			b.Fatalf("worker %d: %v\n%s", i, err, outs[i].String())
		}
	}
	b.StopTimer()
	wall := time.Since(start)
	// The statistics collector reports at most every half second.
	time.Sleep(time.Second)
	x1, r1 := stat()
	var lat []float64
	done := 0
	for _, j := range listJobs(b, dsn) {
		if j.State == "completed" {
			done++
		}
		lat = append(lat, j.Started.Sub(j.Created).Seconds())
	}
	if done != jobs {
		b.Fatalf("%d of %d jobs completed", done, jobs)
	}
	slices.Sort(lat)
	b.ReportMetric(float64(jobs)/wall.Minutes(), "jobs/min")
	b.ReportMetric(lat[len(lat)/2], "queue-p50-s")
	b.ReportMetric(lat[len(lat)-1], "queue-max-s")
	b.ReportMetric(float64(x1-x0)/float64(jobs), "store-xact/job")
	b.ReportMetric(float64(r1-r0)/float64(jobs), "store-rows/job")
}
