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

	"benchlab/internal/stale"
)

// maxSocketPath is the longest unix socket path the kernel takes (sun_path
// is 108 bytes with its terminating NUL).
const maxSocketPath = 100

// Dir is the directory the runner gave the engine, holding the data dir
// and the live log; a flavor writes its config files there (outside the data
// dir, which some initialisers want empty).
func (in *Instance) Dir() string { return in.cfg.Dir }

// TargetName is the name of the target the server runs for.
func (in *Instance) TargetName() string { return in.cfg.Target }

// ConfigFile is the path of the target's config file, "" for none; its text
// is the extra a Flavor's Init receives.
func (in *Instance) ConfigFile() string { return in.cfg.ConfigFile }

// Setting is one server configuration variable a target sets.
type Setting struct{ Name, Value string }

// Settings are the target's settings in name order, without those the
// flavor owns (the address lines), which it writes itself.
func (in *Instance) Settings() []Setting {
	var out []Setting
	for _, k := range sortedKeys(in.cfg.Settings) {
		if IsOwned(in.cfg.Flavor, k) {
			continue
		}
		out = append(out, Setting{k, in.cfg.Settings[k]})
	}
	return out
}

// Errorf returns an error naming the engine, the target, the install and
// the address before what format says.
func (in *Instance) Errorf(format string, args ...any) error { return in.errorf(format, args...) }

// Logf writes a line of benchlab's own to the server log.
func (in *Instance) Logf(format string, args ...any) {
	fmt.Fprintf(in.logFile, "benchlab: "+format+"\n", args...)
}

// SocketDir returns the dir for the server's unix socket: the data dir, or,
// when a socket path made of it and a file name of up to nameLen bytes
// would be too long for the kernel, a private temporary dir removed when
// the server stops. The server's user owns it.
func (in *Instance) SocketDir(nameLen int) (string, error) {
	data := in.DataDir
	if in.safeDir != "" {
		data = filepath.Join(in.safeDir, filepath.Base(in.DataDir))
	}
	if len(data)+1+nameLen <= maxSocketPath {
		return data, nil
	}
	d, err := os.MkdirTemp("", "bl-sock-")
	if err != nil {
		return "", in.errorf("socket dir: %w", err)
	}
	in.sockDir = d
	if err := stale.MarkOwner(d); err != nil {
		return "", in.errorf("socket dir: %w", err)
	}
	if in.User != "" {
		if err := in.giveTo(in.User, d); err != nil {
			return "", err
		}
	}
	return d, nil
}

// SafeDir returns the server's dir (Dir) by a path of plain characters
// (letters, digits, / . _ - + : @ ,): Dir itself when its path is plain,
// otherwise a symlink to it in a private temporary dir removed when the
// server stops. Setup scripts that split their arguments on spaces
// (MariaDB's install-db passes the paths of my.cnf on unquoted) then see
// no space, and config files no comment character.
func (in *Instance) SafeDir() (string, error) {
	if in.safeDir != "" {
		return in.safeDir, nil
	}
	if plainPath(in.cfg.Dir) {
		return in.cfg.Dir, nil
	}
	d, err := os.MkdirTemp("", "bl-dir-")
	if err != nil {
		return "", in.errorf("plain path for %q: %w", in.cfg.Dir, err)
	}
	in.aliasDir = d
	if err := stale.MarkOwner(d); err != nil {
		return "", in.errorf("plain path for %q: %w", in.cfg.Dir, err)
	}
	// Others may pass through (the server's user), not list it.
	if err := os.Chmod(d, 0o711); err != nil {
		return "", in.errorf("plain path for %q: %w", in.cfg.Dir, err)
	}
	link := filepath.Join(d, "dir")
	abs, err := filepath.Abs(in.cfg.Dir)
	if err != nil {
		return "", in.errorf("plain path for %q: %w", in.cfg.Dir, err)
	}
	if err := os.Symlink(abs, link); err != nil {
		return "", in.errorf("plain path for %q: %w", in.cfg.Dir, err)
	}
	in.safeDir = link
	in.Logf("the dir %q is reached as %s (a symlink), a path without spaces or comment characters", in.cfg.Dir, link)
	return link, nil
}

// plainPath reports whether p has only characters no shell splits on and
// no config file reads as a comment or a quote.
func plainPath(p string) bool {
	for _, r := range p {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune("/._-+:@,", r):
		default:
			return false
		}
	}
	return true
}

var helpCache sync.Map // program path + option -> bool

// HelpMentions reports whether program's --help lists option, so that
// options newer than an installed version are left out.
func HelpMentions(ctx context.Context, program, option string) bool {
	key := program + "\x00" + option
	if v, ok := helpCache.Load(key); ok {
		return v.(bool)
	}
	out, _ := exec.CommandContext(ctx, program, "--help").CombinedOutput()
	has := strings.Contains(string(out), option)
	helpCache.Store(key, has)
	return has
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
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

// ensureUser creates the unprivileged system user name, which the servers
// of family run as under root, when it is missing.
func ensureUser(name, family string) error {
	if _, err := user.Lookup(name); err == nil {
		return nil
	}
	out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name).CombinedOutput()
	if err != nil {
		return fmt.Errorf("the %s server runs as user %s under root and the user is missing; useradd failed: %v: %s",
			family, name, err, strings.TrimSpace(string(out)))
	}
	return nil
}
