package postgres_test

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
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
	"benchlab/internal/server/servertest"
)

// TestClients runs a DSN target on both client paths against a managed
// PostgreSQL with TLS on (a certificate made for the test): each records its
// path and ends a statement hung on a row lock when its context is
// cancelled; a target whose DSN asks for TLS gets the driver, with a note
// saying why.
func TestClients(t *testing.T) {
	dsn := func(a engine.Address, extra string) string {
		return fmt.Sprintf("host=%s port=%d user=%s password=%s dbname=%s sslmode=disable%s", a.Host, a.Port, a.User,
			a.Password, a.Database, extra)
	}
	cert, key := selfSigned(t)
	managed := servertest.Clients(t, servertest.Hang{
		Engine:   "postgres",
		Settings: map[string]string{"ssl": "on", "ssl_cert_file": cert, "ssl_key_file": key},
		DSN:      dsn,
		Setup:    "CREATE TABLE h (id INT PRIMARY KEY, v INT); INSERT INTO h VALUES (1, 0)",
		Session:  "SET lock_timeout = 0",
		Lock:     "UPDATE h SET v = v + 1 WHERE id = $1",
		Waiting:  "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock'",
		Timeout: func(err error) bool {
			var pe *pgconn.PgError
			return errors.As(err, &pe) && pe.Code == "55P03"
		},
	})
	getenv, _ := servertest.Env(t)
	tlsDSN := dsn(managed.(engine.Addresser).Address(), " sslmode=require")
	for _, client := range []engine.Client{engine.ClientAuto, engine.ClientFast} {
		db := enginetest.Open(t, engine.Target{Name: "tls", Engine: "postgres", DSN: tlsDSN, Client: client, Getenv: getenv})
		info, err := db.Info(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if info.Client != "driver" || len(info.Notes) != 1 || !strings.Contains(info.Notes[0], "TLS") {
			t.Errorf("client %q over TLS: Info says client %q, notes %q; want the driver and a note naming TLS", client, info.Client, info.Notes)
		}
		if n, err := enginetest.Connect(t, db).Query(context.Background(), "SELECT v FROM h"); err != nil || n != 1 {
			t.Errorf("client %q over TLS: %d rows, %v", client, n, err)
		}
	}
}

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key
// into a dir of their own that the server's user (postgres) owns, as the
// server requires of its key, and removes them when the test ends.
func selfSigned(t *testing.T) (cert, key string) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	pg, err := user.Lookup("postgres")
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(pg.Uid)
	gid, _ := strconv.Atoi(pg.Gid)
	dir, err := os.MkdirTemp("", "benchlab-tls-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	cert, key = filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key")
	for _, f := range []struct {
		path, kind string
		der        []byte
	}{{cert, "CERTIFICATE", der}, {key, "EC PRIVATE KEY", keyDER}} {
		if err := os.WriteFile(f.path, pem.EncodeToMemory(&pem.Block{Type: f.kind, Bytes: f.der}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{dir, cert, key} {
		if err := os.Chown(p, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	return cert, key
}
