// Package stale finds what a benchlab process killed hard left behind: runs
// stored as running whose process is gone, and work dirs in the temp dir
// whose owner process is gone. An owner is a process id on a host; a
// process on another host cannot be checked from here.
package stale

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ownerFile is the file in a work dir that names its owner: "pid host".
const ownerFile = ".benchlab-owner"

// Hostname is this machine's name, as manifests store it.
func Hostname() string {
	h, _ := os.Hostname()
	return h
}

// Gone says whether the process pid on host is known to have ended: only a
// process on this host can be checked; pid 0 (not recorded) is never gone.
func Gone(host string, pid int) bool {
	if pid <= 0 || host == "" || host != Hostname() {
		return false
	}
	err := syscall.Kill(pid, 0)
	return errors.Is(err, syscall.ESRCH)
}

// MarkOwner records in dir that this process owns it.
func MarkOwner(dir string) error {
	body := fmt.Sprintf("%d %s\n", os.Getpid(), Hostname())
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(body), 0o644); err != nil {
		return fmt.Errorf("work dir owner: %w", err)
	}
	return nil
}

// SweepWorkDirs removes the benchlab-* dirs directly under tmp whose owner
// file names a process of this host that has ended, and returns them. Dirs
// without an owner file (made by older versions, or not benchlab's) stay.
func SweepWorkDirs(tmp string) ([]string, error) {
	dirs, err := filepath.Glob(filepath.Join(tmp, "benchlab-*"))
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, ownerFile))
		if err != nil {
			continue
		}
		pidText, host, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
		pid, err := strconv.Atoi(pidText)
		if err != nil || !Gone(host, pid) {
			continue
		}
		if err := os.RemoveAll(d); err != nil {
			return removed, fmt.Errorf("remove abandoned work dir %s: %w", d, err)
		}
		removed = append(removed, d)
	}
	return removed, nil
}
