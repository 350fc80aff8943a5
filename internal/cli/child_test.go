package cli

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// childArgs is the variable that makes the test binary run benchlab's Main
// with the arguments it holds (joined by \x1f) instead of the tests: for
// tests that need a process of its own (CPU pinning, signals).
const childArgs = "BENCHLAB_CLI_CHILD"

func TestMain(m *testing.M) {
	if args := os.Getenv(childArgs); args != "" {
		os.Exit(Main(OSEnv(), strings.Split(args, "\x1f")))
	}
	os.Exit(m.Run())
}

// childCmd returns a command that runs `benchlab args...` in a child
// process (this test binary, through TestMain), with extra environment.
func childCmd(env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(append(os.Environ(), childArgs+"="+strings.Join(args, "\x1f")), env...)
	return cmd
}
