package engine_test

import (
	"errors"
	"slices"
	"testing"

	"benchlab/internal/engine"
)

// TestClientPathChoose: the fast path is taken only where it runs, the
// connection lets it in and the probe reads the server; otherwise the
// driver, with a note when the target did not ask for the driver, and a
// probe's error fails the choice with the driver kept.
func TestClientPathChoose(t *testing.T) {
	boom := errors.New("probe: connection refused")
	const lead = "client: the driver (drv) is used, not the fast path: "
	for _, c := range []struct {
		name      string
		asked     engine.Client
		supported bool
		refuse    string
		fallBack  string
		err       error
		fast      bool
		probed    bool
		notes     []string
	}{
		{name: "driver asked", asked: engine.ClientDriver, supported: true},
		{name: "default off Linux", supported: false},
		{name: "fast asked off Linux", asked: engine.ClientFast, notes: []string{lead + "the fast path runs on Linux only"}},
		{name: "refused", supported: true, refuse: "the connection uses TLS", notes: []string{lead + "the connection uses TLS"}},
		{name: "probe falls back", asked: engine.ClientFast, supported: true, fallBack: "an answer it does not read",
			probed: true, notes: []string{lead + "an answer it does not read"}},
		{name: "probe fails", supported: true, err: boom, probed: true},
		{name: "fast", supported: true, probed: true, fast: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var p engine.ClientPath
			probed, fastInProbe := false, false
			err := p.Choose(engine.ClientChoice{Asked: c.asked, Supported: c.supported, Driver: "drv",
				Refuse: func() string { return c.refuse },
				Probe: func() (string, error) {
					probed, fastInProbe = true, p.Fast
					return c.fallBack, c.err
				}})
			if !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
				t.Errorf("error %v, want %v", err, c.err)
			}
			if p.Fast != c.fast || probed != c.probed || !slices.Equal(p.Notes, c.notes) {
				t.Errorf("fast %v probed %v notes %q; want %v %v %q", p.Fast, probed, p.Notes, c.fast, c.probed, c.notes)
			}
			if probed && !fastInProbe {
				t.Error("the probe ran without Fast set: it would dial the driver's way")
			}
			client, notes := p.Info()
			if wantClient := map[bool]engine.Client{true: engine.ClientFast, false: engine.ClientDriver}[c.fast]; client != string(wantClient) {
				t.Errorf("Info client %q, want %q", client, wantClient)
			}
			if c.fast && notes != nil || !c.fast && !slices.Equal(notes, c.notes) {
				t.Errorf("Info notes %q", notes)
			}
			if p.PolledOnly() == c.fast {
				t.Errorf("PolledOnly %v with fast %v", p.PolledOnly(), c.fast)
			}
			if got, want := p.Cost(engine.Short), map[bool]engine.Cost{true: engine.Short, false: engine.Long}[c.fast]; got != want {
				t.Errorf("Cost(Short) = %v, want %v", got, want)
			}
		})
	}
}
