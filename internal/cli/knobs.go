package cli

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"benchlab/internal/dsn"
	"benchlab/internal/spec"
)

// knobs are sysbench's options that mean the same in benchlab: the
// open-loop rate, the event limit, the live lines' percentile, the k
// distribution, and the connection of a single target to a running server.
type knobs struct {
	rate, percentile float64
	events           int64
	maxErrorRate     float64
	opTimeout        time.Duration
	randType, dsn    string
	pg, my           conn
}

// conn is sysbench's --pgsql-* or --mysql-* connection options.
type conn struct {
	host, user, password, db string
	port                     int
}

// Flag groups of `benchlab run --help`, in order.
const (
	groupExperiment = "Experiment"
	groupWorkload   = "Workload (sysbench's names)"
	groupConnection = "Connection to a running server (one target; sysbench's names)"
	groupOutput     = "Results and output"
)

// groupAnnotation is the pflag annotation naming a flag's help group.
const groupAnnotation = "benchlab_group"

func setGroup(fs *pflag.FlagSet, group string, names ...string) {
	for _, n := range names {
		if err := fs.SetAnnotation(n, groupAnnotation, []string{group}); err != nil {
			panic(fmt.Sprintf("flag group of --%s: %v", n, err))
		}
	}
}

// addKnobs registers sysbench's knobs on fs.
func addKnobs(fs *pflag.FlagSet, k *knobs) {
	fs.Float64Var(&k.rate, "rate", 0, "open loop: operations per second over all threads of each test (0: as fast as possible); latency counts from each operation's intended start. "+
		"In a test of several roles it paces the headline one (insert's queries in qr/qp, its inserts in l.i0); a role with a rate of its own keeps it")
	fs.Int64Var(&k.events, "events", 0, "end each test after this many measured operations (the warm-up's are not counted) or at its time, whichever comes first (0: no limit). "+
		"In a test of several roles it counts the headline one's; a role with a count of its own (insert's l.i0) keeps it")
	fs.Float64Var(&k.percentile, "percentile", 0, "latency percentile of the live lines (default 95)")
	fs.StringVar(&k.randType, "rand-type", "", "the same as --k-rand-type (sysbench's name): k in the load uniform (sysbench 1.1) or special (1.0.20)")
	fs.Float64Var(&k.maxErrorRate, "max-error-rate", 0, fmt.Sprintf("fail a target when a test's failed operations pass this share of its attempted ones "+
		"(like sysbench's --mysql-ignore-errors, the other way round; default %g, 1: no limit)", spec.DefaultMaxErrorRate))
	fs.DurationVar(&k.opTimeout, "op-timeout", 0, fmt.Sprintf("fail an operation that runs this long (counted as an error); "+
		"a test that overruns its time by more than this plus 10s ends failed (default %s)", spec.DefaultOpTimeout))
	setGroup(fs, groupWorkload, "rate", "events", "percentile", "rand-type", "max-error-rate", "op-timeout")
	fs.StringVar(&k.dsn, "dsn", "", "connection string of a running server (postgres://user@host:port/db, host=h port=5432 user=u dbname=db, or user:pw@tcp(host:port)/db); the password is never stored")
	for _, c := range []struct {
		prefix, engine string
		c              *conn
		port           int
	}{{"pgsql", "PostgreSQL", &k.pg, 5432}, {"mysql", "MySQL/MariaDB", &k.my, 3306}} {
		fs.StringVar(&c.c.host, c.prefix+"-host", "localhost", c.engine+" server host")
		fs.IntVar(&c.c.port, c.prefix+"-port", c.port, c.engine+" server port")
		fs.StringVar(&c.c.user, c.prefix+"-user", "sbtest", c.engine+" user")
		fs.StringVar(&c.c.password, c.prefix+"-password", "", c.engine+" password (never stored; a rerun takes it from the environment)")
		fs.StringVar(&c.c.db, c.prefix+"-db", "sbtest", c.engine+" database")
		setGroup(fs, groupConnection, c.prefix+"-host", c.prefix+"-port", c.prefix+"-user", c.prefix+"-password", c.prefix+"-db")
	}
	setGroup(fs, groupConnection, "dsn")
}

// anySet says whether a flag with one of the prefixes was given.
func anySet(set map[string]bool, prefix string) bool {
	for n := range set {
		if strings.HasPrefix(n, prefix) {
			return true
		}
	}
	return false
}

// apply sets the knobs that were given on s. engineSet says --engine was
// given; without it, --pgsql-* makes a postgres target and --mysql-* a
// mysql one.
func (k *knobs) apply(s *spec.Spec, set map[string]bool) error {
	w := &s.Workload
	if set["rate"] {
		w.Rate = k.rate
	}
	if set["events"] {
		if k.events < 0 || k.events > spec.MaxEvents {
			return usagef("flag --events: %d is not allowed; want a count from 0 (no limit) to %d", k.events, int64(spec.MaxEvents))
		}
		w.Events = k.events
	}
	for _, c := range []struct {
		flag, what string
		set        bool
	}{{"rate", "pace its operations", w.Rate > 0}, {"events", "count its operations as they run", w.Events > 0}} {
		if i, tool, ok := spec.StepToolTarget(s.Targets); ok && set[c.flag] && c.set {
			return usagef("flag --%s: target %q runs each step in %s, its own process with its own threads, not in benchlab's "+
				"workers, which alone can %s; leave --%s out for it", c.flag, s.Targets[i].Name, tool, c.what, c.flag)
		}
	}
	if set["percentile"] {
		w.Percentile = k.percentile
	}
	if set["max-error-rate"] {
		if !(k.maxErrorRate >= 0 && k.maxErrorRate <= 1) {
			return usagef("flag --max-error-rate: %v is not allowed; want a share of failed operations from 0 to 1 (0: the default %g, 1: no limit)",
				k.maxErrorRate, spec.DefaultMaxErrorRate)
		}
		w.MaxErrorRate = k.maxErrorRate
	}
	if set["op-timeout"] {
		if k.opTimeout < 0 {
			return usagef("flag --op-timeout: %s is not allowed; want a duration > 0 (0: the default %s)", k.opTimeout, spec.DefaultOpTimeout)
		}
		w.OpTimeout.Duration = k.opTimeout
	}
	if set["rand-type"] {
		v := strings.ToLower(k.randType)
		if v != "uniform" && v != "special" {
			return usagef("flag --rand-type: %q is not allowed; benchlab draws k uniform (sysbench 1.1) or special (1.0.20)", k.randType)
		}
		// The sysbench suite's own option (--k-rand-type) holds it.
		pf := pflag.NewFlagSet(w.Suite, pflag.ContinueOnError)
		if o := w.Options(); o != nil {
			o.Flags(pf)
		}
		if pf.Lookup("k-rand-type") == nil {
			return usagef("flag --rand-type: the distribution of k in the sysbench suite's load; this run's suite is %s", w.Suite)
		}
		if err := pf.Set("k-rand-type", v); err != nil {
			return usagef("flag --rand-type: %v", err)
		}
	}
	pg, my := anySet(set, "pgsql-"), anySet(set, "mysql-")
	if !pg && !my && !set["dsn"] {
		return nil
	}
	if pg && my {
		return usagef("flags --pgsql-* and --mysql-*: give one server's connection, not both")
	}
	if set["dsn"] && (pg || my) {
		return usagef("flag --dsn: give either --dsn or the --pgsql-*/--mysql-* flags, not both")
	}
	if len(s.Targets) != 1 {
		return usagef("flag --dsn/--pgsql-*/--mysql-*: for a single target; this spec has %d (put dsn = \"...\" in each [[target]])", len(s.Targets))
	}
	t := &s.Targets[0]
	connStr := k.dsn
	switch {
	case pg:
		connStr = k.pg.postgresDSN()
	case my:
		connStr = k.my.mysqlDSN()
	}
	if _, err := dsn.Parse(connStr); err != nil {
		return usagef("flag --dsn: %v", err)
	}
	t.DSN = connStr
	return nil
}

// inferEngine picks the engine of a flag-built target from the connection
// flags when --engine is not given: --pgsql-* or a postgres:// DSN make
// postgres, --mysql-* or a tcp(...) DSN mysql.
func (k *knobs) inferEngine(set map[string]bool) string {
	switch {
	case anySet(set, "pgsql-"):
		return "postgres"
	case anySet(set, "mysql-"):
		return "mysql"
	case set["dsn"]:
		if d, err := dsn.Parse(k.dsn); err == nil {
			return d.Family
		}
	}
	return ""
}

func (c conn) postgresDSN() string {
	u := url.URL{Scheme: "postgres", Host: net.JoinHostPort(c.host, strconv.Itoa(c.port)), Path: "/" + c.db,
		RawQuery: "sslmode=disable"} // sysbench's --pgsql-sslmode default
	if c.password != "" {
		u.User = url.UserPassword(c.user, c.password)
	} else {
		u.User = url.User(c.user)
	}
	return u.String()
}

func (c conn) mysqlDSN() string {
	cred := c.user
	if c.password != "" {
		cred += ":" + c.password
	}
	return fmt.Sprintf("%s@tcp(%s)/%s", cred, net.JoinHostPort(c.host, strconv.Itoa(c.port)), c.db)
}
