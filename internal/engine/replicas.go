package engine

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
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

// ReplicaClusterShape is the ClusterShape of target t of engine name, a
// primary with at most max replicas whose settings shape reads: such an
// engine starts its servers itself, so t has no dsn.
func ReplicaClusterShape[S interface{ Cluster(max int) ClusterShape }](name string, t Target, max int,
	shape func(Target) (S, error)) (ClusterShape, error) {
	if t.DSN != "" {
		return ClusterShape{}, fmt.Errorf("dsn: %s starts its servers itself; remove dsn", name)
	}
	s, err := shape(t)
	if err != nil {
		return ClusterShape{}, err
	}
	return s.Cluster(max), nil
}

// CheckReplicaTarget checks what target t of engine name, a primary with
// replicas whose settings shape reads, asks of benchlab: such an engine
// starts its servers itself, so t has no dsn (a server that runs already
// is a target of engine single).
func CheckReplicaTarget[S any](name, single string, t Target, shape func(Target) (S, error)) error {
	if t.DSN != "" {
		return fmt.Errorf("dsn: %s starts its servers itself; remove dsn (an existing server is a %s target)", name, single)
	}
	_, err := shape(t)
	return err
}

// ReplicaInfo is info, read from the primary, as engine name reports a
// primary with replicas replicas in replication mode.
func ReplicaInfo(info Info, name string, replicas int, mode string) Info {
	info.Engine = name
	info.Settings["benchlab.replicas"] = strconv.Itoa(replicas)
	info.Settings["benchlab.replication"] = mode
	return info
}

// ReplicaWriter is which node of a primary with replicas takes writes:
// the primary (node 0 until a promotion), and none while a switchover
// runs. It is safe for concurrent use.
type ReplicaWriter struct {
	mu        sync.Mutex
	primary   int
	switching bool
}

// Primary is the node that takes writes, or took them before the
// switchover that runs now.
func (w *ReplicaWriter) Primary() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.primary
}

// SetPrimary makes node i the primary; it returns the one before.
func (w *ReplicaWriter) SetPrimary(i int) (old int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	old, w.primary = w.primary, i
	return old
}

// SetSwitching makes Writer fail (on) or answer again (off): during a
// switchover no node takes writes.
func (w *ReplicaWriter) SetSwitching(on bool) {
	w.mu.Lock()
	w.switching = on
	w.mu.Unlock()
}

// Writer is the node a worker connection of engine name goes to: the
// primary, or an error while a switchover runs.
func (w *ReplicaWriter) Writer(name string) (int, error) {
	w.mu.Lock()
	p, switching := w.primary, w.switching
	w.mu.Unlock()
	if switching {
		return 0, fmt.Errorf("%s: switchover in progress: no primary", name)
	}
	return p, nil
}

// StartSwitchover begins a switchover of engine name to node i of nodes:
// i must exist, not be the primary and not be killed (killed says). Then
// Writer fails until SetSwitching(false). It returns the primary i takes
// over from.
func (w *ReplicaWriter) StartSwitchover(name string, i, nodes int, killed func(int) bool) (old int, err error) {
	old = w.Primary()
	if i < 0 || i >= nodes || i == old || killed(i) {
		return old, fmt.Errorf("%s: switchover to node %d: not a live replica", name, i+1)
	}
	w.SetSwitching(true)
	return old, nil
}
