package server_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"benchlab/internal/engine"
	"benchlab/internal/engine/enginetest"
	"benchlab/internal/server"
)

// client is a program run as another local user against a managed server.
type client struct {
	name string   // what the attempt is, for messages
	argv []string // the program and its arguments
	env  []string // added to a bare PATH and HOME
}

// runAs runs c as the user cred names, with no environment of the test's
// own (no PGPASSWORD, MYSQL_PWD, ~/.pgpass, ~/.my.cnf), and returns its
// output and exit error.
func runAs(cred *syscall.Credential, c client) (string, error) {
	cmd := exec.Command(c.argv[0], c.argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	cmd.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/nonexistent"}, c.env...)
	cmd.Dir = "/"
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// nobody is the credential of the local user nobody.
func nobody(t *testing.T) *syscall.Credential {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("running a client as another local user needs root; tests run as root")
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Skipf("no user nobody: %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
}

// TestOnlyBenchlabGetsIn starts each managed server family as benchlab
// does (the engine's Open) and checks that no other local user can use it
// (a benchmark server must not be a way into the machine): the server runs as an unprivileged user that owns
// its data dir; its socket is in a 0700 dir of that user's; as the user
// nobody, the family's own client is refused over TCP on 127.0.0.1
// without the password and cannot reach the socket, and gets in with the
// password (so the refusals are the password's doing); the password is in
// no file others can read; and no account logs in without a password. On
// MariaDB, benchlab's account writes no file (no FILE privilege), and root
// writes one inside the server's own file dir only.
func TestOnlyBenchlabGetsIn(t *testing.T) {
	cred := nobody(t)
	psqlOf := func(in *server.Instance) string { return filepath.Join(in.Binaries().Basedir, "bin", "psql") }
	mariadb, _ := exec.LookPath("mariadb")
	for _, c := range []struct {
		engine  string
		user    string
		clients func(in *server.Instance) (denied []client, allowed client)
		// passwordless lists the accounts that log in without a password.
		passwordless string
	}{
		{"postgres", "postgres", func(in *server.Instance) ([]client, client) {
			psql := psqlOf(in)
			port := strconv.Itoa(in.Port)
			q := []string{"-X", "-w", "-d", "postgres", "-U", "postgres", "-p", port, "-c", "SELECT 1"}
			return []client{
					{"psql over TCP without a password", append([]string{psql, "-h", server.Host}, q...), nil},
					{"psql over TCP with a wrong password", append([]string{psql, "-h", server.Host}, q...), []string{"PGPASSWORD=wrong"}},
					{"psql over the socket", append([]string{psql, "-h", in.Socket}, q...), nil},
					{"psql over the socket with the password", append([]string{psql, "-h", in.Socket}, q...),
						[]string{"PGPASSWORD=" + in.Password()}},
				},
				client{"psql over TCP with the password", append([]string{psql, "-h", server.Host}, q...), []string{"PGPASSWORD=" + in.Password()}}
		}, "SELECT rolname FROM pg_authid WHERE rolcanlogin AND rolpassword IS NULL"},
		{"mariadb", "mysql", func(in *server.Instance) ([]client, client) {
			port := strconv.Itoa(in.Port)
			tcp := func(u string) []string {
				return []string{mariadb, "--no-defaults", "-h", server.Host, "-P", port, "-u", u, "-e", "SELECT 1"}
			}
			sock := func(u string) []string {
				return []string{mariadb, "--no-defaults", "-S", in.Socket, "-u", u, "-e", "SELECT 1"}
			}
			return []client{
					{"root over TCP without a password", tcp("root"), nil},
					{"benchlab over TCP without a password", tcp("benchlab"), nil},
					{"an anonymous user over TCP", tcp("nobody"), nil},
					{"root over TCP with a wrong password", tcp("root"), []string{"MYSQL_PWD=wrong"}},
					{"root over the socket", sock("root"), nil},
					{"root over the socket with the password", sock("root"), []string{"MYSQL_PWD=" + in.Password()}},
				},
				client{"benchlab over TCP with the password", tcp("benchlab"), []string{"MYSQL_PWD=" + in.Password()}}
		}, "SELECT CONCAT(user, '@', host, ' ', priv) FROM mysql.global_priv WHERE " +
			"IFNULL(JSON_VALUE(priv, '$.authentication_string'), '') = '' AND " +
			"IFNULL(JSON_VALUE(priv, '$.account_locked'), 'false') = 'false' AND IFNULL(JSON_VALUE(priv, '$.is_role'), 'false') = 'false'"},
	} {
		t.Run(c.engine, func(t *testing.T) {
			if c.engine == "mariadb" && mariadb == "" {
				t.Skip("no mariadb client")
			}
			db := enginetest.Open(t, engine.Target{Name: "locked", Engine: c.engine, Getenv: logEnv(t)})
			in := db.(interface{ Instance() *server.Instance }).Instance()
			if len(in.Password()) < 16 {
				t.Fatalf("password %q; want one generated for the server", in.Password())
			}
			if in.User != c.user {
				t.Errorf("server user %q, want %s", in.User, c.user)
			}
			if uid := procUID(t, in.PIDs()[0]); uid == 0 {
				t.Errorf("the server process %d runs as root", in.PIDs()[0])
			}
			for what, dir := range map[string]string{"data dir": in.DataDir, "socket dir": socketDir(in)} {
				st, err := os.Stat(dir)
				if err != nil {
					t.Fatal(err)
				}
				owner := st.Sys().(*syscall.Stat_t).Uid
				if u, _ := user.LookupId(strconv.Itoa(int(owner))); u == nil || u.Username != c.user || st.Mode().Perm() != 0o700 {
					t.Errorf("%s %s: owner uid %d, mode %o; want %s's, 0700", what, dir, owner, st.Mode().Perm(), c.user)
				}
			}
			denied, allowed := c.clients(in)
			for _, cl := range denied {
				if out, err := runAs(cred, cl); err == nil || !strings.Contains(err.Error(), "exit status") {
					t.Errorf("as nobody, %s: %v; want it refused\n%s", cl.name, err, out)
				} else {
					t.Logf("as nobody, %s: refused: %s", cl.name, strings.TrimSpace(out))
				}
			}
			if out, err := runAs(cred, allowed); err != nil {
				t.Errorf("as nobody, %s: %v; want it let in (the control)\n%s", allowed.name, err, out)
			}
			conn := enginetest.Connect(t, db)
			ctx := context.Background()
			var rows [][]string
			var err error
			if c.engine == "mariadb" {
				// benchlab's own account may not read the grant tables.
				rows, err = mariadbRoot(in, mariadb, c.passwordless)
			} else {
				rows, err = conn.Values(ctx, c.passwordless)
			}
			if err != nil || len(rows) != 0 {
				t.Errorf("accounts without a password: %v %v; want none", rows, err)
			}
			// The password is in memory and in 0600 files at most.
			err = filepath.WalkDir(in.Dir(), func(p string, d fs.DirEntry, err error) error {
				if err != nil || !d.Type().IsRegular() {
					return nil // the server's files come and go
				}
				info, err := d.Info()
				if err != nil || info.Mode().Perm()&0o077 == 0 {
					return nil
				}
				if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(in.Password())) {
					t.Errorf("%s (mode %o) holds the password", p, info.Mode().Perm())
				}
				return nil
			})
			if err != nil {
				t.Error(err)
			}
			if c.engine != "mariadb" {
				return
			}
			outside := filepath.Join(t.TempDir(), "written-by-the-server.txt")
			os.Chmod(filepath.Dir(outside), 0o777)
			priv, err := conn.Values(ctx, "SELECT @@secure_file_priv")
			if err != nil || len(priv) != 1 || !strings.HasPrefix(priv[0][0], in.Dir()) {
				t.Fatalf("secure_file_priv %v %v; want a dir in %s", priv, err, in.Dir())
			}
			inside := filepath.Join(priv[0][0], "ok.txt")
			// benchlab's account has no FILE privilege: it writes no file
			// anywhere. Root writes only inside the server's file dir.
			for _, f := range []string{outside, inside} {
				if _, err := conn.Exec(ctx, "SELECT 1 INTO OUTFILE '"+f+"'"); err == nil {
					t.Errorf("INTO OUTFILE %s on benchlab's account succeeded; want it refused (no FILE privilege)", f)
				}
			}
			if _, err := mariadbRoot(in, mariadb, "SELECT 1 INTO OUTFILE '"+outside+"'"); err == nil {
				t.Errorf("INTO OUTFILE %s (outside the server's file dir) as root succeeded", outside)
			}
			if _, err := os.Stat(outside); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s: %v; want no file written", outside, err)
			}
			if _, err := mariadbRoot(in, mariadb, "SELECT 1 INTO OUTFILE '"+inside+"'"); err != nil {
				t.Errorf("INTO OUTFILE %s (the server's own file dir) as root: %v", inside, err)
			}
		})
	}
}

// mariadbRoot runs sql with the mariadb client as root over the managed
// server's private socket and returns its rows, tab-separated fields.
func mariadbRoot(in *server.Instance, client, sql string) ([][]string, error) {
	cmd := exec.Command(client, "--no-defaults", "-N", "-B", "-S", in.Socket, "-u", "root", "-e", sql)
	cmd.Env = []string{"MYSQL_PWD=" + in.Password()}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %s", sql, err, out)
	}
	var rows [][]string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l != "" {
			rows = append(rows, strings.Split(l, "\t"))
		}
	}
	return rows, nil
}

// socketDir is the dir of a server's unix socket (PostgreSQL's Socket is
// the dir, MariaDB's the socket file).
func socketDir(in *server.Instance) string {
	if st, err := os.Stat(in.Socket); err == nil && st.IsDir() {
		return in.Socket
	}
	return filepath.Dir(in.Socket)
}

// procUID reads the real uid of process pid.
func procUID(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "Uid:" {
			uid, _ := strconv.Atoi(f[1])
			return uid
		}
	}
	t.Fatalf("no Uid in /proc/%d/status", pid)
	return -1
}
