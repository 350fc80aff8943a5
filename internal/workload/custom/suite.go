// Package custom is the workload of the user's own SQL ([workload.custom] in
// a spec): setup statements, an optional load of generated rows, and measured
// tests whose statements take generated arguments. It runs on every SQL
// engine; statements use '?' placeholders, which each engine's dialect
// rewrites ($1, $2, ... for PostgreSQL).
package custom

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/metric"
	"benchlab/internal/randgen"
	"benchlab/internal/workload"
)

func init() { workload.Register(Suite{}) }

// Suite is the custom SQL suite.
type Suite struct{}

// Name returns "custom".
func (Suite) Name() string { return "custom" }

// PreparesStatements says the workers prepare on the server unless
// workload.prepared is false.
func (Suite) PreparesStatements() {}

// Summary describes the suite for `benchlab list`.
// Needs says the suite runs on SQL engines.
func (Suite) Needs() engine.Kind { return engine.KindSQL }

func (Suite) Summary() string {
	return "your own SQL from the spec's [workload.custom]: setup, a generated load, measured tests"
}

// Tests is empty: a custom suite's tests are defined in the spec.
func (Suite) Tests() []workload.Test { return nil }

// Group is the report group of every custom test.
const Group = "custom"

// defaultBatch is how many load rows go in one transaction.
const defaultBatch = 1000

var nameRE = regexp.MustCompile(`^[A-Za-z0-9._=+-]+$`)

// test is a checked CustomTest with its parsed arguments.
type test struct {
	Test
	args []*arg
	// mix and weights are a mix test's tests, in name order, and their weights.
	mix     []*test
	weights []float64
}

// statements returns the test's statements for dialect d and the number of
// placeholders in each.
func (t *test) statements(d string) ([]string, []int) {
	stmts := t.Statements
	if alt, ok := t.StatementsFor[d]; ok {
		stmts = alt
	}
	counts := make([]int, len(stmts))
	for i, s := range stmts {
		counts[i] = strings.Count(s, "?")
	}
	return stmts, counts
}

// dialects are the names StatementsFor and SetupFor take.
var dialects = []string{engine.SQLite.Name, engine.Postgres.Name, engine.MySQL.Name}

// checkStatements checks a list of statements (field names it) and returns
// their placeholders in all.
func checkStatements(field string, stmts []string) (int, error) {
	if len(stmts) == 0 {
		return 0, workload.Bad(field, nil, "empty; want the statements to run")
	}
	n := 0
	for j, s := range stmts {
		if strings.TrimSpace(s) == "" {
			return 0, workload.Bad(fmt.Sprintf("%s[%d]", field, j), nil, "empty statement")
		}
		n += strings.Count(s, "?")
	}
	return n, nil
}

// checkDialects checks the keys of a per-dialect map.
func checkDialects(field string, m map[string][]string) error {
	for k := range m {
		if !slices.Contains(dialects, k) {
			return workload.Bad(field, nil, "unknown dialect %q; want %s (mariadb uses mysql)", k, strings.Join(dialects, ", "))
		}
	}
	return nil
}

// plan is a checked custom definition.
type plan struct {
	c     Options
	load  []*arg
	tests []*test
	seqs  []*arg // every seq() argument, reset before each cell's load
}

// Describe says what a run did, for the report's header.
func (Suite) Describe(p workload.Params) string {
	names := make([]string, len(opts(p).Tests))
	for i, t := range opts(p).Tests {
		names[i] = t.Name
	}
	return fmt.Sprintf("custom SQL (%s), %d setup statement(s), %d rows loaded, tests %s, threads %v, read %s, write %s, warm-up %s",
		workload.TestsLabel(p), len(opts(p).Setup), opts(p).Load.Rows, strings.Join(names, ", "), p.Threads, p.ReadTime,
		p.WriteTime, p.Warmup)
}

// Check validates the [workload.custom] section and the test selection.
func (Suite) Check(p workload.Params) error {
	_, err := check(p)
	return err
}

func check(p workload.Params) (*plan, error) {
	c := *opts(p)
	pl := &plan{c: c}
	for i, s := range c.Setup {
		if strings.TrimSpace(s) == "" {
			return nil, workload.Bad(fmt.Sprintf("custom.setup[%d]", i), nil, "empty statement")
		}
	}
	if err := checkDialects("custom.setup_for", c.SetupFor); err != nil {
		return nil, err
	}
	for _, d := range dialects {
		if stmts, ok := c.SetupFor[d]; ok {
			if _, err := checkStatements("custom.setup_for."+d, stmts); err != nil {
				return nil, err
			}
		}
	}
	for i, t := range c.Tables {
		if !nameRE.MatchString(t) {
			return nil, workload.Bad(fmt.Sprintf("custom.tables[%d]", i), nil, "%q is not a table name", t)
		}
	}
	l := c.Load
	switch {
	case l.Rows < 0:
		return nil, workload.Bad("custom.load.rows", nil, "%d is not allowed; want >= 0", l.Rows)
	case l.Batch < 0:
		return nil, workload.Bad("custom.load.batch", nil, "%d is not allowed; want >= 1 (default %d)", l.Batch, defaultBatch)
	case l.Rows > 0 && strings.TrimSpace(l.SQL) == "":
		return nil, workload.Bad("custom.load.sql", nil, "empty; want the statement that inserts one row, with '?' placeholders")
	case l.Rows == 0 && l.SQL != "":
		return nil, workload.Bad("custom.load.rows", nil, "0; want the number of rows the load statement inserts")
	}
	if l.Rows > 0 {
		args, err := parseArgs("custom.load.args", l.Args, strings.Count(l.SQL, "?"))
		if err != nil {
			return nil, err
		}
		pl.load = args
	}
	if len(c.Tests) == 0 {
		return nil, workload.Bad("custom.test", nil, "no tests; want at least one [[workload.custom.test]] with a name and statements")
	}
	seen := map[string]bool{}
	for i, t := range c.Tests {
		f := fmt.Sprintf("custom.test[%d]", i)
		if !nameRE.MatchString(t.Name) {
			return nil, workload.Bad(f+".name", nil, "%q; want letters, digits and . _ = + -", t.Name)
		}
		if seen[t.Name] {
			return nil, workload.Bad(f+".name", nil, "%q is used by two tests", t.Name)
		}
		if slices.Contains([]string{"prepare", "postload", "postwrite"}, t.Name) {
			return nil, workload.Bad(f+".name", nil, "%q is the name of a step the suite adds; want another name", t.Name)
		}
		seen[t.Name] = true
		ct, err := checkTest(f, t)
		if err != nil {
			return nil, err
		}
		pl.tests = append(pl.tests, ct)
	}
	if err := resolveMixes(pl.tests); err != nil {
		return nil, err
	}
	for _, n := range p.Tests {
		if !seen[n] {
			names := make([]string, len(c.Tests))
			for i, t := range c.Tests {
				names[i] = t.Name
			}
			return nil, workload.Bad("tests", nil, "unknown test %q; the custom tests are %s", n, strings.Join(names, ", "))
		}
	}
	for _, a := range pl.load {
		if a.kind == argSeq {
			pl.seqs = append(pl.seqs, a)
		}
	}
	for _, t := range pl.tests {
		for _, a := range t.args {
			if a.kind == argSeq {
				pl.seqs = append(pl.seqs, a)
			}
		}
	}
	return pl, nil
}

// checkTest checks test t, field f ("custom.test[2]"), past its name:
// threads, time, and a mix's tests or the statements and args.
func checkTest(f string, t Test) (*test, error) {
	for _, n := range t.Threads {
		if n < 1 || n > 4096 {
			return nil, workload.Bad(f+".threads", nil, "%d is not allowed; want integers from 1 to 4096", n)
		}
	}
	if t.Time != "" {
		if d, err := time.ParseDuration(t.Time); err != nil || d < time.Millisecond {
			return nil, workload.Bad(f+".time", nil, "%q; want a duration of at least 1ms, like \"30s\"", t.Time)
		}
	}
	if len(t.Mix) > 0 {
		if len(t.Statements) > 0 || len(t.StatementsFor) > 0 || len(t.Args) > 0 || t.Transaction {
			return nil, workload.Bad(f+".mix", nil, "a mix runs other tests; it takes no statements, args or transaction of its own")
		}
		return &test{Test: t}, nil
	}
	total, err := checkStatements(f+".statements", t.Statements)
	if err != nil {
		return nil, err
	}
	if err := checkDialects(f+".statements_for", t.StatementsFor); err != nil {
		return nil, err
	}
	for _, d := range dialects {
		stmts, ok := t.StatementsFor[d]
		if !ok {
			continue
		}
		n, err := checkStatements(f+".statements_for."+d, stmts)
		if err != nil {
			return nil, err
		}
		if n != total {
			return nil, workload.Bad(fmt.Sprintf("%s.statements_for.%s", f, d), nil, "%d '?' placeholders, but statements have %d; both take the same args", n, total)
		}
	}
	ct := &test{Test: t}
	if ct.args, err = parseArgs(f+".args", t.Args, total); err != nil {
		return nil, err
	}
	return ct, nil
}

// resolveMixes links each mix test to the tests it names, which must exist
// and not be mixes themselves, with positive weights. A mix writes when one
// of its tests does.
func resolveMixes(tests []*test) error {
	byName := map[string]*test{}
	for _, t := range tests {
		byName[t.Name] = t
	}
	for i, t := range tests {
		if len(t.Mix) == 0 {
			continue
		}
		f := fmt.Sprintf("custom.test[%d].mix", i)
		names := make([]string, 0, len(t.Mix))
		for n := range t.Mix {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			m, ok := byName[n]
			switch {
			case !ok:
				return workload.Bad(f, nil, "no test named %q", n)
			case len(m.Mix) > 0:
				return workload.Bad(f, nil, "%q is a mix itself; a mix names tests with statements", n)
			case !(t.Mix[n] > 0):
				return workload.Bad(f, nil, "weight %v of %q; want a number > 0", t.Mix[n], n)
			}
			t.mix = append(t.mix, m)
			t.weights = append(t.weights, t.Mix[n])
			t.Write = t.Write || m.Write
		}
	}
	return nil
}

// Plan returns prepare (setup and load), the postload cleanup that settles
// the load (unless postload = false), then the selected tests in the spec's
// order, with a postwrite cleanup wherever a write test is followed by a
// read test.
func (Suite) Plan(p workload.Params) ([]workload.Step, error) {
	pl, err := check(p)
	if err != nil {
		return nil, err
	}
	steps := []workload.Step{pl.prepareStep(p)}
	if pl.c.Postload {
		steps = append(steps, workload.CleanupStep("postload", pl.c.Tables, 0))
	}
	dirty := false
	for _, t := range pl.tests {
		if len(p.Tests) > 0 && !slices.Contains(p.Tests, t.Name) {
			continue
		}
		if dirty && !t.Write {
			steps = append(steps, pl.postwriteStep(p))
			dirty = false
		}
		st := workload.Step{
			Name: t.Name, Family: t.Name, Group: Group, Write: t.Write,
			Duration: p.ReadTime, Warmup: p.Warmup, Metric: metric.QPS,
		}
		if t.Write {
			st.Duration = p.WriteTime
		}
		if t.Time != "" {
			st.Duration, _ = time.ParseDuration(t.Time) // checked
		}
		st.Threads = slices.Clone(t.Threads)
		st.NewWorker = func(ctx context.Context, db engine.DB, id, n int, seed uint64) (workload.Worker, error) {
			return newWorker(ctx, t, p, db, id, seed)
		}
		steps = append(steps, st)
		dirty = dirty || t.Write
	}
	return steps, nil
}

func (pl *plan) postwriteStep(p workload.Params) workload.Step {
	target := p.PostwriteWait
	if target < 0 {
		target = workload.PostwriteTarget(pl.c.Load.Rows)
	}
	return workload.CleanupStep("postwrite", pl.c.Tables, target)
}

// prepareStep runs the setup statements, then the load. It first resets
// every seq() argument, so each cell's fresh database gets the same rows.
func (pl *plan) prepareStep(p workload.Params) workload.Step {
	return workload.Step{
		Name: "prepare", Warm: true, Write: true,
		Action: func(ctx context.Context, db engine.DB, log io.Writer) (workload.Tally, error) {
			var t workload.Tally
			for _, a := range pl.seqs {
				a.reset()
			}
			sqldb, conn, err := workload.ConnectSQL(ctx, db, "custom prepare")
			if err != nil {
				return t, err
			}
			defer conn.Close()
			setup, field := pl.c.Setup, "workload.custom.setup"
			if alt, ok := pl.c.SetupFor[sqldb.Dialect().Name]; ok {
				setup, field = alt, field+"_for."+sqldb.Dialect().Name
			}
			for i, s := range setup {
				if _, err := conn.Exec(ctx, s); err != nil {
					return t, fmt.Errorf("prepare: %s[%d]: %w", field, i, err)
				}
				t.Statements++
			}
			if pl.c.Load.Rows == 0 {
				return t, nil
			}
			start := time.Now()
			if err := pl.loadRows(ctx, conn, sqldb.Dialect(), p.Seed, &t); err != nil {
				return t, fmt.Errorf("prepare: load: %w", err)
			}
			el := time.Since(start)
			fmt.Fprintf(log, "prepare: %d rows loaded in %s (%.0f rows/s)\n", pl.c.Load.Rows,
				el.Round(time.Millisecond), float64(pl.c.Load.Rows)/el.Seconds())
			return t, nil
		},
	}
}

// loadRows executes the load statement Rows times with generated arguments,
// Batch executions per transaction.
func (pl *plan) loadRows(ctx context.Context, conn engine.Conn, d engine.Dialect, seed uint64, t *workload.Tally) error {
	l := pl.c.Load
	batch := int64(l.Batch)
	if batch == 0 {
		batch = defaultBatch
	}
	st, err := conn.Prepare(ctx, d.Bind(l.SQL), engine.Short)
	if err != nil {
		return err
	}
	defer st.Close()
	r := randgen.NewRand(seed)
	vals := make([]any, len(pl.load))
	var buf []byte
	for done := int64(0); done < l.Rows; {
		n := min(batch, l.Rows-done)
		if _, err := conn.Exec(ctx, d.BeginWrite); err != nil {
			return err
		}
		for i := int64(0); i < n; i++ {
			for j, a := range pl.load {
				vals[j], buf = a.draw(r, 0, buf)
			}
			got, err := st.Exec(ctx, vals...)
			if err != nil {
				conn.Exec(context.WithoutCancel(ctx), "ROLLBACK")
				return fmt.Errorf("row %d: %w", done+i+1, err)
			}
			t.Rows += got
			t.Statements++
		}
		if _, err := conn.Exec(ctx, "COMMIT"); err != nil {
			return err
		}
		t.Statements += 2
		done += n
	}
	return nil
}
