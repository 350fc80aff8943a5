// Package profile records where a step's CPU time goes: it samples the call
// stacks of a set of processes with perf record (a software clock event, so
// it works where hardware counters do not), keeps the samples of a time
// window, and turns them into folded stacks ("root;caller;leaf count", one
// line per distinct stack), the format flame graph tools read. It also
// reduces folded stacks to self time per function, which the report compares
// between a base and a target.
package profile

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Stacks are folded stacks: each distinct call stack, its frames root first
// and joined by ';', with the number of samples in which it was on CPU.
type Stacks map[string]int64

// Samples is the number of samples over every stack.
func (s Stacks) Samples() int64 {
	var n int64
	for _, c := range s {
		n += c
	}
	return n
}

// header is a sample's first line in the output of
// `perf script -F comm,pid,tid,time,period,event --ns` (with the ip, sym and
// dso fields the call chain follows on indented lines):
//
//	postgres 4242/4242  1761.548554051:   10101010 cpu-clock:
//
// The command name may hold spaces, so the line is matched from its
// pid/tid on. A sample perf could not give a task (pid/tid -1/-1, seen as
// a task exits) is skipped.
var header = regexp.MustCompile(`^(.*?)\s+(-?\d+)/(-?\d+)\s+(\d+)\.(\d{9}):\s+\d+\s+\S+:\s*$`)

// Fold reads `perf script` output (fields comm,pid,tid,time,period,event,ip,
// sym,dso; times in nanoseconds) and folds the samples taken in one of ws
// (nanoseconds on perf's clock) into stacks. Each
// stack starts with the process's command name, then the call chain from
// the outermost frame to the one on CPU; a thread perf saw start without
// its name (":<tid>") takes the name its process has in other samples. A
// frame whose symbol perf could not
// resolve is named after its object file ("[libc.so.6]"); ';' in a symbol
// becomes ':' so that it cannot split the line.
func Fold(r io.Reader, ws Windows) (Stacks, error) {
	type key struct{ pid, comm, stack string }
	counts := map[key]int64{}
	commOf := map[string]string{} // pid -> a named thread's comm
	err := eachSample(r, func(s sample) {
		if _, ok := commOf[s.pid]; !ok && s.comm != "" {
			commOf[s.pid] = s.comm
		}
		if _, in := ws.holding(s.t); in {
			counts[key{s.pid, s.comm, rootFirst(s.frames)}]++
		}
	})
	if err != nil {
		return nil, err
	}
	out := Stacks{}
	for k, n := range counts {
		out[nameOf(k.pid, k.comm, commOf)+k.stack] += n
	}
	return out, nil
}

// rootFirst joins frames (leaf first, as perf prints them) root first,
// each after a ';', the folded form of a stack below its command name.
func rootFirst(frames []string) string {
	var b strings.Builder
	for i := len(frames) - 1; i >= 0; i-- {
		b.WriteByte(';')
		b.WriteString(frames[i])
	}
	return b.String()
}

// nameOf is the command name a folded stack starts with: comm, else the
// name process pid has in other samples (commOf), else "[pid N]".
func nameOf(pid, comm string, commOf map[string]string) string {
	if comm != "" {
		return comm
	}
	if comm = commOf[pid]; comm != "" {
		return comm
	}
	return "[pid " + pid + "]"
}

// frame parses one call chain line, "\t<hex ip> <symbol> (<dso>)", to the
// frame's name.
func frame(text string) (string, error) {
	text = strings.TrimSpace(text)
	ip, rest, ok := strings.Cut(text, " ")
	if !ok || !isHex(ip) {
		return "", fmt.Errorf("not a frame (ip symbol (dso)): %q", text)
	}
	rest = strings.TrimSpace(rest)
	sym, dso := rest, ""
	if strings.HasSuffix(rest, ")") {
		if i := strings.LastIndex(rest, " ("); i >= 0 {
			sym, dso = strings.TrimSpace(rest[:i]), rest[i+2:len(rest)-1]
		} else if strings.HasPrefix(rest, "(") {
			sym, dso = "", rest[1:len(rest)-1]
		}
	}
	if sym == "" || sym == "[unknown]" {
		name := filepath.Base(dso)
		if dso == "" || dso == "[unknown]" {
			name = "unknown"
		}
		return "[" + clean(strings.Trim(name, "[]")) + "]", nil
	}
	return clean(sym), nil
}

func isHex(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// clean keeps a name on one folded line: ';' separates frames and the last
// space the count.
func clean(s string) string {
	return strings.NewReplacer(";", ":", "\n", " ", "\t", " ").Replace(s)
}

// Text writes the stacks in folded format, one "stack count" line each,
// sorted by stack.
func (s Stacks) Text() []byte {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b bytes.Buffer
	for _, k := range keys {
		fmt.Fprintf(&b, "%s %d\n", k, s[k])
	}
	return b.Bytes()
}

// Parse reads folded stacks ("stack count" lines); blank lines are skipped.
func Parse(text []byte) (Stacks, error) {
	out := Stacks{}
	for i, line := range strings.Split(string(text), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		j := strings.LastIndexByte(line, ' ')
		if j <= 0 {
			return nil, fmt.Errorf("folded stacks line %d: want \"frame;frame count\", got %q", i+1, line)
		}
		n, err := strconv.ParseInt(line[j+1:], 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("folded stacks line %d: count %q is not a whole number >= 0", i+1, line[j+1:])
		}
		out[line[:j]] += n
	}
	return out, nil
}

// Self returns each function's self samples: the samples in which it was
// the leaf frame, the one on CPU.
func (s Stacks) Self() map[string]int64 {
	out := map[string]int64{}
	for k, n := range s {
		leaf := k
		if i := strings.LastIndexByte(k, ';'); i >= 0 {
			leaf = k[i+1:]
		}
		out[leaf] += n
	}
	return out
}

// Inclusive returns each function's inclusive samples: the samples in
// which it was anywhere on the stack, counted once per sample however
// often it recurses.
func (s Stacks) Inclusive() map[string]int64 {
	out := map[string]int64{}
	seen := map[string]bool{}
	for k, n := range s {
		clear(seen)
		for _, f := range strings.Split(k, ";") {
			if !seen[f] {
				seen[f] = true
				out[f] += n
			}
		}
	}
	return out
}
