package mysql_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
	"benchlab/internal/engine/mysql"
	"benchlab/internal/server"
	"benchlab/internal/server/servertest"
)

// mysqlNamed is a MySQL-family server under MySQL's program names: Debian's
// mysqld and mysql_install_db, links to MariaDB's programs. It stands for
// an engine of its own that reuses the MySQL dialect and this family's
// lifecycle with other program names (Percona Server, Oracle MySQL 8),
// registered as such an engine's package would register it from init.
var mysqlNamed = mysql.Family{FamilyName: "mysql-named", Servers: []string{"mysqld"},
	Inits: []string{"mysql_install_db"}, SelfInit: []string{"mysqld"}, Default: "/usr"}

func init() {
	engine.Register(mysql.NewDriver("mysql-named", "MariaDB under MySQL's program names (test)", mysqlNamed))
}

// TestEngineOfItsOwn runs an engine registered with NewDriver and a Family
// of other program names: its install is found and checked under those
// names, its data dir is initialised with the script the Family names, it
// serves queries in the MySQL dialect, and it runs a suite end to end
// through `benchlab run`.
func TestEngineOfItsOwn(t *testing.T) {
	tg := engine.Target{Name: "own", Engine: "mysql-named"}
	if err := server.CheckInstall(tg); err != nil {
		t.Fatalf("CheckInstall: %v", err)
	}
	getenv, logs := servertest.Env(t)
	tg.Getenv = getenv
	db := enginetest.Open(t, tg)
	in := db.(interface{ Instance() *server.Instance }).Instance()
	if b := in.Binaries(); !strings.HasSuffix(b.Init, "/mysql_install_db") {
		t.Errorf("initialised with %q, want the Family's mysql_install_db", b.Init)
	}
	ctx := context.Background()
	if d := db.(engine.SQL).Dialect(); d.Name != engine.MySQL.Name {
		t.Errorf("dialect %s, want mysql", d.Name)
	}
	info, err := db.Info(ctx)
	if err != nil || info.Engine != "mysql-named" || !strings.HasPrefix(info.Version, "10.11.") {
		t.Errorf("info %+v %v; want engine mysql-named, MariaDB 10.11", info, err)
	}
	log, _ := os.ReadFile(in.LogPath)
	if !strings.Contains(string(log), "benchlab: running /usr/bin/mysql_install_db") {
		t.Errorf("server log does not show mysql_install_db running:\n%s", log)
	}
	if err := db.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if !strings.HasPrefix(in.KeptLog, logs) {
		t.Errorf("log kept at %s, want it under the injected BENCHLAB_SERVER_LOGS %s", in.KeptLog, logs)
	}
	servertest.Custom(t, "mysql-named")
}
