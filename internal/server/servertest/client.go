package servertest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
)

// Hang describes, for one engine, a short statement that waits on a row
// lock another session holds: what Clients runs on each client path.
type Hang struct {
	// Engine names the engine; Settings configure its managed server.
	Engine   string
	Settings map[string]string
	// DSN reaches the managed server at a as a target's dsn, with extra
	// appended to its options (a TLS mode).
	DSN func(a engine.Address, extra string) string
	// Setup creates the table h (id 1 present); Session is run first on
	// the waiting connection (a lock wait with no end of its own); Lock is
	// the update, with one placeholder, that both sessions run; Waiting
	// returns a row while a session waits for a lock. It must read the
	// server's live state, never a cache that the polling itself keeps
	// stale: InnoDB refreshes information_schema.innodb_trx only once no
	// session has read it for 0.1 s, so a loop polling it, started before
	// the wait began, never saw the wait (measured: 43k-65k polls over 5 s
	// with a session waiting all along, seen at once after a 0.2 s pause).
	Setup, Session, Lock, Waiting string
	// Timeout says whether err is the server's own lock-wait timeout, which
	// would end the wait without the context's help.
	Timeout func(err error) bool
}

// Clients opens a DSN target (an existing server, which benchlab cannot
// stop on cancel) on a server of its own, once per client path, and checks
// that the target records the path it was asked for and that a short
// statement hung on a lock ends when its context is cancelled, while the
// lock is still held, as a lost connection or the context's error and not
// the server's lock timeout. It returns the managed DB for more checks.
func Clients(t *testing.T, h Hang) engine.DB {
	getenv, _ := Env(t)
	ctx := context.Background()
	managed := enginetest.Open(t, engine.Target{Name: "managed", Engine: h.Engine, Settings: h.Settings, Getenv: getenv})
	holder := enginetest.Connect(t, managed)
	if _, err := holder.Exec(ctx, h.Setup); err != nil {
		t.Fatalf("setup: %v", err)
	}
	addr := managed.(engine.Addresser).Address()
	for _, client := range []engine.Client{engine.ClientFast, engine.ClientDriver} {
		t.Run(string(client), func(t *testing.T) {
			db := enginetest.Open(t, engine.Target{Name: "dsn-" + string(client), Engine: h.Engine, DSN: h.DSN(addr, ""),
				Client: client, Getenv: getenv})
			info, err := db.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if info.Client != string(client) || len(info.Notes) != 0 {
				t.Fatalf("client %s: Info says client %q, notes %q", client, info.Client, info.Notes)
			}
			waiter := enginetest.Connect(t, db)
			if _, err := waiter.Exec(ctx, h.Session); err != nil {
				t.Fatal(err)
			}
			for _, text := range []bool{false, true} {
				for id, want := range []int64{0, 1} {
					sel, err := engine.PrepareOrText(ctx, waiter, strings.Replace(h.Lock, "UPDATE h SET v = v + 1", "SELECT v FROM h", 1),
						engine.Short, text)
					if err != nil {
						t.Fatal(err)
					}
					if n, err := sel.Query(ctx, id); err != nil || n != want {
						t.Errorf("client %s, text %v: id %d: %d rows, %v; want %d", client, text, id, n, err, want)
					}
					sel.Close()
				}
			}
			lock, err := waiter.Prepare(ctx, h.Lock, engine.Short)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := holder.Exec(ctx, "BEGIN"); err != nil {
				t.Fatal(err)
			}
			if _, err := holder.Exec(ctx, strings.Replace(strings.Replace(h.Lock, "?", "1", 1), "$1", "1", 1)); err != nil {
				t.Fatal(err)
			}
			// Nobody waits yet. Reading Waiting now also forces the order
			// that hung this test under load: a first poll before the wait.
			if rows, err := holder.Values(ctx, h.Waiting); err != nil || len(rows) != 0 {
				t.Fatalf("client %s: before the statement, Waiting gave %q, %v; want no rows", client, rows, err)
			}
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := lock.Exec(cctx, 1)
				done <- err
			}()
			// Cancel only once the server shows the statement waiting.
			if !WaitFor(t, holder, h.Waiting, done) {
				t.Errorf("client %s: the server never showed the statement waiting for the lock", client)
				cancel()
				if _, err := holder.Exec(ctx, "ROLLBACK"); err != nil {
					t.Fatal(err)
				}
				<-done
				return
			}
			cancel()
			// The lock is still held here: only the cancel can end the wait.
			// A cancel that ends nothing fails the test at the guard, and
			// the holder's rollback then frees the statement.
			select {
			case err = <-done:
			case <-time.After(hangGuard):
				t.Errorf("client %s: the cancel did not end the statement hung on the lock", client)
				if _, err := holder.Exec(ctx, "ROLLBACK"); err != nil {
					t.Fatal(err)
				}
				<-done
				return
			}
			if err == nil || h.Timeout(err) || !(errors.Is(err, engine.ErrConnLost) || errors.Is(err, context.Canceled)) {
				t.Errorf("client %s: the cancelled statement returned %v; want a lost connection or context.Canceled", client, err)
			}
			if _, err := holder.Exec(ctx, "ROLLBACK"); err != nil {
				t.Fatal(err)
			}
		})
	}
	return managed
}

// hangGuard bounds a wait that should end at once on a working engine, so
// that a defect fails the test instead of holding it until the package's
// timeout; it is not a window the test measures.
const hangGuard = 2 * time.Minute

// WaitFor polls query on c until it returns a row; false when it has not
// within hangGuard, or when the statement sent to done returned first (it
// was not left waiting: the test then fails on what it returned).
func WaitFor(t *testing.T, c engine.Conn, query string, done chan error) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	for {
		select {
		case err := <-done:
			done <- err
			t.Errorf("the statement that should wait for the lock returned %v", err)
			return false
		default:
		}
		rows, err := c.Values(ctx, query)
		if ctx.Err() != nil {
			return false
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) > 0 {
			return true
		}
	}
}
