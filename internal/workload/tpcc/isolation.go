package tpcc

import (
	"context"
	"fmt"
	"strings"

	"benchlab/internal/engine"
)

// This file is the terminals' transaction isolation: its levels, set per
// session and read back as a fact.

// Facts of the tpcc step's result: FactIsolation is the terminals' session
// isolation level (an Isolation), FactPrepared 1 with prepared statements
// and 0 with the text protocol.
const (
	FactIsolation = "tpcc_isolation"
	FactPrepared  = "tpcc_prepared"
)

// Isolation is a transaction isolation level, as a number for result facts.
type Isolation int

// The levels, weakest first; IsolationUnknown is a name not recognised.
const (
	IsolationUnknown Isolation = iota
	ReadUncommitted
	ReadCommitted
	RepeatableRead
	Serializable
)

// String is the level's SQL name.
func (l Isolation) String() string {
	switch l {
	case ReadUncommitted:
		return "read uncommitted"
	case ReadCommitted:
		return "read committed"
	case RepeatableRead:
		return "repeatable read"
	case Serializable:
		return "serializable"
	}
	return "unknown"
}

// parseIsolation reads a level as PostgreSQL ("repeatable read") or MySQL
// ("REPEATABLE-READ") writes it.
func parseIsolation(s string) Isolation {
	s = strings.ToLower(strings.ReplaceAll(strings.TrimSpace(s), "-", " "))
	for l := ReadUncommitted; l <= Serializable; l++ {
		if s == l.String() {
			return l
		}
	}
	return IsolationUnknown
}

// isolationQueries ask a session its isolation level per dialect:
// PostgreSQL's transaction_isolation, MySQL's transaction_isolation
// (tx_isolation before MySQL 8 and MariaDB 11.1); none for SQLite, whose
// transactions are serializable.
var isolationQueries = map[string][]string{
	"sqlite":   nil,
	"postgres": {"SHOW transaction_isolation"},
	"mysql":    {"SELECT @@SESSION.transaction_isolation", "SELECT @@SESSION.tx_isolation"},
}

// setIsolationSQL sets a session's isolation level per dialect, followed by
// the level's name; none for SQLite, whose transactions are all
// serializable.
var setIsolationSQL = map[string]string{
	"sqlite":   "",
	"postgres": "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL ",
	"mysql":    "SET SESSION TRANSACTION ISOLATION LEVEL ",
}

// setIsolation sets the session's isolation level to the option's, as
// sysbench-tpcc's set_isolation_level does; nothing when it is empty.
// SQLite accepts only serializable, the level it always runs at.
func setIsolation(ctx context.Context, c engine.Conn, d engine.Dialect, option string) error {
	if option == "" {
		return nil
	}
	q, err := engine.Spell("tpcc isolation level", d, setIsolationSQL)
	if err != nil {
		return err
	}
	if q == "" {
		if levelOf(option) != Serializable {
			return fmt.Errorf("isolation %q: SQLite runs every transaction serializable; want ser or leave it out", option)
		}
		return nil
	}
	level := strings.ToUpper(levelOf(option).String())
	if _, err := c.Exec(ctx, q+level); err != nil {
		return fmt.Errorf("set isolation %s: %w", level, err)
	}
	return nil
}

// isolationOf asks the session its isolation level (isolationQueries).
func isolationOf(ctx context.Context, c engine.Conn, d engine.Dialect) (Isolation, error) {
	queries, err := engine.Spell("tpcc isolation level", d, isolationQueries)
	if err != nil {
		return IsolationUnknown, err
	}
	if len(queries) == 0 {
		return Serializable, nil
	}
	var last error
	for _, q := range queries {
		rows, err := c.Values(ctx, q)
		if err != nil {
			last = err
			continue
		}
		if len(rows) > 0 && len(rows[0]) > 0 {
			return parseIsolation(rows[0][0]), nil
		}
	}
	return IsolationUnknown, fmt.Errorf("isolation level: %w", last)
}
