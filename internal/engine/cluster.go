package engine

// Clustered is a driver whose targets are clusters of servers that benchlab
// starts on this machine (galera). A suite that spreads its clients over
// nodes or kills one asks the driver how many nodes a target has, through
// the registry, instead of importing the engine's package.
type Clustered interface {
	Driver
	// Nodes is the number of nodes target t asks for; the error names the
	// setting (ClusterNodesSetting).
	Nodes(t Target) (int, error)
}

// MaxClusterNodes bounds a cluster on one machine: each node is a full
// server.
const MaxClusterNodes = 5

// ClusterNodesSetting is the target setting that sizes a cluster.
const ClusterNodesSetting = "nodes"

// ClusterEngines lists the registered engines whose targets are clusters,
// in order.
func ClusterEngines() []string {
	var out []string
	for _, n := range Names() {
		if d, ok := Lookup(n); ok {
			if _, ok := d.(Clustered); ok {
				out = append(out, n)
			}
		}
	}
	return out
}
