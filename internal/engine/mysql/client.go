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
// whether workers take the fast path: not when the target asks for the
// driver, off Linux, on a connection that may use TLS or compression, or
// when the server answers the fast path's probe in a shape it does not
// read (a note then says why, for the manifest and the report).
func (db *DB) chooseClient(ctx context.Context) error {
	asked := db.target.Client
	fallback := func(why string) {
		db.notes = append(db.notes, fmt.Sprintf("client: the driver (go-sql-driver/mysql) is used, not the fast path: %s", why))
	}
	switch {
	case asked == engine.ClientDriver:
		return nil
	case !fastpath.Supported:
		if asked == engine.ClientFast {
			fallback("the fast path runs on Linux only")
		}
		return nil
	}
	if ok, why := fastpath.MySQLAllowed(db.cfg); !ok {
		fallback(why)
		return nil
	}
	db.fast = true
	c, err := db.dial(ctx, db.cfg)
	if err != nil {
		db.fast = false
		return err
	}
	defer c.Close()
	if c.w == nil {
		db.fast = false
		fallback("the driver's socket is not one benchlab can take over")
		return nil
	}
	if err := c.w.Probe(); err != nil {
		db.fast = false
		var unknown *fastpath.UnknownAnswer
		if !errors.As(err, &unknown) {
			return db.Wrap(fmt.Errorf("%s target %s: probe of the fast client path: %w", db.engine, db.target.Name, err))
		}
		fallback(unknown.Error())
	}
	return nil
}

// cost is the cost a statement prepared at cost runs at: with the driver,
// every statement is Long, the driver's call under the caller's context
// (its cancel watcher then ends a hung call on a target of any kind).
func (db *DB) cost(cost engine.Cost) engine.Cost {
	if !db.fast {
		return engine.Long
	}
	return cost
}

// PolledOnly is true with the driver client, whose sockets are Go's: the
// step's workers then wait through Go's poller (engine.PolledOnly).
func (db *DB) PolledOnly() bool { return !db.fast }

// clientInfo is the client path the workers use and the notes of a fall
// back to the driver, for the manifest.
func (db *DB) clientInfo() (string, []string) {
	if db.fast {
		return string(engine.ClientFast), nil
	}
	return string(engine.ClientDriver), db.notes
}
