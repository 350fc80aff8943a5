package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"benchlab/internal/store"
)

// ptyDriver runs benchlab (this test binary as a child, see childCmd) on a
// real pseudo-terminal made by Python's pty module, waits for the question
// a long run asks, answers it, and with "y" waits for the first live line
// and interrupts the run. It prints the child's exit code on its first line,
// then everything the terminal showed.
const ptyDriver = `
import os, pty, select, signal, sys, time
answer, prog = sys.argv[1], sys.argv[2]
pid, fd = pty.fork()
if pid == 0:
    os.execv(prog, [prog])
out = b""
def read_until(marker, timeout):
    global out
    end = time.time() + timeout
    while marker is None or marker not in out:
        if time.time() > end:
            return False
        r, _, _ = select.select([fd], [], [], 0.2)
        if not r:
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            return marker is None
        if not chunk:
            return marker is None
        out += chunk
    return True
if not read_until(b"Run it? [y/N] ", 120):
    os.kill(pid, signal.SIGKILL)
    print("EXIT no-question")
    sys.stdout.write(out.decode(errors="replace"))
    sys.exit(0)
os.write(fd, answer.encode() + b"\n")
if answer == "y" and read_until(b"point-query thds: 1", 120):
    os.kill(pid, signal.SIGINT)
read_until(None, 120)
_, status = os.waitpid(pid, 0)
print("EXIT", os.waitstatus_to_exitcode(status))
sys.stdout.write(out.decode(errors="replace"))
`

// TestConfirmOnTerminal answers, on a real pseudo-terminal, the question a
// run planned for more than an hour asks without --yes: "n" exits 2 having
// run nothing and created no store; "y" runs it (its live lines come, the
// store holds the run), and an interrupt then ends it, keeping what was
// measured.
func TestConfirmOnTerminal(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatal("python3 is needed to drive a pseudo-terminal")
	}
	for _, c := range []struct {
		answer   string
		wantExit string
		want     []string
	}{
		{"n", "EXIT 2", []string{"This run is planned for 2h", "more than an hour", "Run it? [y/N]", "not confirmed; nothing was run"}},
		{"y", "EXIT 130", []string{"Run it? [y/N]", "== run 1/1", "point-query thds: 1", "interrupt"}},
	} {
		t.Run(c.answer, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "r.db")
			child := childCmd(nil, "run", "--engine", "sqlite", "--tests", "point-query", "--table-size", "2000",
				"--time", "2h", "--warmup", "0", "--report-interval", "1", "--store", db)
			cmd := exec.Command("python3", "-c", ptyDriver, c.answer, os.Args[0])
			cmd.Env = child.Env
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("pty driver: %v\n%s", err, out)
			}
			text := string(out)
			first, rest, _ := strings.Cut(text, "\n")
			if strings.TrimSpace(first) != c.wantExit {
				t.Errorf("answer %q: %s, want %s\n%s", c.answer, first, c.wantExit, rest)
			}
			for _, w := range c.want {
				if !strings.Contains(rest, w) {
					t.Errorf("answer %q: the terminal lacks %q:\n%s", c.answer, w, rest)
				}
			}
			_, statErr := os.Stat(db)
			if c.answer == "n" {
				if statErr == nil {
					t.Error("a store was created for a run not confirmed")
				}
				return
			}
			if statErr != nil {
				t.Fatalf("no store after a confirmed run: %v", statErr)
			}
			st, err := store.Open(db)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			runs, _, err := st.RecentRuns(context.Background(), 0, 0)
			if err != nil || len(runs) != 1 || runs[0].Status != store.StatusInterrupted {
				t.Fatalf("runs %+v (%v); want one interrupted run", runs, err)
			}
			res, err := st.Results(context.Background(), runs[0].ID, false)
			if err != nil {
				t.Fatal(err)
			}
			measured := false
			for _, r := range res {
				measured = measured || (r.Test == "point-query" && r.Events > 0)
			}
			if !measured {
				t.Errorf("the interrupted run kept no point-query result: %+v", res)
			}
		})
	}
}
