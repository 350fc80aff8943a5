package servertest

import (
	"fmt"
	"testing"

	_ "benchlab/internal/workload/custom" // the custom SQL suite
)

// customSpec is a custom SQL workload in the dialect-neutral SQL that every
// server family accepts: '?' placeholders, a transaction, and an insert with
// RETURNING (PostgreSQL; MariaDB since 10.5).
const customSpec = `name = "custom-%[1]s"
[[target]]
name = "only"
engine = %[1]q
[workload]
suite = "custom"
threads = [1, 2]
events = 20
read_time = "5m"
write_time = "5m"
warmup = "100ms"
postwrite_wait = "0s"
report_interval = "0s"
[workload.custom]
setup = ["DROP TABLE IF EXISTS accounts",
  "CREATE TABLE accounts (id BIGINT PRIMARY KEY, owner VARCHAR(32) NOT NULL, balance BIGINT NOT NULL)"]
tables = ["accounts"]
[workload.custom.setup_for]
sqlite = ["NOT SQL: a server must not run SQLite's setup"]
mysql = ["DROP TABLE IF EXISTS accounts",
  "CREATE TABLE accounts (id BIGINT PRIMARY KEY, owner VARCHAR(32) NOT NULL, balance BIGINT NOT NULL) ENGINE=InnoDB"]
[workload.custom.load]
sql = "INSERT INTO accounts (id, owner, balance) VALUES (?, ?, ?)"
rows = 3000
args = ["seq(1)", "string(10)", "uniform(0, 100)"]
[[workload.custom.test]]
name = "balance"
statements = ["SELECT balance FROM accounts WHERE id = ?"]
args = ["uniform(1, 3000)"]
[[workload.custom.test]]
name = "transfer"
transaction = true
write = true
statements = ["UPDATE accounts SET balance = balance - 1 WHERE id = ?", "UPDATE accounts SET balance = balance + 1 WHERE id = ?"]
args = ["zipf(3000)", "uniform(1, 3000)"]
[[workload.custom.test]]
name = "open"
write = true
statements = ["INSERT INTO accounts (id, owner, balance) VALUES (?, ?, 0) RETURNING id"]
args = ["seq(3001)", "'new'"]
[[workload.custom.test]]
name = "richest"
statements = ["SELECT id FROM accounts ORDER BY balance DESC, id LIMIT 3"]
statements_for = { postgres = ["SELECT id FROM accounts ORDER BY balance DESC, id FETCH FIRST 3 ROWS ONLY"] }
`

// Custom runs the custom SQL suite on a managed server through `benchlab
// run`: every test runs without errors at 1 and 2 threads, with the
// statements and rows per operation its SQL implies (so the placeholders
// were bound, the transaction counted and RETURNING read as rows). Each
// step ends after a count of operations (workload.events), its time only
// a bound: a step of 1 s once did none on a busy machine.
func Custom(t *testing.T, engineName string) {
	res := runOneTarget(t, fmt.Sprintf(customSpec, engineName))
	perEvent := map[string][2]int64{"balance": {1, 1}, "transfer": {4, 2}, "open": {1, 1}, "richest": {1, 3}}
	seen := map[string]int{}
	for _, x := range res {
		if x.Action {
			if x.Test == "prepare" && x.Rows != 3000 {
				t.Errorf("prepare loaded %d rows, want 3000", x.Rows)
			}
			continue
		}
		want, ok := perEvent[x.Test]
		if !ok {
			t.Errorf("unexpected test %q", x.Test)
			continue
		}
		seen[x.Test]++
		if x.Events < 20 || x.Errors > 0 {
			t.Errorf("%s @%d: %d events, %d errors %v", x.Test, x.Threads, x.Events, x.Errors, x.ErrorSamples)
			continue
		}
		if x.Statements != want[0]*x.Events || x.Rows != want[1]*x.Events {
			t.Errorf("%s @%d: %d events, %d statements, %d rows; want %d statements and %d rows per event",
				x.Test, x.Threads, x.Events, x.Statements, x.Rows, want[0], want[1])
		}
	}
	for name := range perEvent {
		if seen[name] != 2 {
			t.Errorf("%s ran at %d thread counts, want 2", name, seen[name])
		}
	}
}
