//go:build !linux

package profile

import (
	"errors"
	"runtime"
)

// errNotLinux says why Start records nothing: CPU profiles are perf
// record's, which is Linux-only.
var errNotLinux = errors.New("profile: CPU profiles are Linux-only (perf record); this system is " + runtime.GOOS)
