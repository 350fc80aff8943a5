package ferretdb

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

// ServeCommand is the hidden subcommand that makes benchlab (or a test
// binary) the FerretDB server a ferretdb target runs: benchlab starts
// itself as a process of its own, as it starts any managed server.
const ServeCommand = "ferretdb-serve"

// Serve runs FerretDB as args say (--handler, --sqlite-url,
// --postgresql-url, --unix) until SIGTERM or SIGINT, logging to log, and
// returns the process's exit code: 0 after a requested stop, 1 when
// FerretDB fails, 2 for bad arguments.
func Serve(args []string, log io.Writer) int {
	fs := flag.NewFlagSet(ServeCommand, flag.ContinueOnError)
	fs.SetOutput(log)
	handler := fs.String("handler", "sqlite", "backend: sqlite or postgresql")
	sqliteURL := fs.String("sqlite-url", "", "SQLite URI of the data dir (file:/dir/)")
	pgURL := fs.String("postgresql-url", "", "PostgreSQL URL, without credentials (clients' pass through)")
	unix := fs.String("unix", "", "unix socket to listen on")
	tcp := fs.String("tcp", "", "TCP address to listen on (host:port)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *unix == "" && *tcp == "" {
		fmt.Fprintf(log, "%s: give --unix or --tcp\n", ServeCommand)
		return 2
	}
	logger := slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelInfo}))
	f, err := ferretdb.New(&ferretdb.Config{
		Listener:      ferretdb.ListenerConfig{Unix: *unix, TCP: *tcp},
		Logger:        logger,
		Handler:       *handler,
		SQLiteURL:     *sqliteURL,
		PostgreSQLURL: *pgURL,
	})
	if err != nil {
		fmt.Fprintf(log, "%s: %v\n", ServeCommand, err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	fmt.Fprintf(log, "%s: FerretDB %s on %s, backend %s, pid %d\n", ServeCommand, Version(), *unix+*tcp, *handler, os.Getpid())
	if err := f.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(log, "%s: %v\n", ServeCommand, err)
		return 1
	}
	fmt.Fprintf(log, "%s: stopped\n", ServeCommand)
	return 0
}

// ServeIfAsked runs Serve and exits when the process was started as the
// FerretDB server (os.Args[1] is ServeCommand). Test binaries whose tests
// start ferretdb targets call it first in TestMain, as they re-execute
// themselves for the server.
func ServeIfAsked() {
	if len(os.Args) > 1 && os.Args[1] == ServeCommand {
		os.Exit(Serve(os.Args[2:], os.Stderr))
	}
}
