package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"benchlab/internal/engine"
	"benchlab/internal/server"
	"benchlab/internal/store"
)

// TestExistingServerByDSN runs against a PostgreSQL server that benchlab did
// not start for the run (a DSN target, no lifecycle): the run is ok, the
// server keeps running afterwards, and the DSN's password appears nowhere
// in the output, the manifest or the stored spec.
func TestExistingServerByDSN(t *testing.T) {
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	t.Setenv("BENCHLAB_SERVER_LOGS", filepath.Join(dir, "logs"))
	// The "existing" server: one the postgres engine starts and keeps
	// running for the whole test, outside the experiment.
	drv, _ := engine.Lookup("postgres")
	db, err := drv.Open(context.Background(), engine.Target{Name: "existing", Engine: "postgres"}, filepath.Join(dir, "srv"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	in := db.(interface{ Instance() *server.Instance }).Instance()
	const secret = "s3cr3t-pw"
	dsn := fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/postgres?sslmode=disable", secret, in.Port)
	sp := writeFile(t, dir, "dsn.toml", `name = "dsn"
[[target]]
name = "ext"
engine = "postgres"
dsn = "`+dsn+`"
`+pointQueryWorkload)
	runs, out := runStored(t, dir, sp)
	if in.Died() != nil {
		t.Errorf("the existing server stopped with the run: %v", in.Died())
	}
	st, err := store.Open(filepath.Join(dir, "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	exp, _ := st.Experiment(context.Background(), 0)
	if len(runs) != 1 || runs[0].Status != store.StatusOK || !strings.HasPrefix(runs[0].Version, "15.") {
		t.Fatalf("runs %+v", runs)
	}
	for what, text := range map[string]string{"output": out, "manifest": runs[0].Manifest, "stored spec": exp.Spec} {
		if strings.Contains(text, secret) {
			t.Errorf("the DSN's password is in the %s", what)
		}
	}
	if !strings.Contains(runs[0].Manifest, "existing server (dsn)") {
		t.Errorf("manifest does not say the server was an existing one")
	}
}
