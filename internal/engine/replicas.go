package engine

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The settings of a primary-with-replicas target (the replica engines)
// that are benchlab's, not its servers'.
const (
	SettingReplicas    = "replicas"
	SettingReplication = "replication"
	SettingCatchup     = "catchup_timeout"
)

// DefaultCatchup bounds a new replica's catch-up when the target does not.
const DefaultCatchup = 60 * time.Second

// Setting is t's setting name as given, whatever the key's case.
func (t Target) Setting(name string) (string, bool) {
	for k, v := range t.Settings {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}

// ReplicaShape is what a primary-with-replicas target asks for.
type ReplicaShape struct {
	// Replicas is the replica count besides the primary (1 by default).
	Replicas int
	// Mode is the replication mode as the engine names it ("async" by
	// default).
	Mode string
	// Catchup bounds how long a new replica may take to apply what the
	// primary wrote.
	Catchup time.Duration
}

// ReadReplicaShape reads benchlab's settings of a primary-with-replicas
// target t, each value as value leaves it (the engine's trimming): at
// most max replicas, the replication mode as mode reads it (its error
// names the field), and the catch-up bound. Errors name the field.
func ReadReplicaShape(t Target, max int, value func(string) string, mode func(string) (string, error)) (ReplicaShape, error) {
	s := ReplicaShape{Replicas: 1, Mode: "async", Catchup: DefaultCatchup}
	get := func(name string) (string, bool) {
		v, ok := t.Setting(name)
		return value(v), ok
	}
	if v, ok := get(SettingReplicas); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > max {
			return s, fmt.Errorf("settings.%s: %q is not a replica count; want 1 to %d (a replica is a whole server on this machine)",
				SettingReplicas, v, max)
		}
		s.Replicas = n
	}
	if v, ok := get(SettingReplication); ok {
		m, err := mode(v)
		if err != nil {
			return s, err
		}
		s.Mode = m
	}
	if v, ok := get(SettingCatchup); ok {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return s, fmt.Errorf("settings.%s: %q is not a duration; want e.g. \"60s\"", SettingCatchup, v)
		}
		s.Catchup = d
	}
	return s, nil
}

// Cluster is the cluster shape of s, on an engine that starts at most max
// replicas.
func (s ReplicaShape) Cluster(max int) ClusterShape {
	return ClusterShape{Nodes: 1 + s.Replicas, MaxNodes: 1 + max, NodesField: "settings." + SettingReplicas,
		Replication: s.Mode}
}

// ReplicaNodeTarget is t as the server of its node name sees it:
// benchlab's replica settings left out, named after the node.
func ReplicaNodeTarget(t Target, name string) Target {
	nt := t
	nt.Name = t.Name + "-" + name
	nt.Settings = map[string]string{}
	for k, v := range t.Settings {
		switch strings.ToLower(k) {
		case SettingReplicas, SettingReplication, SettingCatchup:
		default:
			nt.Settings[k] = v
		}
	}
	return nt
}
