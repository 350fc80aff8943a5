package mysql

import (
	"context"
	"errors"
	"fmt"

	"benchlab/internal/engine"
	"benchlab/internal/engine/fastpath"
)

// ChoosesClient says a target of the MySQL family may choose its client
// path (client = "driver" or "fast").
func (Driver) ChoosesClient() {}

// chooseClient decides, once the administrative connection is open,
// whether workers take the fast path (engine.ClientPath.Choose): not on a
// connection that may use TLS or compression, nor on a driver socket
// benchlab cannot take over, nor when the server answers the fast path's
// probe in a shape it does not read.
func (db *DB) chooseClient(ctx context.Context) error {
	return db.client.Choose(engine.ClientChoice{
		Asked:     db.target.Client,
		Supported: fastpath.Supported,
		Driver:    "go-sql-driver/mysql",
		Refuse: func() string {
			if ok, why := fastpath.MySQLAllowed(db.cfg); !ok {
				return why
			}
			return ""
		},
		Probe: func() (string, error) {
			c, err := db.dial(ctx, db.cfg)
			if err != nil {
				return "", err
			}
			defer c.Close()
			if c.w == nil {
				return "the driver's socket is not one benchlab can take over", nil
			}
			if err := c.w.Probe(); err != nil {
				var unknown *fastpath.UnknownAnswer
				if !errors.As(err, &unknown) {
					return "", db.Wrap(fmt.Errorf("%s target %s: probe of the fast client path: %w", db.engine, db.target.Name, err))
				}
				return unknown.Error(), nil
			}
			return "", nil
		},
	})
}

// cost is the cost a statement prepared at cost runs at (with the driver,
// its cancel watcher then ends a hung call on a target of any kind).
func (db *DB) cost(cost engine.Cost) engine.Cost { return db.client.Cost(cost) }

// PolledOnly is true with the driver client (engine.PolledOnly).
func (db *DB) PolledOnly() bool { return db.client.PolledOnly() }
