package mysql_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
	"benchlab/internal/runner"
	"benchlab/internal/server/servertest"
	"benchlab/internal/workload"
)

// hangGuard fails a test whose cancel ended nothing, rather than hold it
// until the package's timeout; it is not a window the test measures.
const hangGuard = 2 * time.Minute

// sleeping asks the server whether a SELECT SLEEP(3600) is running.
const sleeping = "SELECT 1 FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT SLEEP(%' AND COMMAND <> 'Sleep'"

// tlsFiles writes a self-signed certificate and its key for 127.0.0.1 in a
// directory the server's unprivileged user can read, and returns the
// server settings that turn TLS on with them.
func tlsFiles(t *testing.T) map[string]string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "benchlab-tls-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cert, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o644); err != nil {
		t.Fatal(err)
	}
	return map[string]string{"ssl_cert": cert, "ssl_key": keyFile}
}

// tlsServer starts MariaDB with TLS on and returns it and a DSN for it
// with the options in extra.
func tlsServer(t *testing.T) (engine.DB, func(extra string) string) {
	getenv, _ := servertest.Env(t)
	managed := enginetest.Open(t, engine.Target{Name: "managed", Engine: "mariadb", Settings: tlsFiles(t), Getenv: getenv})
	a := managed.(engine.Addresser).Address()
	return managed, func(extra string) string {
		return fmt.Sprintf("%s:%s@tcp(%s:%d)/%s?%s", a.User, a.Password, a.Host, a.Port, a.Database, extra)
	}
}

// TestCancelEndsEveryPath cancels a SELECT SLEEP(3600) on each way a
// worker reaches MariaDB, with a DSN whose readTimeout and writeTimeout are
// an hour: over TLS (the driver, which closes the socket under TLS), and
// on the fast path's connection with Go's sockets (polled IO, many
// workers), in the driver's context-free call that re-arms its read
// deadline before every read. Each call ends, once the server shows the
// sleep running, as a lost connection or the context's error.
func TestCancelEndsEveryPath(t *testing.T) {
	managed, dsn := tlsServer(t)
	getenv, _ := servertest.Env(t)
	admin := enginetest.Connect(t, managed)
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		dsn    string
		client engine.Client
		polled bool
		tls    bool
	}{
		{"tls", dsn("tls=skip-verify&readTimeout=1h&writeTimeout=1h"), engine.ClientFast, false, true},
		{"fast-polled", dsn("readTimeout=1h&writeTimeout=1h"), engine.ClientFast, true, false},
		{"fast-blocking", dsn("readTimeout=1h&writeTimeout=1h"), engine.ClientFast, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := enginetest.Open(t, engine.Target{Name: c.name, Engine: "mariadb", DSN: c.dsn, Client: c.client, Getenv: getenv})
			info, err := db.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if want := map[bool]string{true: "driver", false: "fast"}[c.tls]; info.Client != want {
				t.Fatalf("client %q, notes %q; want %s", info.Client, info.Notes, want)
			}
			cctx := ctx
			if c.polled {
				cctx = engine.WithPolledIO(ctx)
			}
			conn, err := db.(engine.SQL).Connect(cctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if rows, err := conn.Values(ctx, "SHOW SESSION STATUS LIKE 'Ssl_cipher'"); err != nil || len(rows) != 1 ||
				(rows[0][1] != "") != c.tls {
				t.Fatalf("Ssl_cipher %q, %v; want TLS %v", rows, err, c.tls)
			}
			st, err := conn.Prepare(ctx, "SELECT SLEEP(?)", engine.Short)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			run, cancel := context.WithCancel(ctx)
			defer cancel()
			done := make(chan error, 1)
			go func() {
				// Values takes the driver's statement on every path.
				_, err := st.Values(run, 3600)
				done <- err
			}()
			if !servertest.WaitFor(t, admin, sleeping, done) {
				t.Fatal("the server never showed the sleep running")
			}
			cancel()
			select {
			case err = <-done:
			case <-time.After(hangGuard):
				t.Fatal("the cancel did not end the sleep (the DSN's hour of readTimeout held it)")
			}
			if !errors.Is(err, engine.ErrConnLost) && !errors.Is(err, context.Canceled) {
				t.Errorf("the cancelled sleep returned %v; want a lost connection or context.Canceled", err)
			}
		})
	}
}

// sleeper is a worker whose every operation sleeps an hour on the server.
type sleeper struct{ c engine.Conn }

func (w *sleeper) Op(ctx context.Context) (workload.Tally, error) {
	_, err := w.c.Query(ctx, "SELECT SLEEP(3600)")
	return workload.Tally{Statements: 1}, err
}

func (w *sleeper) Close() error { return w.c.Close() }

// TestOpTimeoutOverTLS measures a 2 s step of one worker whose statements
// sleep an hour, on a target that reaches MariaDB over TLS with an hour of
// readTimeout, under a 300 ms operation timeout: the step ends on its own
// (no overrun), failed at the first timeout, whose cancel closed the
// connection under TLS, with the timed-out statement counted as an error
// that names the timeout and its time in the latency.
func TestOpTimeoutOverTLS(t *testing.T) {
	_, dsn := tlsServer(t)
	getenv, _ := servertest.Env(t)
	db := enginetest.Open(t, engine.Target{Name: "tls", Engine: "mariadb", DSN: dsn("tls=skip-verify&readTimeout=1h"), Getenv: getenv})
	step := workload.Step{Name: "sleep", Duration: 2 * time.Second,
		NewWorker: func(ctx context.Context, db engine.DB, _, _ int, _ uint64) (workload.Worker, error) {
			c, err := db.(engine.SQL).Connect(ctx)
			if err != nil {
				return nil, err
			}
			return &sleeper{c: c}, nil
		}}
	res, err := runner.Measure(context.Background(), db, step, 1, 1, runner.Options{OpTimeout: 300 * time.Millisecond})
	if errors.Is(err, runner.ErrOverrun) {
		t.Fatalf("the step overran: the timeout did not end the statements: %v", err)
	}
	if res == nil {
		t.Fatalf("no result: %v", err)
	}
	t.Logf("status %s, %d events, %d errors, max %s, samples %q, error %v", res.Status, res.Events, res.Errors,
		res.Latency.Max, res.ErrorSamples, err)
	if err == nil || !strings.Contains(err.Error(), "an operation timed out and its connection was closed") {
		t.Errorf("step error %v; want the step ended by the timed-out operation's closed connection", err)
	}
	if res.Errors < 1 || !strings.Contains(strings.Join(res.ErrorSamples, "\n"), runner.ErrOpTimeout.Error()) {
		t.Errorf("%d errors, samples %q; want the timed-out statements counted, naming the timeout", res.Errors, res.ErrorSamples)
	}
	if res.Latency.Max < 300*time.Millisecond {
		t.Errorf("max latency %s; want the timed-out statements' 300 ms in it", res.Latency.Max)
	}
	if res.Events != 0 {
		t.Errorf("%d events; no statement that sleeps an hour can have completed", res.Events)
	}
}
