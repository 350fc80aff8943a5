// Package layers writes down the order of benchlab's packages and checks
// the one rule between them: a package imports only packages of lower
// layers. Engines and suites are plug-ins: only internal/all (and test
// support) imports them, so no package reaches into another's engine or
// suite. The few edges that break either rule on purpose are listed in
// Allowed, each with its reason. The test in this package reads every
// package's imports with `go list` and fails on any other edge;
// docs/architecture.md explains the layers and how to read a failure.
package layers

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
)

// Layers lists benchlab's packages by layer, the lowest first. Names are
// import paths without "benchlab/internal/"; "engine/*" and "workload/*"
// match one engine or suite package not listed by its own name.
var Layers = []Layer{
	{"system", []string{"childproc"}},
	{"base", []string{"analysis", "cpulist", "dsn", "fio", "profile", "randgen", "sqlbind", "stale", "workload/tpcc/tpccgen"}},
	{"instruments", []string{"meter"}},
	{"store", []string{"store"}},
	{"meaning of results", []string{"metric"}},
	{"noise model", []string{"noise"}},
	{"engine contract", []string{"engine"}},
	{"engine support", []string{"server", "engine/fastpath", "engine/docdb"}},
	{"engines", []string{"engine/*"}},
	{"suite contract", []string{"workload"}},
	{"experiment file", []string{"spec"}},
	{"spec readers", []string{"power", "timeplan", "report/section"}},
	{"suite parts", []string{"workload/tpcc/tpccdoc"}},
	{"suites", []string{"workload/*"}},
	{"run and read", []string{"runner", "report", "results"}},
	{"services", []string{"across", "calibrate", "fleet", "history", "importer", "livemetrics", "preflight"}},
	{"commands", []string{"cli"}},
	{"plug-in list", []string{"all"}},
	{"main", []string{"cmd/benchlab"}},
	// Test support: imported by tests only, and free to import anything
	// (a scenario runs the whole command), so it sits above main, where no
	// package of the program can import it.
	{"test helpers", []string{"disktest", "docscheck", "engine/enginetest", "golden", "layers",
		"results/resultstest", "spec/spectest", "store/storetest", "testrun"}},
	{"test scenarios", []string{"server/servertest"}},
}

// Allowed lists the imports that break the rule on purpose, by importing
// package, each with its reason. An entry the code no longer needs is
// itself an error, so the list only shrinks with the code.
var Allowed = map[string][]Edge{
	// A Galera node is a MariaDB server: the cluster engine starts its
	// nodes through the mysql engine's server family and driver.
	"engine/galera": {{To: "engine/mysql", Why: "a Galera node is a MariaDB server"}},
	// Replica sets are clusters of one engine's servers, started and
	// reached through that engine's server family and driver.
	"engine/mariadbreplicas": {{To: "engine/mysql", Why: "its nodes are MariaDB servers"}},
	"engine/pgreplicas":      {{To: "engine/postgres", Why: "its nodes are PostgreSQL servers"}},
	// A pooler target is a PostgreSQL server with PgBouncer in front: it
	// starts the server through the postgres engine and talks to it through
	// its driver.
	"engine/pgbouncer": {{To: "engine/postgres", Why: "it pools a PostgreSQL server"}},
	// FerretDB is a MongoDB-protocol server over SQLite or a PostgreSQL
	// server: clients reach it through the mongodb engine, and its
	// PostgreSQL backend is started through the postgres engine.
	"engine/ferretdb": {
		{To: "engine/mongodb", Why: "its clients speak the MongoDB protocol"},
		{To: "engine/postgres", Why: "its PostgreSQL backend is a managed postgres server"},
	},
	// benchlab runs as the FerretDB server in a hidden mode: the command
	// line hands its arguments over before anything else.
	"cli": {{To: "engine/ferretdb", Why: "benchlab re-executes itself as the FerretDB server"}},
	// benchlab import reads db_bench's and pgbench's output with the
	// parsers their engine and suite run on, so there is one parser each.
	"importer": {
		{To: "engine/dbbench", Why: "db_bench's output parser"},
		{To: "workload/command", Why: "pgbench's output parser"},
	},
}

// Layer is a named set of packages of one rank.
type Layer struct {
	Name     string
	Packages []string
}

// Edge is an allowed import and why it is allowed.
type Edge struct {
	To, Why string
}

// Plug-in layers: only the plug-in list, test support and Allowed import
// their packages.
var pluginLayers = []string{"engines", "suites"}

// importsPlugins are the layers allowed to import plug-ins.
var importsPlugins = []string{"plug-in list", "test helpers", "test scenarios"}

// Violation is one import that breaks the rule.
type Violation struct {
	From, To string
	Why      string
}

// String says what is wrong and what to do, for a test failure.
func (v Violation) String() string {
	if v.To == "" {
		return fmt.Sprintf("%s: %s", v.From, v.Why)
	}
	return fmt.Sprintf("%s imports %s: %s", v.From, v.To, v.Why)
}

// rank is a package's layer: its index in Layers and the layer's name.
type rank struct {
	index int
	name  string
}

// layerOf finds pkg's layer: by its own name, else by a "dir/*" pattern
// matching it one level under dir.
func layerOf(pkg string) (rank, bool) {
	for i, l := range Layers {
		if slices.Contains(l.Packages, pkg) {
			return rank{i, l.Name}, true
		}
	}
	for i, l := range Layers {
		for _, p := range l.Packages {
			if dir, ok := strings.CutSuffix(p, "/*"); ok && path.Dir(pkg) == dir {
				return rank{i, l.Name}, true
			}
		}
	}
	return rank{}, false
}

// Check returns every import of graph (a package's benchlab imports, by
// name as in Layers) that breaks the rule, and every entry of Allowed the
// graph does not use, sorted.
func Check(graph map[string][]string) []Violation {
	var out []Violation
	used := map[[2]string]bool{}
	for from, imports := range graph {
		rf, ok := layerOf(from)
		if !ok {
			out = append(out, Violation{From: from, Why: "in no layer; add it to layers.Layers and docs/architecture.md"})
			continue
		}
		for _, to := range imports {
			rt, ok := layerOf(to)
			if !ok {
				continue // reported as a package of its own
			}
			if slices.ContainsFunc(Allowed[from], func(e Edge) bool { return e.To == to }) {
				used[[2]string{from, to}] = true
				continue
			}
			if why := broken(rf, rt); why != "" {
				out = append(out, Violation{From: from, To: to, Why: why})
			}
		}
	}
	for from, edges := range Allowed {
		for _, e := range edges {
			if !used[[2]string{from, e.To}] {
				out = append(out, Violation{From: from, To: e.To,
					Why: "allowed in layers.Allowed but no longer imported; remove the entry"})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].From != out[j].From {
			return out[i].From < out[j].From
		}
		return out[i].To < out[j].To
	})
	return out
}

// broken says why an import from a package of layer from to one of layer
// to breaks the rule, or "" when it keeps it.
func broken(from, to rank) string {
	if to.index >= from.index {
		where := "a higher layer"
		if to.index == from.index {
			where = "its own layer"
		}
		return fmt.Sprintf("layer %q imports %s (%q); move the code down, or pass a function or an interface up",
			from.name, where, to.name)
	}
	if slices.Contains(pluginLayers, to.name) && !slices.Contains(importsPlugins, from.name) {
		return fmt.Sprintf("reaches into a plug-in of layer %q; only internal/all imports engines and suites "+
			"(move what is shared below both, or list the edge in layers.Allowed with its reason)", to.name)
	}
	return ""
}
