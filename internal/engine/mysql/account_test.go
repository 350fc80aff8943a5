package mysql_test

import (
	"context"
	"strings"
	"testing"

	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
	"benchlab/internal/server/servertest"
)

// TestBenchAccount checks the account benchlab's workers and readers use on
// a managed MariaDB: it holds every privilege on the benchmark database and,
// server-wide, only PROCESS and SUPER. It may not create another database,
// read the grant tables, write files, give itself more or lift read_only;
// what benchlab runs as it works (DDL in sbtest, the engine's status, the
// cleanup's SET GLOBAL).
func TestBenchAccount(t *testing.T) {
	getenv, _ := servertest.Env(t)
	ctx := context.Background()
	db := enginetest.Open(t, engine.Target{Name: "account", Engine: "mariadb", Getenv: getenv})
	c := enginetest.Connect(t, db)
	grants, err := c.Values(ctx, "SHOW GRANTS")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, g := range grants {
		lines = append(lines, strings.SplitN(g[0], " IDENTIFIED", 2)[0])
	}
	want := []string{"GRANT PROCESS, SUPER ON *.* TO `benchlab`@`127.0.0.1`", "GRANT ALL PRIVILEGES ON `sbtest`.* TO `benchlab`@`127.0.0.1`"}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("grants:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	for _, q := range []string{
		"CREATE DATABASE other",
		"SELECT COUNT(*) FROM mysql.user",
		"SELECT COUNT(*) FROM mysql.global_priv",
		"GRANT ALL ON *.* TO 'benchlab'@'127.0.0.1'",
		"CREATE USER 'other'@'127.0.0.1'",
		"SELECT 1 INTO OUTFILE 'account-test.txt'",
		"SET GLOBAL read_only = ON",
	} {
		if _, err := c.Exec(ctx, q); err == nil {
			t.Errorf("%s: allowed; want it refused", q)
		} else {
			t.Logf("%s: refused: %v", q, err)
		}
	}
	for _, q := range []string{
		"CREATE TABLE acct (id INT PRIMARY KEY)",
		"INSERT INTO acct VALUES (1)",
		"ANALYZE TABLE acct",
		"SHOW ENGINE INNODB STATUS",
		"SELECT COUNT(*) FROM information_schema.innodb_trx",
		"SET GLOBAL innodb_max_dirty_pages_pct_lwm = @@innodb_max_dirty_pages_pct_lwm",
		"DROP TABLE acct",
	} {
		if _, err := c.Query(ctx, q); err != nil {
			t.Errorf("%s: %v; want it allowed", q, err)
		}
	}
}
