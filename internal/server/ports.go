package server

import (
	"errors"
	"fmt"
	"net"
	"strconv"
)

// This file finds free loopback ports for managed servers.

// ErrPortInUse is wrapped by errors caused by a port another process holds.
var ErrPortInUse = errors.New("port already in use")

// FreePort asks the kernel for a free TCP port on Host.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(Host, "0"))
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// FreePorts asks the kernel for n distinct free TCP ports on Host. All n
// listeners are held open until the last is picked, so no port is handed
// out twice (picking one at a time can return a port just closed).
func FreePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", net.JoinHostPort(Host, "0"))
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func portFree(port int) error {
	addr := net.JoinHostPort(Host, strconv.Itoa(port))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("%w: port %d on %s: %v", ErrPortInUse, port, Host, err)
	}
	return l.Close()
}
