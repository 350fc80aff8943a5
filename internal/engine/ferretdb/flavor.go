package ferretdb

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"benchlab/internal/server"
)

// flavor is the managed FerretDB's part of a server's life: benchlab's own
// executable (linked into the run's dir, where the server's user reaches
// it) serving FerretDB on a unix socket in the data dir, which only that
// user (and root) can enter.
type flavor struct {
	exe string
	// backend is "sqlite" or "postgresql"; pgURL the PostgreSQL backend's
	// address and database, without credentials.
	backend, pgURL string
}

// sockName is the socket's file name in the data dir.
const sockName = "ferretdb.sock"

// User is the unprivileged OS user FerretDB runs as under root.
const User = "ferretdb"

func (f flavor) Name() string { return "ferretdb" }

func (f flavor) FindBinaries(string) (server.Binaries, error) {
	return server.Binaries{Basedir: filepath.Dir(f.exe), Server: f.exe}, nil
}

func (flavor) OwnedSettings() []string        { return nil }
func (flavor) SettingName(name string) string { return name }
func (flavor) RunAs() string                  { return User }
func (flavor) StopSignal() syscall.Signal     { return syscall.SIGTERM }

// Init picks the socket: nothing else is needed, FerretDB creates its
// SQLite files (or tables in PostgreSQL) as collections appear.
func (flavor) Init(_ context.Context, in *server.Instance, _ string) error {
	dir, err := in.SocketDir(len(sockName))
	if err != nil {
		return err
	}
	in.Socket = filepath.Join(dir, sockName)
	return nil
}

func (f flavor) Command(in *server.Instance) (string, []string) {
	args := []string{ServeCommand, "--handler", f.backend, "--unix", in.Socket}
	if f.backend == BackendSQLite {
		args = append(args, "--sqlite-url", "file:"+in.DataDir+"/")
	} else {
		args = append(args, "--postgresql-url", f.pgURL)
	}
	return f.exe, args
}

// socketURI is the MongoDB URI of a unix socket (its path escaped in the
// host part, as the driver wants it).
func socketURI(sock string) string {
	return "mongodb://" + strings.ReplaceAll(sock, "/", "%2F") + "/"
}

// linkExecutable makes benchlab's executable reachable at a path in dir:
// a hard link, or a copy across file systems, so that the server's user
// can run it even when it sits under a dir only root may enter (a test
// binary's build dir).
func linkExecutable(dir string) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find benchlab's executable: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	dst := filepath.Join(dir, "benchlab-ferretdb")
	if err := os.Link(exe, dst); err == nil {
		if st, err := os.Stat(dst); err == nil && st.Mode().Perm()&0o005 == 0o005 {
			return dst, nil
		}
		os.Remove(dst)
	}
	src, err := os.Open(exe)
	if err != nil {
		return "", fmt.Errorf("copy benchlab's executable: %w", err)
	}
	defer src.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return "", fmt.Errorf("copy benchlab's executable: %w", err)
	}
	if _, err := io.Copy(out, src); err != nil {
		out.Close()
		return "", fmt.Errorf("copy benchlab's executable: %w", err)
	}
	return dst, out.Close()
}
