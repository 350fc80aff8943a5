package postgres

import (
	"context"
	"fmt"

	"benchlab/internal/engine"
	"benchlab/internal/server"
)

// Behind sends db's worker connections to a proxy or pooler listening on
// port on loopback in front of db's managed server (the pgbouncer engine),
// and makes db manage m, which holds that server first and the proxy last:
// the runner then counts both processes' CPU as the server's, a death of
// either ends the step, and Close stops the proxy, then the server. The
// administrative connection stays on the server (settings, statistics,
// maintenance). The client path is chosen again, through the proxy.
func (db *DB) Behind(ctx context.Context, port int, m server.Managed) error {
	if db.Instance() == nil {
		return fmt.Errorf("postgres target %s: a proxy goes in front of a server benchlab starts, not a dsn", db.target.Name)
	}
	db.Managed = m
	cfg := db.cfg.Copy()
	cfg.Port = uint16(port)
	db.cfg = cfg
	db.client = engine.ClientPath{}
	return db.chooseClient(ctx)
}
