package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"time"

	"benchlab/internal/engine"
)

// CheckTarget is the validation shared by the server engines: dsn
// excludes the install fields; basedir and version exclude each other; the
// install must hold the binaries; the config file must be readable; address
// settings belong to benchlab.
func CheckTarget(f Flavor, engineName string, t engine.Target) error {
	if t.DSN != "" {
		if t.Basedir != "" || t.Version != "" || t.ConfigFile != "" || t.CPUs != "" || t.Memory != "" || len(t.Settings) > 0 {
			return fmt.Errorf("dsn: an existing server (dsn %s) is used as is; remove basedir, version, config, cpus, memory and settings, or remove dsn",
				RedactDSN(t.DSN))
		}
		return nil
	}
	if t.Basedir != "" && t.Version != "" {
		return fmt.Errorf("basedir and version: give one of them, not both (basedir %q, version %q)", t.Basedir, t.Version)
	}
	if t.Version != "" {
		if _, err := ResolveVersion(Env(t.Getenv), f, engineName, t.Version); err != nil {
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
	if t.Memory != "" {
		if _, err := ParseMemory(t.Memory); err != nil {
			return fmt.Errorf("memory: %w", err)
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
		if IsOwned(f, k) {
			return fmt.Errorf("settings.%s: benchlab sets it (servers listen on %s and a private socket only); remove it", k, Host)
		}
	}
	return nil
}

// InstallDir resolves a target's basedir: its version's install dir, its
// basedir, or the default install.
func InstallDir(f Flavor, engineName string, t engine.Target) (string, error) {
	if t.Version != "" {
		return ResolveVersion(Env(t.Getenv), f, engineName, t.Version)
	}
	return t.Basedir, nil
}

// LaunchTarget starts a managed server for target t of engine engineName
// (flavor f) on a fresh data dir under dir, and waits until probe succeeds,
// as configured by TargetConfig. It is the part of opening a managed
// target that every server engine shares.
func LaunchTarget(ctx context.Context, f Flavor, engineName string, t engine.Target, dir string, probe Probe) (*Instance, error) {
	cfg, err := TargetConfig(f, engineName, t, dir)
	if err != nil {
		return nil, err
	}
	return Launch(ctx, cfg, probe)
}

// TargetConfig is the Config of a managed server for target t: the install
// comes from the target's basedir or version (InstallDir), the port
// setting becomes the server's port and the other settings its
// configuration, named as the flavor writes them (SettingName).
func TargetConfig(f Flavor, engineName string, t engine.Target, dir string) (Config, error) {
	basedir, err := InstallDir(f, engineName, t)
	if err != nil {
		return Config{}, fmt.Errorf("%s target %s: version: %w", engineName, t.Name, err)
	}
	settings := map[string]string{}
	port := 0
	for k, v := range t.Settings {
		if strings.EqualFold(k, "port") {
			port, _ = strconv.Atoi(v)
			continue
		}
		settings[f.SettingName(k)] = v
	}
	var memory int64
	if t.Memory != "" {
		m, err := ParseMemory(t.Memory)
		if err != nil {
			return Config{}, fmt.Errorf("%s target %s: memory: %w", engineName, t.Name, err)
		}
		memory = m
	}
	return Config{Flavor: f, Env: Env(t.Getenv), Engine: engineName, Target: t.Name, Basedir: basedir,
		ConfigFile: t.ConfigFile, Settings: settings, Dir: dir, Port: port, CPUs: t.CPUs, MemoryLimit: memory}, nil
}

// CheckInstall tells whether target t's install is usable before anything
// runs: for a target benchlab starts as a server (a server engine, no dsn),
// its basedir or version resolves to an install holding the flavor's
// programs, the server program runs (`--version`, which a missing shared
// library or another machine's build fails), and, under root, the user the
// server runs as can reach the programs. Nil for a dsn target and for
// embedded engines; an unknown engine is an error. The error starts with
// the target field it is about (basedir:, version:, engine:).
func CheckInstall(t engine.Target) error {
	f, err := FlavorOf(t.Engine)
	if err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	if f == nil || t.DSN != "" {
		return nil
	}
	field := "basedir"
	if t.Version != "" {
		field = "version"
	}
	basedir, err := InstallDir(f, t.Engine, t)
	if err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	bins, err := FindBinaries(f, basedir)
	if err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), versionTimeout)
	defer cancel()
	if _, err := ServerVersion(ctx, bins); err != nil {
		return fmt.Errorf("%s: %s: %w", field, bins.Basedir, err)
	}
	if u := f.RunAs(); u != "" && os.Geteuid() == 0 {
		for _, p := range []string{bins.Init, bins.Server} {
			if p == "" {
				continue
			}
			if err := ReachableBy(u, p); err != nil {
				return fmt.Errorf("%s: %v: the %s server runs as %s under root", field, err, f.Name(), u)
			}
		}
	}
	return nil
}

// versionTimeout bounds `<server> --version`.
const versionTimeout = 10 * time.Second

// ServerVersion runs the install's server program with --version and
// returns what it printed (one line: "postgres (PostgreSQL) 15.14",
// "mariadbd  Ver 10.11.14-MariaDB ..."). The error quotes its output, or
// says that it printed nothing.
func ServerVersion(ctx context.Context, b Binaries) (string, error) {
	out, err := exec.CommandContext(ctx, b.Server, "--version").CombinedOutput()
	text := strings.TrimSpace(string(out))
	if err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("%s --version did not answer within %s", b.Server, versionTimeout)
		}
		if text == "" {
			return "", fmt.Errorf("%s --version failed (%v) and printed nothing", b.Server, err)
		}
		return "", fmt.Errorf("%s --version failed (%v): %s", b.Server, err, tail(text, 5))
	}
	if text == "" {
		return "", fmt.Errorf("%s --version printed nothing; want the server's version", b.Server)
	}
	return text, nil
}
