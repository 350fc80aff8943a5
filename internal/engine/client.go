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
