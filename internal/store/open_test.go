package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// childEnv makes the test binary open a store in a process of its own
// (TestMain): "open:<path>" opens it, "crash:<version>:<path>" kills itself
// with SIGKILL inside the migration, after the statement that reaches
// version.
const childEnv = "BENCHLAB_STORE_CHILD"

func TestMain(m *testing.M) {
	if c := os.Getenv(childEnv); c != "" {
		os.Exit(child(c))
	}
	os.Exit(m.Run())
}

func child(c string) int {
	mode, rest, _ := strings.Cut(c, ":")
	if mode == "crash" {
		v, path, _ := strings.Cut(rest, ":")
		at, _ := strconv.Atoi(v)
		migrated = func(version int) {
			if version == at {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
		}
		rest = path
	}
	s, err := Open(rest)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	s.Close()
	return 0
}

func childOpen(arg string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+arg)
	return cmd
}

// storeFiles lists the files in dir.
func storeFiles(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// TestOpenAnyName: a store's file is the name given, whatever characters
// it holds (SQLite's URI would read '#' as a fragment, '?' as a query and
// '%' as an escape), and reopens with what was written.
func TestOpenAnyName(t *testing.T) {
	for _, name := range []string{"res#1.db", "a?b=c.db", "100%.db", "x%23y.db", "with space.db", "päth;&'\".db"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, name)
			s, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			e := Experiment{Name: "named", Targets: []string{"a"}}
			if err := s.CreateExperiment(context.Background(), &e); err != nil {
				t.Fatal(err)
			}
			s.Close()
			if got := storeFiles(t, dir); !slices.Equal(got, []string{name}) {
				t.Fatalf("files %q, want only %q", got, name)
			}
			s, err = Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if got, err := s.Experiment(context.Background(), 0); err != nil || got.Name != "named" {
				t.Errorf("reopened: %+v %v", got, err)
			}
		})
	}
}

// checkSchema wants the file at path fully migrated: its version, its
// application id, and one of a column a migration added.
func checkSchema(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v, id, n int
	if err := db.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("PRAGMA application_id").Scan(&id); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("SELECT count(*) FROM pragma_table_info('results') WHERE name = 'eff_seconds'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if v != len(schema) || id != AppID || n != 1 {
		t.Errorf("schema version %d, application id %#x, %d eff_seconds columns; want %d, %#x, 1", v, id, n, len(schema), AppID)
	}
}

// TestOpenFreshAtOnce opens one new store from 8 goroutines and 4
// processes at once, all started while another connection holds the
// file's write lock, so that all of them find it empty: each migrates it
// or finds it migrated once the lock is released, none fails.
func TestOpenFreshAtOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fresh.db")
	holder, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	lock, err := holder.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 12)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := Open(path)
			if err == nil {
				err = s.Close()
			}
			errs[i] = err
		}()
	}
	cmds := make([]*exec.Cmd, 4)
	outs := make([]bytes.Buffer, 4)
	for i := range cmds {
		cmds[i] = childOpen("open:" + path)
		cmds[i].Stderr = &outs[i]
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	// The openers queue behind the lock (their busy timeout is 10 s);
	// how long they wait does not change what the test wants.
	time.Sleep(300 * time.Millisecond)
	if _, err := lock.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	lock.Close()
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			errs[8+i] = fmt.Errorf("process: %v: %s", err, outs[i].String())
		}
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("opener %d: %v", i, err)
		}
	}
	checkSchema(t, path)
}

// TestOpenCrashMidMigration kills a process inside the migration of a new
// store (after the statement that reaches each version given): the file
// is left unmigrated, and the next open migrates it.
func TestOpenCrashMidMigration(t *testing.T) {
	for _, at := range []int{1, 20, len(schema)} {
		path := filepath.Join(t.TempDir(), "r.db")
		cmd := childOpen(fmt.Sprintf("crash:%d:%s", at, path))
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("version %d: child ended with %v, want killed", at, err)
		}
		s, err := Open(path)
		if err != nil {
			t.Fatalf("killed at version %d: reopen: %v", at, err)
		}
		s.Close()
		checkSchema(t, path)
	}
}

// fileBytes is a file's bytes, or nil when it does not exist.
func fileBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return b
}

// TestOpenRefusesForeign: another program's SQLite database, and a file
// that is not SQLite, are refused with ErrNotStore, and left byte for
// byte as they were, with no file added beside them.
func TestOpenRefusesForeign(t *testing.T) {
	dir := t.TempDir()
	foreign := filepath.Join(dir, "notes.db")
	db, err := sql.Open("sqlite3", foreign)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('keep me')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, bytes.Repeat([]byte("not a database\n"), 100), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{{foreign, "notes"}, {text, "not a database"}} {
		before := fileBytes(t, c.path)
		_, err := Open(c.path)
		if !errors.Is(err, ErrNotStore) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.path) {
			t.Errorf("%s: error %v, want ErrNotStore naming the file and %q", c.path, err, c.want)
		}
		if !bytes.Equal(fileBytes(t, c.path), before) {
			t.Errorf("%s was changed", c.path)
		}
	}
	if got := storeFiles(t, dir); !slices.Equal(got, []string{"notes.db", "notes.txt"}) {
		t.Errorf("files %q, want the two as they were", got)
	}
}

// TestOpenAdoptsOldStore: a store made before the application id (schema
// version and tables, id 0) opens, keeps its data and gets the id.
func TestOpenAdoptsOldStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	e := Experiment{Name: "old", Targets: []string{"a"}}
	if err := s.CreateExperiment(context.Background(), &e); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec("PRAGMA application_id = 0"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, err := s.Experiment(context.Background(), 0); err != nil || got.Name != "old" {
		t.Errorf("experiment %+v %v", got, err)
	}
	var id int
	if err := s.db.QueryRow("PRAGMA application_id").Scan(&id); err != nil || id != AppID {
		t.Errorf("application id %#x %v, want %#x", id, err, AppID)
	}
}

// TestOpenRefusesCorrupt: a store with a damaged page is refused at open
// with ErrCorrupt, before anything is written.
func TestOpenRefusesCorrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	e := Experiment{Name: "exp", Targets: []string{"a"}}
	if err := s.CreateExperiment(ctx, &e); err != nil {
		t.Fatal(err)
	}
	r := Run{ExperimentID: e.ID, Target: "a", Engine: "sqlite", Started: time.Now()}
	if err := s.CreateRun(ctx, &r); err != nil {
		t.Fatal(err)
	}
	res := Result{RunID: r.ID, Test: "t", Status: StatusOK}
	for i := range 3000 {
		res.Intervals = append(res.Intervals, Interval{Sec: i, Seconds: 1, Events: int64(i)})
	}
	if err := s.SaveResult(ctx, &res); err != nil {
		t.Fatal(err)
	}
	s.Close() // the last connection folds the WAL into the file
	b := fileBytes(t, path)
	if len(b) < 20*4096 {
		t.Fatalf("store of %d bytes, want over 20 pages", len(b))
	}
	// Scribble over a page in the middle of the intervals' b-tree.
	copy(b[10*4096:11*4096], bytes.Repeat([]byte{0xA5}, 4096))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Open(path)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) {
		t.Fatalf("error %v, want ErrCorrupt naming the file", err)
	}
	if !bytes.Equal(fileBytes(t, path), b) {
		t.Error("the corrupt store was changed")
	}

	// A store too large for a full check at open has its small tables
	// checked; a run checks the whole of it.
	defer func(n int64) { fullCheckBytes = n }(fullCheckBytes)
	fullCheckBytes = 0
	s, err = Open(path)
	if err != nil {
		t.Fatalf("open of a large store checks only its small tables: %v", err)
	}
	defer s.Close()
	if err := s.CheckIntegrity(ctx); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) {
		t.Errorf("CheckIntegrity: %v, want ErrCorrupt naming the file", err)
	}
}

// TestOpenRepairsHalfMigrated opens a store left by a benchlab that ran
// each migration on its own and was killed after migration 20's statement,
// before the version that counts it (19): the open completes the schema
// instead of failing on the column that is there already.
func TestOpenRepairsHalfMigrated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "half.db")
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range schema[:20] {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec("PRAGMA user_version = 19"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err := Open(path)
	if err != nil {
		t.Fatalf("open a store killed between a migration and its version: %v", err)
	}
	s.Close()
	checkSchema(t, path)
}
