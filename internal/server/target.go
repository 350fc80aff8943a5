package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"benchlab/internal/engine"
)

// CheckTarget is the validation shared by the server engines: dsn
// excludes the install fields; basedir and version exclude each other; the
// install must hold the binaries; the config file must be readable; address
// settings belong to benchlab.
func CheckTarget(f Family, engineName string, t engine.Target) error {
	if t.DSN != "" {
		if t.Basedir != "" || t.Version != "" || t.ConfigFile != "" || t.CPUs != "" || len(t.Settings) > 0 {
			return fmt.Errorf("dsn: an existing server (dsn %s) is used as is; remove basedir, version, config, cpus and settings, or remove dsn",
				RedactDSN(t.DSN))
		}
		return nil
	}
	if t.Basedir != "" && t.Version != "" {
		return fmt.Errorf("basedir and version: give one of them, not both (basedir %q, version %q)", t.Basedir, t.Version)
	}
	if t.Version != "" {
		if _, err := ResolveVersion(f, engineName, t.Version); err != nil {
			return fmt.Errorf("version: %w", err)
		}
	} else if _, err := FindBinaries(f, t.Basedir); err != nil {
		return fmt.Errorf("basedir: %w", err)
	}
	if t.ConfigFile != "" {
		if _, err := os.ReadFile(t.ConfigFile); err != nil {
			return fmt.Errorf("config: cannot read %s: %v", t.ConfigFile, errors.Unwrap(err))
		}
	}
	if t.CPUs != "" {
		if err := CheckCPUList(t.CPUs); err != nil {
			return fmt.Errorf("cpus: %w", err)
		}
	}
	keys := make([]string, 0, len(t.Settings))
	for k := range t.Settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if strings.EqualFold(k, "port") {
			if p, err := strconv.Atoi(t.Settings[k]); err != nil || p < 1 || p > 65535 {
				return fmt.Errorf("settings.port: %q is not a port; want 1 to 65535", t.Settings[k])
			}
			continue
		}
		for _, a := range AddressSettings[f] {
			if strings.EqualFold(a, k) {
				return fmt.Errorf("settings.%s: benchlab sets it (servers listen on %s and a private socket only); remove it", k, Host)
			}
		}
	}
	return nil
}

// InstallDir resolves a target's basedir: its version's install dir, its
// basedir, or the default install.
func InstallDir(f Family, engineName string, t engine.Target) (string, error) {
	if t.Version != "" {
		return ResolveVersion(f, engineName, t.Version)
	}
	return t.Basedir, nil
}

// LaunchTarget starts a managed server for target t of engine engineName
// (family f) on a fresh data dir under dir, and waits until probe succeeds:
// the install comes from the target's basedir or version (InstallDir), the
// port setting becomes the server's port and the other settings its
// configuration, their names lowercased when the family's are
// case-insensitive (PostgreSQL). It is the part of opening a managed target
// that every server engine shares.
func LaunchTarget(ctx context.Context, f Family, engineName string, t engine.Target, dir string, probe Probe) (*Instance, error) {
	basedir, err := InstallDir(f, engineName, t)
	if err != nil {
		return nil, fmt.Errorf("%s target %s: version: %w", engineName, t.Name, err)
	}
	settings := map[string]string{}
	port := 0
	for k, v := range t.Settings {
		if strings.EqualFold(k, "port") {
			port, _ = strconv.Atoi(v)
			continue
		}
		if f == Postgres {
			k = strings.ToLower(k)
		}
		settings[k] = v
	}
	return Launch(ctx, Config{Family: f, Engine: engineName, Target: t.Name, Basedir: basedir,
		ConfigFile: t.ConfigFile, Settings: settings, Dir: dir, Port: port, CPUs: t.CPUs}, probe)
}
