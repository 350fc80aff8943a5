package spec

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// MaxSpecBytes is the largest spec file benchlab reads: a spec is a page
// of settings (the largest example is a few KB, a stored spec with a wide
// sweep some tens of KB), and the TOML decoder's time and memory grow with
// its input, some of it faster than linearly.
const MaxSpecBytes = 1 << 20

// MaxStoredSpecBytes is the largest stored spec ParseStored reads: the
// stored spec writes every sweep value's target in full, so it is larger
// than the file it came from (MaxTargets targets fit well within it).
const MaxStoredSpecBytes = 8 << 20

// MaxSpecDepth is how deeply a spec's keys may nest, counting table
// headers, dotted keys, inline tables and arrays: a spec needs three or
// four levels ([workload.insert] holds an array). The TOML decoder recurses
// once per level of brackets (so deep nesting overflows its stack) and
// keeps every key with all its parents (so memory grows with the square of
// the depth); the check runs before it.
const MaxSpecDepth = 16

// checkShape refuses spec text that would cost the TOML decoder more than
// its size is worth: more than maxBytes, or keys nested deeper than
// MaxSpecDepth. It scans src once, skipping strings and comments, and
// counts each bracket or brace and each dot of a dotted key (a float's
// one dot counts too, which the limit leaves room for). Malformed text it
// lets through, for the decoder to report.
func checkShape(src []byte, file string, maxBytes int) error {
	if len(src) > maxBytes {
		return errf(file, "%d bytes is too large for a spec file; want at most %d bytes (%d MiB)", len(src), maxBytes, maxBytes>>20)
	}
	var (
		stack    []int // the depth inside each open bracket or brace
		base     int   // the depth of the last table header's keys
		chain    int   // dots in the dotted key (or number) being read
		keyChain int   // dots in the key before the last '='
		header   bool  // the open top-level bracket is a table header
		hdrMax   int   // the deepest level inside that header
		line     = 1
		atStart  = true // only spaces since the line began, outside brackets
	)
	cur := func() int {
		if len(stack) == 0 {
			return base
		}
		return stack[len(stack)-1]
	}
	deep := func(d int) error {
		if d > MaxSpecDepth {
			return errf(file, "line %d: keys, tables and arrays nest deeper than %d levels; want at most %d "+
				"(a spec needs three or four)", line, MaxSpecDepth, MaxSpecDepth)
		}
		if header && d > hdrMax {
			hdrMax = d
		}
		return nil
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		start := atStart
		atStart = false
		switch {
		case c == '\n':
			line++
			chain, keyChain = 0, 0
			atStart = len(stack) == 0
		case c == ' ' || c == '\t' || c == '\r':
			atStart = start
		case c == '#':
			for i+1 < len(src) && src[i+1] != '\n' {
				i++
			}
		case c == '"' || c == '\'':
			i = skipString(src, i, &line)
		case c == '.':
			chain++
			if err := deep(cur() + chain); err != nil {
				return err
			}
		case c == '=':
			keyChain, chain = chain, 0
		case c == '[' || c == '{':
			if len(stack) == 0 && start && c == '[' {
				// A table header: its keys start from the top.
				header, hdrMax, base = true, 0, 0
			}
			d := cur() + keyChain + 1
			if err := deep(d); err != nil {
				return err
			}
			stack = append(stack, d)
			chain, keyChain = 0, 0
		case c == ']' || c == '}':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			if len(stack) == 0 && header {
				base, header = hdrMax, false
			}
			chain, keyChain = 0, 0
		case c == '_' || c == '-' || c == '+' || c == ':' ||
			'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9':
			// A bare key's or a value's characters: the chain goes on.
		default:
			chain, keyChain = 0, 0
		}
	}
	return nil
}

// skipString returns the index of the last byte of the string that starts
// at src[i] (a basic "..." or literal '...' string, or either's multi-line
// form), counting the newlines it holds in line; an unterminated string
// runs to the end of its line (one-line forms) or of src.
func skipString(src []byte, i int, line *int) int {
	q := src[i]
	multi := i+2 < len(src) && src[i+1] == q && src[i+2] == q
	if multi {
		i += 2
	}
	for i++; i < len(src); i++ {
		switch c := src[i]; {
		case c == '\\' && q == '"':
			if i+1 < len(src) && src[i+1] == '\n' {
				*line++
			}
			i++
		case c == '\n':
			if !multi {
				return i - 1
			}
			*line++
		case c == q && !multi:
			return i
		case c == q && i+2 < len(src) && src[i+1] == q && src[i+2] == q:
			// Up to two more quotes may close a multi-line string ("""a"""").
			i += 2
			for i+1 < len(src) && src[i+1] == q {
				i++
			}
			return i
		}
	}
	return len(src) - 1
}

// readSpecFile reads at most MaxSpecBytes of the file at path, refusing a
// longer one (or an endless one, such as /dev/zero) without reading it all.
func readSpecFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, errf(path, "cannot read the spec file: %v", unwrapPath(err))
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, MaxSpecBytes+1))
	if err != nil {
		return nil, errf(path, "cannot read the spec file: %v", unwrapPath(err))
	}
	if len(src) > MaxSpecBytes {
		return nil, errf(path, "more than %d bytes is too large for a spec file; want at most 1 MiB", MaxSpecBytes)
	}
	return src, nil
}

// unwrapPath drops the path an *os.PathError repeats, which the error's
// field already names.
func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// maxListedKeys and maxKeyChars bound the unknown keys an error lists, so
// that its text stays short whatever the file holds.
const (
	maxListedKeys = 10
	maxKeyChars   = 60
)

// listKeys joins keys for an error message in time linear in their total
// length: a key whose parent table is also listed is left out (the parent
// says it), each key is cut to maxKeyChars characters and at most
// maxListedKeys are named, with a count of the rest.
func listKeys(keys []string) string {
	listed := make(map[string]bool, len(keys))
	for _, k := range keys {
		listed[k] = true
	}
	var out []string
	rest := 0
	for _, k := range keys {
		parent := false
		for j := strings.IndexByte(k, '.'); j >= 0; {
			if listed[k[:j]] {
				parent = true
				break
			}
			next := strings.IndexByte(k[j+1:], '.')
			if next < 0 {
				break
			}
			j += 1 + next
		}
		switch {
		case parent:
		case len(out) == maxListedKeys:
			rest++
		default:
			if r := []rune(k); len(r) > maxKeyChars {
				k = string(r[:maxKeyChars-3]) + "..."
			}
			out = append(out, k)
		}
	}
	s := strings.Join(out, ", ")
	if rest > 0 {
		s += fmt.Sprintf(" and %d more", rest)
	}
	return s
}
