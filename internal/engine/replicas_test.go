package engine_test

import (
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"benchlab/internal/engine"
)

// modes reads "async" and "sync", as a replica engine's mode reader does.
func modes(v string) (string, error) {
	if v == "async" || v == "sync" {
		return v, nil
	}
	return "", errors.New("settings.replication: " + v + " is no mode")
}

// TestReadReplicaShape: the defaults, each setting read whatever its
// key's case and through the engine's trimming, and an error naming the
// field for a bad count, mode or duration.
func TestReadReplicaShape(t *testing.T) {
	s, err := engine.ReadReplicaShape(engine.Target{}, 4, strings.TrimSpace, modes)
	if err != nil || s != (engine.ReplicaShape{Replicas: 1, Mode: "async", Catchup: engine.DefaultCatchup}) {
		t.Errorf("defaults: %+v %v", s, err)
	}
	tg := engine.Target{Settings: map[string]string{"Replicas": " 3 ", "REPLICATION": "sync", "catchup_timeout": "90s"}}
	s, err = engine.ReadReplicaShape(tg, 4, strings.TrimSpace, modes)
	if err != nil || s != (engine.ReplicaShape{Replicas: 3, Mode: "sync", Catchup: 90 * time.Second}) {
		t.Errorf("given: %+v %v", s, err)
	}
	if c := s.Cluster(4); c != (engine.ClusterShape{Nodes: 4, MaxNodes: 5, NodesField: "settings.replicas", Replication: "sync"}) {
		t.Errorf("cluster shape %+v", c)
	}
	for _, c := range []struct{ key, value, want string }{
		{"replicas", "5", `settings.replicas: "5" is not a replica count; want 1 to 4`},
		{"replicas", "0", `settings.replicas: "0"`},
		{"replicas", "two", `settings.replicas: "two"`},
		{"replication", "semisync", "settings.replication: semisync is no mode"},
		{"catchup_timeout", "-1s", `settings.catchup_timeout: "-1s" is not a duration`},
		{"catchup_timeout", "soon", `settings.catchup_timeout: "soon"`},
	} {
		_, err := engine.ReadReplicaShape(engine.Target{Settings: map[string]string{c.key: c.value}}, 4, strings.TrimSpace, modes)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s = %q: %v; want %s", c.key, c.value, err, c.want)
		}
	}
	// The engine's trimming applies before the value is read.
	unquote := func(v string) string { return strings.Trim(v, `"`) }
	s, err = engine.ReadReplicaShape(engine.Target{Settings: map[string]string{"replicas": `"2"`}}, 4, unquote, modes)
	if err != nil || s.Replicas != 2 {
		t.Errorf("quoted count: %+v %v", s, err)
	}
}

// TestReplicaNodeTarget: a node's target keeps the servers' settings,
// drops benchlab's whatever their case, is named after the node, and
// leaves the cluster's target as it was.
func TestReplicaNodeTarget(t *testing.T) {
	tg := engine.Target{Name: "c", Engine: "postgres-replicas", Settings: map[string]string{
		"Replicas": "2", "replication": "sync", "CATCHUP_TIMEOUT": "1m", "shared_buffers": "64MB"}}
	before := maps.Clone(tg.Settings)
	nt := engine.ReplicaNodeTarget(tg, "replica1")
	if nt.Name != "c-replica1" || nt.Engine != tg.Engine || !maps.Equal(nt.Settings, map[string]string{"shared_buffers": "64MB"}) {
		t.Errorf("node target %+v", nt)
	}
	if !maps.Equal(tg.Settings, before) || tg.Name != "c" {
		t.Errorf("the cluster's target changed: %+v", tg)
	}
}
