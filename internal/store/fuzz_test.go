package store

import "testing"

// FuzzParseManifest decodes arbitrary stored manifests: a damaged one gives
// an empty or partial manifest, never a panic, and what decodes re-encodes.
func FuzzParseManifest(f *testing.F) {
	f.Add(Manifest{Experiment: "x", Seed: 7, Repeat: 2}.JSON())
	f.Add(`{"seed": -1, "host": {"cores": "many"}}`)
	f.Add(`{"machine_load": [{"steal_pct": 1e999}]}`)
	f.Fuzz(func(t *testing.T, s string) {
		m := ParseManifest(s)
		_ = ParseManifest(m.JSON())
	})
}
