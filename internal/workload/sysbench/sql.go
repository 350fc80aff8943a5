package sysbench

import (
	"fmt"
	"strings"

	"benchlab/internal/engine"
)

// This file spells every statement of the suite (docs/method.md 2.2 and 2.4). The
// text follows the Lua scripts exactly, including their capitalisation, so a
// statement digest in the server matches the one sysbench produces. Statements
// use '?' placeholders; Dialect.Bind renumbers them for PostgreSQL.

// TableName returns the name of table n (1-based).
func TableName(n int) string { return fmt.Sprintf("sbtest%d", n) }

// createTable is the DDL of a table per dialect, for table n.
var createTable = map[string]string{
	"postgres": "CREATE TABLE sbtest%d(\n  id SERIAL,\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  PRIMARY KEY (id)\n)",
	"mysql":    "CREATE TABLE sbtest%d(\n  id INTEGER NOT NULL AUTO_INCREMENT,\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  PRIMARY KEY (id)\n) /*! ENGINE = %[2]s */",
	// SQLite: INTEGER PRIMARY KEY makes id the rowid, which is SQLite's
	// clustered key and auto-assigns ascending ids like AUTO_INCREMENT.
	"sqlite": "CREATE TABLE sbtest%d(\n  id INTEGER NOT NULL PRIMARY KEY,\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL\n)",
}

// CreateTable returns the DDL of table n (lua/oltp_common.lua create_table)
// in dialect d, MySQL's naming the dialect's storage engine; a dialect the
// suite does not spell is an error.
func CreateTable(d engine.Dialect, n int) (string, error) {
	f, err := engine.Spell("sysbench CREATE TABLE", d, createTable)
	if err != nil {
		return "", err
	}
	if d.Name == engine.MySQL.Name {
		// sysbench's --mysql-storage-engine, lower case as its default.
		return fmt.Sprintf(f, n, strings.ToLower(d.StorageEngine())), nil
	}
	return fmt.Sprintf(f, n), nil
}

// CreateIndex returns the secondary index built after the load.
func CreateIndex(n int) string { return fmt.Sprintf("CREATE INDEX k_%d ON sbtest%d(k)", n, n) }

// DropTable returns the statement that removes table n.
func DropTable(n int) string { return fmt.Sprintf("DROP TABLE IF EXISTS sbtest%d", n) }

// LoadInsertPrefix starts a multi-row INSERT of the load; rows follow as
// "(k, 'c', 'pad')" literals, the id being assigned by the engine.
func LoadInsertPrefix(n int) string { return fmt.Sprintf("INSERT INTO sbtest%d(k, c, pad) VALUES", n) }

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// Statement texts of the tests, for table n.
func pointSelect(n int) string { return fmt.Sprintf("SELECT c FROM sbtest%d WHERE id=?", n) }

func inListSelect(n int, cols, key string, points int) string {
	return fmt.Sprintf("SELECT %s FROM sbtest%d WHERE %s IN (%s)", cols, n, key, placeholders(points))
}

func rangeSelect(n int, cols, key string) string {
	return fmt.Sprintf("SELECT %s FROM sbtest%d WHERE %s BETWEEN ? AND ?", cols, n, key)
}

func scanSelect(n int) string { return fmt.Sprintf("SELECT * from sbtest%d WHERE LENGTH(c) < 0", n) }

func simpleRange(n int) string {
	return fmt.Sprintf("SELECT c FROM sbtest%d WHERE id BETWEEN ? AND ?", n)
}

func sumRange(n int) string {
	return fmt.Sprintf("SELECT SUM(k) FROM sbtest%d WHERE id BETWEEN ? AND ?", n)
}

func orderRange(n int) string {
	return fmt.Sprintf("SELECT c FROM sbtest%d WHERE id BETWEEN ? AND ? ORDER BY c", n)
}

func distinctRange(n int) string {
	return fmt.Sprintf("SELECT DISTINCT c FROM sbtest%d WHERE id BETWEEN ? AND ? ORDER BY c", n)
}

func countRange(n int) string {
	return fmt.Sprintf("SELECT count(c) FROM sbtest%d WHERE id BETWEEN ? AND ?", n)
}

func indexUpdate(n int) string { return fmt.Sprintf("UPDATE sbtest%d SET k=k+1 WHERE id=?", n) }

func nonIndexUpdate(n int) string { return fmt.Sprintf("UPDATE sbtest%d SET c=? WHERE id=?", n) }

func inListUpdate(n, points int) string {
	return fmt.Sprintf("UPDATE sbtest%d set c=? WHERE id IN (%s)", n, placeholders(points))
}

func deleteRow(n int) string { return fmt.Sprintf("DELETE FROM sbtest%d WHERE id=?", n) }

func insertWithID(n int) string {
	return fmt.Sprintf("INSERT INTO sbtest%d (id, k, c, pad) VALUES (?, ?, ?, ?)", n)
}

// insertLiteral renders oltp_insert's unprepared statement. Where 0 takes
// the next AUTO_INCREMENT value (MySQL) it passes id 0, as sysbench does;
// PostgreSQL and SQLite leave id out.
func insertLiteral(d engine.Dialect, n int, k int64, c, pad string) string {
	if d.ZeroTakesNextID {
		return fmt.Sprintf("INSERT INTO sbtest%d (id, k, c, pad) VALUES (0, %d, '%s', '%s')", n, k, c, pad)
	}
	return fmt.Sprintf("INSERT INTO sbtest%d (k, c, pad) VALUES (%d, '%s', '%s')", n, k, c, pad)
}
