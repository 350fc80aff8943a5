package layers

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "benchlab/"

// name is a package's name in Layers: its import path without the module
// and "internal/".
func name(importPath string) string {
	p := strings.TrimPrefix(importPath, module)
	return strings.TrimPrefix(p, "internal/")
}

// importGraph reads every package of the module and its benchlab imports
// (test files' imports left out: a test may drive the whole program) with
// go list.
func importGraph(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports", module+"...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	graph := map[string][]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		var imports []string
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, module) {
				imports = append(imports, name(imp))
			}
		}
		graph[name(p.ImportPath)] = imports
	}
	if len(graph) < 40 {
		t.Fatalf("go list found %d packages; want the whole module", len(graph))
	}
	return graph
}

// TestLayers is the rule on benchlab itself: no package imports its own
// layer or a higher one, none but internal/all reaches into an engine or a
// suite, and every package has a layer.
func TestLayers(t *testing.T) {
	for _, v := range Check(importGraph(t)) {
		t.Error(v)
	}
}

// TestEveryLayerNamedPackageExists keeps Layers from naming packages that
// are gone or misspelled.
func TestEveryLayerNamedPackageExists(t *testing.T) {
	graph := importGraph(t)
	for _, l := range Layers {
		for _, p := range l.Packages {
			if _, ok := graph[p]; !ok && !strings.HasSuffix(p, "/*") {
				t.Errorf("layer %q names %s, which is not a package of the module", l.Name, p)
			}
		}
	}
}

// TestCheckCatchesPlantedEdges feeds Check a graph with one planted
// mistake of each kind and wants each one named, and nothing else.
func TestCheckCatchesPlantedEdges(t *testing.T) {
	good := map[string][]string{
		"cmd/benchlab":      {"all", "cli"},
		"all":               {"engine/sqlite", "workload/sysbench"},
		"cli":               {"runner", "store", "spec"},
		"runner":            {"engine", "metric", "store", "workload"},
		"store":             {"analysis", "sqlbind"},
		"sqlbind":           nil,
		"engine/sqlite":     {"engine"},
		"engine/galera":     {"engine", "engine/mysql", "server"},
		"engine/mysql":      {"engine", "server"},
		"importer":          {"engine/dbbench", "workload/command", "store"},
		"workload/sysbench": {"workload", "engine", "randgen"},
		"server/servertest": {"cli", "workload/sysbench"},
	}
	for from, edges := range Allowed { // every allowance in use, as in the tree
		for _, e := range edges {
			if !slices.Contains(good[from], e.To) {
				good[from] = append(good[from], e.To)
			}
		}
	}
	if v := Check(good); len(v) != 0 {
		t.Fatalf("a graph that keeps the rule: %v", v)
	}
	for _, tc := range []struct {
		what     string
		from, to string
		want     string
	}{
		{"a back edge", "store", "engine", `layer "store" imports a higher layer ("engine contract")`},
		{"an edge within a layer", "runner", "report", `imports its own layer`},
		{"a sibling suite's internals", "workload/custom", "workload/sysbench", `imports its own layer ("suites")`},
		{"an engine from a suite", "workload/cluster", "engine/galera", `reaches into a plug-in of layer "engines"`},
		{"a suite from the runner", "runner", "workload/tpcc", `reaches into a plug-in of layer "suites"`},
		{"the program importing test support", "cli", "store/storetest", `imports a higher layer ("test helpers")`},
	} {
		graph := clone(good)
		graph[tc.from] = append(graph[tc.from], tc.to)
		v := Check(graph)
		if len(v) != 1 || v[0].From != tc.from || v[0].To != tc.to || !strings.Contains(v[0].Why, tc.want) {
			t.Errorf("%s (%s -> %s): got %v; want one violation saying %q", tc.what, tc.from, tc.to, v, tc.want)
		}
	}
	// A package in no layer, and an allowed edge the code no longer takes.
	graph := clone(good)
	graph["newpkg"] = []string{"analysis"}
	graph["importer"] = []string{"engine/dbbench", "store"}
	v := Check(graph)
	if len(v) != 2 || !strings.Contains(v[0].String(), "importer imports workload/command: allowed in layers.Allowed but no longer imported") ||
		!strings.Contains(v[1].String(), "newpkg: in no layer") {
		t.Errorf("unknown package and unused allowance: got %v", v)
	}
}

// TestLayersNameEachPackageOnce: a package listed twice would have two
// ranks.
func TestLayersNameEachPackageOnce(t *testing.T) {
	var seen []string
	for _, l := range Layers {
		for _, p := range l.Packages {
			if slices.Contains(seen, p) {
				t.Errorf("%s is in two layers", p)
			}
			seen = append(seen, p)
		}
	}
}

func clone(g map[string][]string) map[string][]string {
	out := map[string][]string{}
	for k, v := range g {
		out[k] = slices.Clone(v)
	}
	return out
}

// TestDocsTable keeps the layer table of docs/architecture.md the same as
// Layers: each layer's row lists its packages.
func TestDocsTable(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(doc), "\n## Layers\n")
	if !ok {
		t.Fatal("docs/architecture.md has no Layers section")
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || strings.HasPrefix(cells[1], "---") || strings.TrimSpace(cells[1]) == "layer" {
			continue
		}
		var pkgs []string
		for _, p := range strings.Split(cells[2], ",") {
			pkgs = append(pkgs, strings.TrimSpace(p))
		}
		rows[strings.TrimSpace(cells[1])] = pkgs
		if strings.TrimSpace(cells[1]) == Layers[0].Name {
			break
		}
	}
	for _, l := range Layers {
		got := slices.Sorted(slices.Values(rows[l.Name]))
		want := slices.Sorted(slices.Values(l.Packages))
		if !slices.Equal(got, want) {
			t.Errorf("docs/architecture.md's layer %q lists %v; layers.Layers has %v", l.Name, got, want)
		}
	}
	if len(rows) != len(Layers) {
		t.Errorf("docs/architecture.md's table has %d layers; layers.Layers has %d", len(rows), len(Layers))
	}
}
