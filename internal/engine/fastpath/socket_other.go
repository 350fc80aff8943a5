//go:build !linux

package fastpath

import (
	"context"
	"net"
)

// Supported is false: the blocking sockets use Linux's system calls, so
// elsewhere targets use the drivers (client = "driver").
const Supported = false

// Dial connects with Go's own sockets; engines never take the fast path
// here (Supported), so this is only what a driver-mode connection dials.
func Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}
