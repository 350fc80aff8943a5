package mysql_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"

	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
	"benchlab/internal/server/servertest"
)

// TestClients runs a DSN target on both client paths against a managed
// MariaDB: each records its path and ends a statement hung on a row lock
// when its context is cancelled (the server's own lock wait made longer
// than any test); a DSN that may use TLS gets the driver, with a note.
func TestClients(t *testing.T) {
	dsn := func(a engine.Address, extra string) string {
		return fmt.Sprintf("%s:%s@tcp(%s:%d)/%s%s", a.User, a.Password, a.Host, a.Port, a.Database, extra)
	}
	managed := servertest.Clients(t, servertest.Hang{
		Engine:  "mariadb",
		DSN:     dsn,
		Setup:   "CREATE TABLE h (id INT PRIMARY KEY, v INT) ENGINE=InnoDB SELECT 1 AS id, 0 AS v",
		Session: "SET SESSION innodb_lock_wait_timeout = 1000000",
		Lock:    "UPDATE h SET v = v + 1 WHERE id = ?",
		Waiting: "SELECT 1 FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'INNODB_ROW_LOCK_CURRENT_WAITS' AND VARIABLE_VALUE > 0",
		Timeout: func(err error) bool {
			var me *gomysql.MySQLError
			return errors.As(err, &me) && me.Number == 1205
		},
	})
	getenv, _ := servertest.Env(t)
	db := enginetest.Open(t, engine.Target{Name: "tls", Engine: "mariadb", DSN: dsn(managed.(engine.Addresser).Address(), "?tls=preferred"),
		Client: engine.ClientFast, Getenv: getenv})
	info, err := db.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.Client != "driver" || len(info.Notes) != 1 || !strings.Contains(info.Notes[0], "TLS") {
		t.Errorf("client fast, dsn tls=preferred: Info says client %q, notes %q; want the driver and a note naming TLS", info.Client, info.Notes)
	}
	if n, err := enginetest.Connect(t, db).Query(context.Background(), "SELECT v FROM h"); err != nil || n != 1 {
		t.Errorf("tls=preferred: %d rows, %v", n, err)
	}
}
