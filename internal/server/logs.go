package server

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// This file is a managed server's log: kept after a failure, its tail and its
// error lines quoted in errors.

// keepLog copies the log out of the run's dir, which the runner removes.
func (in *Instance) keepLog() {
	dst := in.KeptLog
	if dst == "" || os.MkdirAll(filepath.Dir(dst), 0o755) != nil {
		return
	}
	src, err := os.Open(in.LogPath)
	if err != nil {
		return
	}
	defer src.Close()
	out, err := os.Create(dst)
	if err != nil {
		return
	}
	defer out.Close()
	_, _ = io.Copy(out, src)
}

// LogName is a unique file name for a server log kept after the run.
func LogName(engine, target string) string {
	return fmt.Sprintf("%s-%s-%s-%d.log", engine, target, time.Now().Format("20060102-150405.000"), os.Getpid())
}

// LogTail returns the last n lines of the server log.
func (in *Instance) LogTail(n int) string { return Tail(in.LogPath, n) }

func (in *Instance) tail() string {
	t := in.LogTail(15)
	if t == "" {
		return "; the server log is empty (kept at " + in.KeptLog + ")"
	}
	msg := "; "
	if errs := ErrorLines(in.LogPath, 8, t); errs != "" {
		msg += "errors in the server log:\n" + errs + "\n"
	}
	return msg + "last lines of the server log (kept at " + in.KeptLog + "):\n" + t
}

// errorWords mark the log lines that say why a server or its setup failed.
var errorWords = []string{"ERROR", "FATAL", "PANIC", "unknown variable", "unknown option", "invalid value", "Aborting"}

// ErrorLines returns up to n lines of the file at path that look like
// errors and are not already in shown (the tail printed after them).
func ErrorLines(path string, n int, shown string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() && len(lines) < n {
		l := sc.Text()
		if strings.Contains(shown, l) {
			continue
		}
		for _, w := range errorWords {
			if strings.Contains(l, w) {
				lines = append(lines, "  | "+l)
				break
			}
		}
	}
	return strings.Join(lines, "\n")
}

// Tail returns the last n lines of the file at path ("" if unreadable).
func Tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		lines = append(lines, "  | "+sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

// errorf prefixes an error with what names this server: engine, target,
// basedir and address.
func (in *Instance) errorf(format string, args ...any) error {
	where := in.bins.Basedir
	if where == "" {
		where = in.cfg.Basedir
	}
	addr := ""
	if in.Port != 0 {
		addr = " at " + in.Addr()
	}
	return fmt.Errorf("%s target %s (%s%s): %w", in.cfg.Engine, in.cfg.Target, where, addr, fmt.Errorf(format, args...))
}
