package custom

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"

	"benchlab/internal/randgen"
	"benchlab/internal/workload"
)

// arg makes the value of one placeholder, drawn anew for every execution.
type arg struct {
	kind   argKind
	lo, hi int64         // uniform bounds; zipf's n in hi
	n      int           // string length
	zipf   *randgen.Zipf // zipf(n)
	seq    *atomic.Int64 // seq(start): the next value, shared by all workers
	val    any           // a constant
}

type argKind int

const (
	argConst argKind = iota
	argUniform
	argZipf
	argSeq
	argString
	argWorker
)

var callRE = regexp.MustCompile(`^([a-z]+)\s*\(\s*(.*?)\s*\)$`)

// parseArg reads one argument spec: uniform(lo, hi), zipf(n), seq(start),
// string(n), worker, an integer, or a 'quoted' string.
func parseArg(s string) (*arg, error) {
	s = strings.TrimSpace(s)
	if s == "worker" {
		return &arg{kind: argWorker}, nil
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return &arg{kind: argConst, val: v}, nil
	}
	if len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'' {
		return &arg{kind: argConst, val: strings.ReplaceAll(s[1:len(s)-1], "''", "'")}, nil
	}
	m := callRE.FindStringSubmatch(s)
	if m == nil {
		return nil, fmt.Errorf("%q is not an argument; %s", s, argHelp)
	}
	var nums []int64
	if m[2] != "" {
		for _, f := range strings.Split(m[2], ",") {
			v, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%q: %q is not an integer", s, strings.TrimSpace(f))
			}
			nums = append(nums, v)
		}
	}
	want := func(n int, form string) error {
		if len(nums) != n {
			return fmt.Errorf("%q: want %s", s, form)
		}
		return nil
	}
	switch m[1] {
	case "uniform":
		if err := want(2, "uniform(lo, hi)"); err != nil {
			return nil, err
		}
		if nums[0] > nums[1] {
			return nil, fmt.Errorf("%q: lo %d is above hi %d", s, nums[0], nums[1])
		}
		if nums[1]-nums[0] < 0 || nums[1]-nums[0] == math.MaxInt64 {
			return nil, fmt.Errorf("%q: the range is too wide", s)
		}
		return &arg{kind: argUniform, lo: nums[0], hi: nums[1]}, nil
	case "zipf":
		if err := want(1, "zipf(n), values 1..n with sysbench's exponent 0.8"); err != nil {
			return nil, err
		}
		if nums[0] < 1 {
			return nil, fmt.Errorf("%q: n must be >= 1", s)
		}
		return &arg{kind: argZipf, hi: nums[0], zipf: randgen.NewZipf(nums[0], randgen.DefaultZipfExp)}, nil
	case "seq":
		if err := want(1, "seq(start)"); err != nil {
			return nil, err
		}
		a := &arg{kind: argSeq, lo: nums[0], seq: new(atomic.Int64)}
		a.seq.Store(nums[0])
		return a, nil
	case "string":
		if err := want(1, "string(length)"); err != nil {
			return nil, err
		}
		if nums[0] < 0 || nums[0] > 1<<20 {
			return nil, fmt.Errorf("%q: length must be 0 to %d", s, 1<<20)
		}
		return &arg{kind: argString, n: int(nums[0])}, nil
	}
	return nil, fmt.Errorf("%q: unknown generator %q; %s", s, m[1], argHelp)
}

const argHelp = "want uniform(lo, hi), zipf(n), seq(start), string(length), worker, an integer or a 'quoted' string"

const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// draw returns the next value for worker id, using r and buf (for strings).
func (a *arg) draw(r *randgen.Rand, id int, buf []byte) (any, []byte) {
	switch a.kind {
	case argUniform:
		return r.Uniform(a.lo, a.hi), buf
	case argZipf:
		return a.zipf.Next(r), buf
	case argSeq:
		return a.seq.Add(1) - 1, buf
	case argString:
		buf = buf[:0]
		for range a.n {
			buf = append(buf, letters[r.Uniform(0, int64(len(letters)-1))])
		}
		return string(buf), buf
	case argWorker:
		return int64(id), buf
	}
	return a.val, buf
}

// parseArgs reads specs for statements with placeholders '?' in all, naming
// field in errors.
func parseArgs(field string, specs []string, placeholders int) ([]*arg, error) {
	if len(specs) != placeholders {
		return nil, workload.Bad(field, nil, "%d arguments for %d '?' placeholders; want one argument per placeholder", len(specs), placeholders)
	}
	out := make([]*arg, len(specs))
	for i, s := range specs {
		a, err := parseArg(s)
		if err != nil {
			return nil, workload.Bad(fmt.Sprintf("%s[%d]", field, i), nil, "%v", err)
		}
		out[i] = a
	}
	return out, nil
}

// reset sets a seq() argument back to its start.
func (a *arg) reset() { a.seq.Store(a.lo) }
