package server

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
)

// NewPassword returns a fresh password for a managed server's superuser:
// 128 random bits from crypto/rand as 32 hex digits, which need no quoting
// in a DSN, a config file or SQL. A server benchlab starts takes no
// connection without it, so no other local user can use it.
func NewPassword() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random password: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// Password is the server's superuser password, generated for this start
// (or given by Config.Password). Keep it in memory: it reaches files only
// through SecretFile and programs only through their environment.
func (in *Instance) Password() string { return in.password }

// SecretFile writes text (which holds the password) to a new file name in
// the server's dir, readable by the server's user alone (0600), for a
// setup program to read during the flavor's Init (initdb --pwfile,
// install-db's SQL); Start removes it when Init returns.
func (in *Instance) SecretFile(name, text string) (string, error) {
	p := filepath.Join(in.cfg.Dir, name)
	if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
		return "", in.errorf("secret file: %w", err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", in.errorf("secret file: %w", err)
	}
	in.secrets = append(in.secrets, p)
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", in.errorf("secret file %s: %w", p, err)
	}
	if in.User != "" {
		uid, gid, err := lookupUser(in.User)
		if err != nil {
			return "", in.errorf("%w", err)
		}
		if err := os.Chown(p, int(uid), int(gid)); err != nil {
			return "", in.errorf("give %s to %s: %w", p, in.User, err)
		}
	}
	return p, nil
}

// removeSecrets removes the files SecretFile wrote.
func (in *Instance) removeSecrets() {
	for _, p := range in.secrets {
		os.Remove(p)
	}
	in.secrets = nil
}

// Own gives paths (files or dirs benchlab made for the server: its tmpdir,
// its log) to the user the server runs as, so that it can write them; a
// no-op when the server runs as benchlab's own user.
func (in *Instance) Own(paths ...string) error {
	if in.User == "" {
		return nil
	}
	uid, gid, err := lookupUser(in.User)
	if err != nil {
		return in.errorf("%w", err)
	}
	for _, p := range paths {
		if err := os.Chown(p, int(uid), int(gid)); err != nil {
			return in.errorf("give %s to %s: %w", p, in.User, err)
		}
	}
	return nil
}
