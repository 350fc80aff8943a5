package server

import (
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
