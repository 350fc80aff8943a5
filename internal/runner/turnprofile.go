package runner

import (
	"benchlab/internal/profile"
)

// turnProfiles gives each target of an interleaved step its own profile
// (run --profile). Each target's processes are recorded over the whole
// step, as a single target's are (startRecording: a server's cgroup or
// process tree, benchlab itself for an in-process engine), and only the
// samples taken inside that target's measured turns are kept: the turns
// are serialised, so what runs then is that target's work (and a server's
// background work, which a single-target profile keeps too). Two
// in-process targets each get a recording of benchlab, filtered by their
// own turns.
type turnProfiles struct {
	noInstrument
	g    *turns
	recs []*stepRecording
}

// startTurnProfiles starts a recording per target, before the step's clock
// starts (as startRecording is); the step sets g once it has its turns.
func startTurnProfiles(parts []stepPart, hz int) *turnProfiles {
	t := &turnProfiles{recs: make([]*stepRecording, len(parts))}
	for i, p := range parts {
		t.recs[i] = startRecording(p.db, hz)
	}
	return t
}

// finish gives every target's headline result the samples of its turns.
// It runs after the turns are over.
func (t *turnProfiles) finish(e *stepEnd) {
	for i, head := range e.heads {
		head.Profile = t.recs[i].profile(turnWindows(t.g.measuredSpans(i)))
	}
}

func (t *turnProfiles) close() {
	for _, r := range t.recs {
		r.close()
	}
}

// turnWindows are spans on perf's clock.
func turnWindows(spans []span) profile.Windows {
	ws := make(profile.Windows, 0, len(spans))
	for _, s := range spans {
		ws = append(ws, profile.Window{From: profile.At(s.from), To: profile.At(s.to)})
	}
	return ws
}
