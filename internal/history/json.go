package history

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"time"
)

// num is a float that encodes NaN and infinities as null.
type num float64

func (n num) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(n)) || math.IsInf(float64(n), 0) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(n))
}

// WriteJSON writes the series as one JSON document: each cell's points
// (experiment, time, versions, value, runs), its change points, the
// newest point's verdict and the points change points need, for tools
// that follow a history.
func WriteJSON(w io.Writer, selector string, series []Series) error {
	type point struct {
		Experiment int64     `json:"experiment"`
		Created    time.Time `json:"created"`
		Versions   []string  `json:"versions"`
		Value      num       `json:"value"`
		Runs       []num     `json:"runs"`
		// Stalled counts the runs that completed no operation, left out
		// of runs and value (null when every run stalled).
		Stalled int `json:"stalled_runs"`
	}
	type change struct {
		Experiment    int64 `json:"experiment"`
		Index         int   `json:"index"`
		ChangePercent num   `json:"change_percent"`
		P             num   `json:"p"`
	}
	type newest struct {
		Outcome   string `json:"outcome"`
		Ratio     num    `json:"ratio"`
		RatioLo   num    `json:"ratio_lo"`
		RatioHi   num    `json:"ratio_hi"`
		P         num    `json:"p"`
		PAdjusted num    `json:"p_adjusted"`
		Evidence  string `json:"evidence"`
		Since     int64  `json:"history_since_experiment"`
		NHistory  int    `json:"n_history"`
		NNewest   int    `json:"n_newest"`
	}
	type cell struct {
		Target       string   `json:"target"`
		Suite        string   `json:"suite"`
		Test         string   `json:"test"`
		Threads      int      `json:"threads"`
		Metric       string   `json:"metric"`
		Points       []point  `json:"points"`
		ChangePoints []change `json:"change_points"`
		Newest       *newest  `json:"newest,omitempty"`
		PointsNeeded int      `json:"change_points_need"`
		// NotJudged says every run of the newest point stalled.
		NotJudged bool `json:"not_judged"`
	}
	doc := struct {
		Selector string `json:"selector"`
		Cells    []cell `json:"cells"`
	}{Selector: selector, Cells: []cell{}}
	for _, s := range series {
		h := s.Judged
		c := cell{Target: s.Target, Suite: s.Cell.Suite, Test: s.Cell.Test, Threads: s.Cell.Threads, Metric: s.Metric.Name,
			ChangePoints: []change{}, PointsNeeded: h.PointsNeeded, NotJudged: s.NotJudged}
		for i, p := range s.Points {
			pt := point{Experiment: p.Experiment.ID, Created: p.Experiment.Created.UTC(), Versions: p.Versions, Value: num(h.Values[i]),
				Stalled: p.Stalled}
			for _, r := range p.Runs {
				pt.Runs = append(pt.Runs, num(r.Throughput()))
			}
			c.Points = append(c.Points, pt)
		}
		for _, cp := range h.ChangePoints {
			c.ChangePoints = append(c.ChangePoints, change{s.Points[cp.Index].Experiment.ID, cp.Index, num(cp.ForwardChangePercent), num(cp.P)})
		}
		if len(s.Points) > 1 {
			v := h.Newest
			c.Newest = &newest{v.Outcome.String(), num(v.Ratio), num(v.RatioLo), num(v.RatioHi), num(v.P), num(v.PAdjusted),
				string(v.Evidence), s.Points[h.Regime].Experiment.ID, v.NBase, v.NOther}
		}
		doc.Cells = append(doc.Cells, c)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("history json: %w", err)
	}
	return nil
}
