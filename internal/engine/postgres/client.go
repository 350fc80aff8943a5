package postgres

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"

	"benchlab/internal/engine"
	"benchlab/internal/engine/fastpath"
)

// ChoosesClient says a PostgreSQL target may choose its client path
// (client = "driver" or "fast").
func (Driver) ChoosesClient() {}

// chooseClient decides, once the administrative connection is open,
// whether workers take the fast path (engine.ClientPath.Choose): not on a
// connection that uses TLS, nor when the server answers the fast path's
// probe otherwise than PostgreSQL does.
func (db *DB) chooseClient(ctx context.Context) error {
	return db.client.Choose(engine.ClientChoice{
		Asked:     db.target.Client,
		Supported: fastpath.Supported,
		Driver:    "pgx",
		Refuse: func() string {
			if _, ok := db.admin.PgConn().Conn().(*tls.Conn); ok {
				return "the connection uses TLS"
			}
			return ""
		},
		Probe: func() (string, error) {
			c, err := db.dial(ctx, db.cfg)
			if err != nil {
				return "", err
			}
			defer c.Close(context.WithoutCancel(ctx))
			if err := fastpath.ProbePostgres(c.PgConn()); err != nil {
				var unknown *fastpath.UnknownAnswer
				if !errors.As(err, &unknown) {
					return "", db.Wrap(fmt.Errorf("postgres target %s: probe of the fast client path: %w", db.target.Name, err))
				}
				return unknown.Error(), nil
			}
			return "", nil
		},
	})
}

// cost is the cost a statement prepared at cost runs at (with the driver,
// pgconn's own call under the caller's context).
func (db *DB) cost(cost engine.Cost) engine.Cost { return db.client.Cost(cost) }

// PolledOnly is true with the driver client (engine.PolledOnly).
func (db *DB) PolledOnly() bool { return db.client.PolledOnly() }
