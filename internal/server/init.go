package server

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// maxSocketPath is the longest unix socket path the kernel takes (sun_path
// is 108 bytes with its terminating NUL); PostgreSQL appends /.s.PGSQL.<port>.
const maxSocketPath = 100

// initPostgres runs initdb and appends benchlab's lines, the config file and
// the settings to postgresql.conf. The last block repeats the address lines,
// so no config file or setting can make the server listen beyond loopback.
func (in *Instance) initPostgres(ctx context.Context, extra string) error {
	if err := os.MkdirAll(in.DataDir, 0o700); err != nil {
		return in.errorf("data dir: %w", err)
	}
	sock := in.DataDir
	if len(sock)+len("/.s.PGSQL.65535") > maxSocketPath {
		d, err := os.MkdirTemp("", "bl-sock-")
		if err != nil {
			return in.errorf("socket dir: %w", err)
		}
		in.sockDir, sock = d, d
	}
	in.Socket = sock
	if in.User != "" {
		if err := in.giveTo(in.User, in.DataDir, in.sockDir); err != nil {
			return err
		}
		// A basedir under /root (0700) gives only "permission denied" from exec.
		for _, p := range []string{in.bins.Init, in.bins.Server} {
			if err := ReachableBy(in.User, p); err != nil {
				return in.errorf("%v: PostgreSQL runs as %s under root; put the install where %s can reach it "+
					"(`benchlab install` under root uses /var/lib/benchlab/versions unless BENCHLAB_VERSIONS says otherwise)",
					err, in.User, in.User)
			}
		}
	}
	args := []string{"-D", in.DataDir, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync"}
	if helpMentions(ctx, in.bins.Init, "--no-instructions") { // PostgreSQL 14 and later
		args = append(args, "--no-instructions")
	}
	if err := in.run(ctx, "initdb", in.bins.Init, args...); err != nil {
		return err
	}
	var b strings.Builder
	addr := fmt.Sprintf("listen_addresses = '%s'\nport = %d\nunix_socket_directories = '%s'\n", Host, in.Port, pgQuote(sock))
	fmt.Fprintf(&b, "\n# benchlab: loopback only, private socket\n%s", addr)
	if extra != "" {
		fmt.Fprintf(&b, "# benchlab: config file %s\n%s\n", in.cfg.ConfigFile, extra)
	}
	if len(in.cfg.Settings) > 0 {
		b.WriteString("# benchlab: target settings\n")
		for _, k := range sortedKeys(in.cfg.Settings) {
			if isAddressSetting(Postgres, k) {
				continue
			}
			fmt.Fprintf(&b, "%s = '%s'\n", k, pgQuote(in.cfg.Settings[k]))
		}
	}
	fmt.Fprintf(&b, "# benchlab: enforced last\n%s", addr)
	return in.appendFile(filepath.Join(in.DataDir, "postgresql.conf"), b.String())
}

var helpCache sync.Map // program path + option -> bool

// helpMentions reports whether program's --help lists option, so that
// options newer than an installed version are left out.
func helpMentions(ctx context.Context, program, option string) bool {
	key := program + "\x00" + option
	if v, ok := helpCache.Load(key); ok {
		return v.(bool)
	}
	out, _ := exec.CommandContext(ctx, program, "--help").CombinedOutput()
	has := strings.Contains(string(out), option)
	helpCache.Store(key, has)
	return has
}

// initMySQL writes my.cnf (outside the data dir, which install-db wants
// empty) and initialises the data dir with it, so that settings fixed at
// creation (innodb_page_size, ...) take effect.
func (in *Instance) initMySQL(ctx context.Context, extra string) error {
	if err := os.MkdirAll(in.DataDir, 0o750); err != nil {
		return in.errorf("data dir: %w", err)
	}
	in.Socket = filepath.Join(in.DataDir, "mysql.sock")
	if len(in.Socket) > maxSocketPath {
		d, err := os.MkdirTemp("", "bl-sock-")
		if err != nil {
			return in.errorf("socket dir: %w", err)
		}
		in.sockDir, in.Socket = d, filepath.Join(d, "mysql.sock")
	}
	var b strings.Builder
	addr := fmt.Sprintf("bind-address = %s\nport = %d\nsocket = %s\n", Host, in.Port, in.Socket)
	fmt.Fprintf(&b, "# written by benchlab for target %s\n[mysqld]\n# benchlab: loopback only, private socket\n%s", in.cfg.Target, addr)
	fmt.Fprintf(&b, "datadir = %s\npid-file = %s\nlog-error = %s\n", in.DataDir,
		filepath.Join(in.DataDir, "mysqld.pid"), in.LogPath)
	// Temporary tables and sort files go to a dir of this server's own, next
	// to its data dir: with the default /tmp, servers running side by side
	// (and install-db's bootstrap) shared one dir, and nothing removed the
	// files of a server killed hard. A target's tmpdir setting comes later
	// in the file and wins.
	tmp := filepath.Join(filepath.Dir(in.DataDir), "mysql-tmp")
	if err := os.MkdirAll(tmp, 0o750); err != nil {
		return in.errorf("tmpdir: %w", err)
	}
	fmt.Fprintf(&b, "tmpdir = %s\n", tmp)
	if in.bins.Basedir != "" {
		fmt.Fprintf(&b, "basedir = %s\n", in.bins.Basedir)
	}
	if in.bins.Share != "" {
		fmt.Fprintf(&b, "lc-messages-dir = %s\n", in.bins.Share)
	}
	if extra != "" {
		fmt.Fprintf(&b, "# benchlab: config file %s\n%s\n", in.cfg.ConfigFile, stripSectionHeaders(extra))
	}
	if len(in.cfg.Settings) > 0 {
		b.WriteString("# benchlab: target settings\n")
		for _, k := range sortedKeys(in.cfg.Settings) {
			if isAddressSetting(MySQL, k) {
				continue
			}
			fmt.Fprintf(&b, "%s = %s\n", k, in.cfg.Settings[k])
		}
	}
	fmt.Fprintf(&b, "# benchlab: enforced last\n%s", addr)
	if err := os.WriteFile(in.myCnf(), []byte(b.String()), 0o644); err != nil {
		return in.errorf("my.cnf: %w", err)
	}
	// log-error points at the log file benchlab also writes stdout to; the
	// server appends, so both end up in one place.
	if in.bins.Oracle {
		args := []string{"--defaults-file=" + in.myCnf(), "--initialize-insecure"}
		if os.Geteuid() == 0 {
			args = append(args, "--user=root")
		}
		return in.run(ctx, "mysqld --initialize-insecure (a setting the server rejects is the usual cause)", in.bins.Server, args...)
	}
	args := []string{"--defaults-file=" + in.myCnf(), "--auth-root-authentication-method=normal", "--skip-test-db"}
	if in.bins.Basedir != "" {
		args = append(args, "--basedir="+in.bins.Basedir)
	}
	if os.Geteuid() == 0 {
		args = append(args, "--user=root")
	}
	return in.run(ctx, "mariadb-install-db (a setting the server rejects is the usual cause)", in.bins.Init, args...)
}

func (in *Instance) myCnf() string { return filepath.Join(in.cfg.Dir, "my.cnf") }

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

// AddressSettings are the settings benchlab owns: they decide where the
// server listens, so targets may not give them.
var AddressSettings = map[Family][]string{
	Postgres: {"listen_addresses", "port", "unix_socket_directories", "data_directory"},
	MySQL:    {"bind-address", "bind_address", "port", "socket", "datadir", "skip-networking", "skip_networking", "pid-file", "pid_file", "log-error", "log_error"},
}

func isAddressSetting(f Family, k string) bool {
	for _, a := range AddressSettings[f] {
		if strings.EqualFold(a, k) {
			return true
		}
	}
	return false
}

func pgQuote(s string) string { return strings.ReplaceAll(s, "'", "''") }

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (in *Instance) appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return in.errorf("config: %w", err)
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return in.errorf("config: %w", err)
	}
	return f.Close()
}

// giveTo makes user the owner of the given dirs and lets it traverse their
// ancestors (adding only the search bit for others where it is missing; a
// temporary dir made by os.MkdirTemp is 0700).
func (in *Instance) giveTo(name string, dirs ...string) error {
	uid, gid, err := lookupUser(name)
	if err != nil {
		return in.errorf("%w", err)
	}
	for _, d := range dirs {
		if d == "" {
			continue
		}
		if err := os.Chown(d, int(uid), int(gid)); err != nil {
			return in.errorf("give %s to %s: %w", d, name, err)
		}
		for p := filepath.Dir(d); p != "/" && p != "."; p = filepath.Dir(p) {
			st, err := os.Stat(p)
			if err != nil {
				return in.errorf("data dir parent: %w", err)
			}
			if st.Mode().Perm()&0o001 == 0 {
				if err := os.Chmod(p, st.Mode().Perm()|0o001); err != nil {
					return in.errorf("let %s reach %s: %w", name, d, err)
				}
				fmt.Fprintf(in.logFile, "benchlab: added o+x to %s so that user %s reaches the data dir\n", p, name)
			}
		}
	}
	// The log file is written by the server through an inherited descriptor,
	// but PostgreSQL also wants to read nothing else of ours.
	return nil
}

func lookupUser(name string) (uint32, uint32, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return 0, 0, fmt.Errorf("user %s: %w", name, err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return 0, 0, fmt.Errorf("user %s: uid %q", name, u.Uid)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return 0, 0, fmt.Errorf("user %s: gid %q", name, u.Gid)
	}
	return uint32(uid), uint32(gid), nil
}

// ensureUser creates the unprivileged system user name when it is missing.
func ensureUser(name string) error {
	if _, err := user.Lookup(name); err == nil {
		return nil
	}
	out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name).CombinedOutput()
	if err != nil {
		return fmt.Errorf("PostgreSQL refuses to run as root and user %s is missing; useradd failed: %v: %s",
			name, err, strings.TrimSpace(string(out)))
	}
	return nil
}
