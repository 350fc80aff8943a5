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

// tempPatterns are the temp dirs benchlab makes: work dirs, and a managed
// server's short socket dir and plain-path alias (package server).
var tempPatterns = []string{"benchlab-*", "bl-dir-*", "bl-sock-*"}

// SweepWorkDirs removes the dirs benchlab makes directly under tmp (work
// dirs, and servers' socket and alias dirs) whose owner file names a
// process of this host that has ended, and returns them. Dirs without an
// owner file (made by older versions, or not benchlab's) stay.
func SweepWorkDirs(tmp string) ([]string, error) {
	var dirs []string
	for _, pat := range tempPatterns {
		m, err := filepath.Glob(filepath.Join(tmp, pat))
		if err != nil {
			return nil, err
		}
		dirs = append(dirs, m...)
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

// claimPrefix names the files in a work dir a user named (--workdir) that
// list the data dirs one benchlab process made there: ".benchlab-owner-PID".
const claimPrefix = ".benchlab-owner-"

// Claim is this process's list of the data dirs it makes in a work dir it
// does not own as a whole: a process killed hard leaves its claim behind,
// and the next run in that work dir removes what it lists.
type Claim struct {
	path string
}

// ClaimIn starts this process's claim in dir.
func ClaimIn(dir string) (*Claim, error) {
	p := filepath.Join(dir, claimPrefix+strconv.Itoa(os.Getpid()))
	body := fmt.Sprintf("%d %s\n", os.Getpid(), Hostname())
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		return nil, fmt.Errorf("work dir claim: %w", err)
	}
	return &Claim{path: p}, nil
}

// Add lists the data dir name (an entry directly in the claim's dir) as
// made by this process, before it is made.
func (c *Claim) Add(name string) error {
	f, err := os.OpenFile(c.path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("work dir claim: %w", err)
	}
	_, err = fmt.Fprintln(f, name)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("work dir claim: %w", err)
	}
	return nil
}

// Release ends the claim: what it lists is this process's to remove or keep.
func (c *Claim) Release() { os.Remove(c.path) }

// SweepClaims removes the data dirs listed by the claims in dir of
// processes of this host that have ended, and the claims, and returns the
// dirs removed. Only plain names directly in dir are removed.
func SweepClaims(dir string) ([]string, error) {
	claims, err := filepath.Glob(filepath.Join(dir, claimPrefix+"*"))
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, c := range claims {
		b, err := os.ReadFile(c)
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		pidText, host, _ := strings.Cut(lines[0], " ")
		pid, err := strconv.Atoi(pidText)
		if err != nil || !Gone(host, pid) {
			continue
		}
		for _, name := range lines[1:] {
			if name == "" || name == "." || name == ".." || strings.ContainsRune(name, '/') {
				continue
			}
			d := filepath.Join(dir, name)
			if _, err := os.Lstat(d); err != nil {
				continue
			}
			if err := os.RemoveAll(d); err != nil {
				return removed, fmt.Errorf("remove data dir %s of a benchlab process that is gone: %w", d, err)
			}
			removed = append(removed, d)
		}
		os.Remove(c)
	}
	return removed, nil
}
