package report

import (
	"encoding/json"
	"strings"
	"testing"

	"benchlab/internal/store"
)

// chartTitles lists the titles of the charts built for d.
func chartTitles(d *Data) []string {
	var out []string
	for _, c := range buildCharts(d) {
		out = append(out, c.option["title"].(map[string]any)["text"].(string))
	}
	return out
}

func countPrefix(titles []string, prefix string) int {
	n := 0
	for _, t := range titles {
		if strings.HasPrefix(t, prefix) {
			n++
		}
	}
	return n
}

// TestHTMLEfficiencyCharts checks that the per-operation cost charts appear
// when efficiency was measured and vanish, leaving the others, when not.
func TestHTMLEfficiencyCharts(t *testing.T) {
	with, without := chartTitles(effData(true)), chartTitles(effData(false))
	for _, want := range []string{"Relative cpu us/op total", "Relative KB read/op", "Relative KB written/op"} {
		if countPrefix(with, want) != 1 {
			t.Errorf("no %q chart with efficiency measured: %q", want, with)
		}
	}
	if n := countPrefix(without, "Relative cpu") + countPrefix(without, "Relative KB"); n != 0 {
		t.Errorf("%d efficiency charts without measurements: %q", n, without)
	}
	if len(with) != len(without)+3 {
		t.Errorf("%d charts with efficiency, %d without: want exactly 3 more", len(with), len(without))
	}
	// srv's client CPU per op is 0.2 s against lite's 0.1 s: total 0.5 s
	// (server 0.3 + client 0.2) against 0.1 s, a ratio of 5.
	for _, c := range buildCharts(effData(true)) {
		if c.option["title"].(map[string]any)["text"] != "Relative cpu us/op total (target / lite): lower is better" {
			continue
		}
		b, _ := json.Marshal(c.option["series"])
		if string(b) != `[{"data":[5],"name":"srv","type":"bar"}]` {
			t.Errorf("cpu series %s, want srv at 5", b)
		}
	}
}

// TestHTMLWarmupShaded checks that the per-second chart shades the warm-up
// seconds (Sec < 0) and only when there are some.
func TestHTMLWarmupShaded(t *testing.T) {
	for _, warm := range []int{0, 3} {
		d := effData(false)
		for id := range d.Results {
			for i := range d.Results[id] {
				for sec := -warm; sec < 10; sec++ {
					d.Results[id][i].Intervals = append(d.Results[id][i].Intervals,
						store.Interval{Sec: sec, Seconds: 1, Statements: 1000})
				}
			}
		}
		seen := 0
		for _, c := range buildCharts(d) {
			if !strings.HasPrefix(c.option["title"].(map[string]any)["text"].(string), "Throughput per second") {
				continue
			}
			seen++
			b, _ := json.Marshal(c.option["series"])
			got := strings.Contains(string(b), `"markArea"`)
			if got != (warm > 0) {
				t.Errorf("%d warm-up seconds: shaded %v; series %s", warm, got, b)
			}
			if warm > 0 && !strings.Contains(string(b), `[{"name":"warm-up","xAxis":-3},{"xAxis":0}]`) {
				t.Errorf("warm-up area does not span -3..0: %s", b)
			}
		}
		if seen != 1 {
			t.Errorf("%d per-second charts, want 1", seen)
		}
	}
}

// TestHTMLSpeedChart checks the per-second CPU speed chart: none when no
// second has a speed; with speeds, one chart per test, each target's
// measured seconds as a share of the median second of all targets (the
// warm-up and seconds without a probe left out), with the slow line.
func TestHTMLSpeedChart(t *testing.T) {
	d := effData(false)
	if n := countPrefix(chartTitles(d), "CPU speed per second"); n != 0 {
		t.Fatalf("%d CPU speed charts without speeds", n)
	}
	for id := range d.Results {
		for i := range d.Results[id] {
			if d.Results[id][i].Action {
				continue
			}
			d.Results[id][i].Intervals = []store.Interval{
				{Sec: -1, Seconds: 1, Statements: 10, Load: &store.IntervalLoad{CPUSpeed: 1}}, // warm-up
				{Sec: 0, Seconds: 1, Statements: 10, Load: &store.IntervalLoad{CPUSpeed: 200}},
				{Sec: 1, Seconds: 1, Statements: 10, Load: &store.IntervalLoad{}}, // no probe
				{Sec: 2, Seconds: 1, Statements: 10, Load: &store.IntervalLoad{CPUSpeed: 100}},
				{Sec: 3, Seconds: 1, Statements: 10, Load: &store.IntervalLoad{CPUSpeed: 200}},
			}
		}
	}
	seen := 0
	for _, c := range buildCharts(d) {
		if !strings.HasPrefix(c.option["title"].(map[string]any)["text"].(string), "CPU speed per second") {
			continue
		}
		seen++
		b, _ := json.Marshal(c.option["series"])
		// Median second 200: seconds 0, 2 and 3 at 1, 0.5 and 1.
		if !strings.Contains(string(b), `"data":[[0,1],[2,0.5],[3,1]]`) || !strings.Contains(string(b), `"yAxis":0.9`) {
			t.Errorf("speed series %s; want seconds 0, 2, 3 at 1, 0.5, 1 and the slow line at 0.9", b)
		}
	}
	if seen == 0 {
		t.Error("no CPU speed chart with speeds in the series")
	}
}
