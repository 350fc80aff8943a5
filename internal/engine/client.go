package engine

import (
	"fmt"
	"slices"
)

// Client is how a server engine's workers talk to the server: a target's
// client setting (docs/engines-and-servers.md).
type Client string

// Clients a target may choose.
const (
	// ClientAuto is the default: the fast path where it applies (Linux,
	// no TLS, a server that answers as expected), else the driver.
	ClientAuto Client = ""
	// ClientDriver uses the plain drivers (pgx, go-sql-driver/mysql) with
	// Go's sockets for every call.
	ClientDriver Client = "driver"
	// ClientFast uses benchlab's fast path (package engine/fastpath) for
	// short statements, falling back to the driver, with a note, where it
	// does not apply.
	ClientFast Client = "fast"
)

// ParseClient checks a target's client value.
func ParseClient(s string) (Client, error) {
	c := Client(s)
	if !slices.Contains([]Client{ClientAuto, ClientDriver, ClientFast}, c) {
		return "", fmt.Errorf("%q is not a client; want \"driver\" (the plain Go driver) or \"fast\" (benchlab's fast path, the default where it applies)", s)
	}
	return c, nil
}

// PolledOnly is implemented by remote DBs whose connections may wait
// through Go's network poller whatever the worker context says: with the
// driver client, the drivers' sockets are Go's own, so the runner plans
// the step as polled IO (no thread locked per worker) and records it so.
type PolledOnly interface {
	PolledOnly() bool
}

// ClientChooser is implemented by drivers whose targets may choose their
// client (the server engines with a fast path); others have one client,
// and a target of theirs that names one is refused.
type ClientChooser interface {
	ChoosesClient()
}

// ClientPath is the client path a server DB's workers take, chosen once
// its administrative connection is open (Choose), and the notes of a fall
// back to the driver, for the manifest and the report.
type ClientPath struct {
	// Fast is true when workers take the fast path.
	Fast bool
	// Notes say why the driver is used, when the target left the choice
	// to the default or asked for the fast path.
	Notes []string
}

// ClientChoice is what Choose needs to know of one target's connection.
type ClientChoice struct {
	// Asked is the target's client setting.
	Asked Client
	// Supported is false where the fast path does not run (off Linux).
	Supported bool
	// Driver names the driver in the notes ("pgx").
	Driver string
	// Refuse says why the connection keeps the fast path out (TLS,
	// compression); "" when it does not.
	Refuse func() string
	// Probe dials a connection with Fast set and probes the server's
	// answers: a reason to fall back to the driver (an answer the fast
	// path does not read), or an error that fails the target.
	Probe func() (fallBack string, err error)
}

// Choose decides whether workers take the fast path: not when the target
// asks for the driver, where it does not run, on a connection Refuse
// keeps it out of, or when Probe finds a reason to fall back (a note then
// says why). An error of Probe leaves the driver chosen and is returned.
func (p *ClientPath) Choose(c ClientChoice) error {
	switch {
	case c.Asked == ClientDriver:
		return nil
	case !c.Supported:
		if c.Asked == ClientFast {
			p.fallBack(c.Driver, "the fast path runs on Linux only")
		}
		return nil
	}
	if why := c.Refuse(); why != "" {
		p.fallBack(c.Driver, why)
		return nil
	}
	p.Fast = true
	why, err := c.Probe()
	if err != nil || why != "" {
		p.Fast = false
	}
	if err != nil {
		return err
	}
	if why != "" {
		p.fallBack(c.Driver, why)
	}
	return nil
}

// fallBack notes that driver is used, and why.
func (p *ClientPath) fallBack(driver, why string) {
	p.Notes = append(p.Notes, fmt.Sprintf("client: the driver (%s) is used, not the fast path: %s", driver, why))
}

// Cost is the cost a statement prepared at cost runs at: with the driver,
// every statement is Long, the driver's call under the caller's context
// (its cancel watcher then ends a hung call).
func (p *ClientPath) Cost(cost Cost) Cost {
	if !p.Fast {
		return Long
	}
	return cost
}

// PolledOnly is true with the driver, whose sockets are Go's: the step's
// workers then wait through Go's poller (the PolledOnly interface).
func (p *ClientPath) PolledOnly() bool { return !p.Fast }

// Info is the client path the workers use and the notes of a fall back to
// the driver, for the manifest (Info.Client, Info.Notes).
func (p *ClientPath) Info() (string, []string) {
	if p.Fast {
		return string(ClientFast), nil
	}
	return string(ClientDriver), p.Notes
}
