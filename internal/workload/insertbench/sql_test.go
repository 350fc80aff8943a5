package insertbench

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/golden"
)

// TestGoldenSQL records every statement per dialect, so a change to the SQL
// of docs/method.md 1.2, 1.3, 1.6 and 1.7 shows up in review.
func TestGoldenSQL(t *testing.T) {
	for _, d := range []engine.Dialect{engine.SQLite, engine.Postgres, engine.MySQL} {
		t.Run(d.Name, func(t *testing.T) {
			var b strings.Builder
			ddl, err := CreateTable(d, "pi1")
			if err != nil {
				t.Fatal(err)
			}
			stmts := append(ddl, CreateIndexes(d, "pi1")...)
			stmts = append(stmts, newRowGen(1).insert(InsertPrefix("pi1"), 2, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)),
				DeleteSQL(d, "pi1", 50))
			for _, q := range rangeQueries {
				stmts = append(stmts, d.Bind(q.sql(d, "pi1")))
			}
			stmts = append(stmts, PointSQL(d, "pi1"), MinSQL("pi1"), MaxSQL("pi1"))
			for _, s := range stmts {
				fmt.Fprintf(&b, "%s;\n", s)
			}
			golden.Check(t, filepath.Join("testdata", d.Name+".sql.golden"), b.String())
		})
	}
}

// TestUnknownDialect refuses to spell the table for a dialect the suite does
// not know.
func TestUnknownDialect(t *testing.T) {
	if _, err := CreateTable(engine.Dialect{Name: "oracle"}, "pi1"); err == nil || !strings.Contains(err.Error(), `"oracle"`) {
		t.Errorf("got %v, want an error naming the dialect", err)
	}
}

// TestMyRocksDDL: on a dialect naming MyRocks the table is ENGINE=ROCKSDB
// and each secondary index has a statement of its own (docs/method.md 1.2);
// the plain MySQL dialect stays InnoDB with one ALTER.
func TestMyRocksDDL(t *testing.T) {
	rocks := engine.MySQL
	rocks.TableEngine, rocks.AlterAddIndex = "ROCKSDB", false
	ddl, err := CreateTable(rocks, "pi1")
	if err != nil || len(ddl) != 1 || !strings.HasSuffix(ddl[0], ") engine=ROCKSDB") {
		t.Errorf("MyRocks DDL %q %v", ddl, err)
	}
	if idx := CreateIndexes(rocks, "pi1"); len(idx) != 3 || !strings.HasPrefix(idx[0], "create index pi1_marketsegment on pi1") {
		t.Errorf("MyRocks indexes %q, want three CREATE INDEX", idx)
	}
	ddl, _ = CreateTable(engine.MySQL, "pi1")
	if !strings.HasSuffix(ddl[0], ") engine=InnoDB") || len(CreateIndexes(engine.MySQL, "pi1")) != 1 {
		t.Errorf("InnoDB DDL %q", ddl)
	}
}
