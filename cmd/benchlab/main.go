// Command benchlab finds database performance regressions: it runs
// benchmark experiments against database engines, stores every run, and
// reports the differences. See README.md.
package main

import (
	"os"

	_ "benchlab/internal/all"
	"benchlab/internal/cli"
)

func main() { os.Exit(cli.Main(cli.OSEnv(), os.Args[1:])) }
