package mysql

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
)

// flushVars are the InnoDB variables the postwrite cleanup turns down to
// flush dirty pages (docs/method.md 1.9, iq.sh vac_my), with their cleanup values.
var flushVars = []struct{ name, value string }{
	{"innodb_max_dirty_pages_pct_lwm", "1"},
	{"innodb_max_dirty_pages_pct", "1"},
	{"innodb_idle_flush_pct", "100"}, // MySQL 8.0.18+; MariaDB 10.11 lacks it
}

// Maintain is the postwrite cleanup of docs/method.md 1.9: analyze every table,
// wait for purge to work off the undo history (or stop shrinking), then lower
// InnoDB's dirty page limits so that the page cleaner flushes, wait until the
// dirty pages are down (or stop falling), and restore the old values. The
// target time beyond that is the caller's. On an existing server (dsn) whose
// user lacks PROCESS or SUPER, the purge wait or the flush is left out and
// returned as skipped.
func (db *DB) Maintain(ctx context.Context, tables []string) ([]string, error) {
	for _, t := range tables {
		if _, err := db.admin.Query(ctx, "ANALYZE TABLE "+quoteIdent(t)); err != nil {
			return nil, db.Wrap(fmt.Errorf("%s: analyze table %s: %w", db.engine, t, err))
		}
	}
	var skipped []string
	purged, err := db.waitPurged(ctx)
	if err != nil {
		return nil, err
	}
	if !purged {
		skipped = append(skipped, fmt.Sprintf("purge wait left out: user %s lacks the PROCESS privilege that SHOW ENGINE INNODB STATUS needs",
			db.user()))
	}
	old := map[string]string{}
	for _, v := range flushVars {
		cur, ok, err := db.admin.variable(ctx, v.name)
		if err != nil {
			return skipped, db.Wrap(fmt.Errorf("%s: read %s: %w", db.engine, v.name, err))
		}
		if !ok {
			continue // this server version lacks it
		}
		if _, err := db.admin.Exec(ctx, fmt.Sprintf("SET GLOBAL %s = %s", v.name, v.value)); err != nil {
			if isAccessDenied(err) && len(old) == 0 {
				// A user of an existing server (dsn) without SUPER cannot
				// make the page cleaner flush: the cleanup is then the
				// analyze and the purge wait, and the run says so.
				return append(skipped, fmt.Sprintf("dirty-page flush left out: user %s may not SET GLOBAL %s (SUPER or SYSTEM_VARIABLES_ADMIN)",
					db.user(), v.name)), nil
			}
			werr := db.Wrap(fmt.Errorf("%s: set %s: %w", db.engine, v.name, err))
			return skipped, errors.Join(werr, db.restoreFlushVars(ctx, old))
		}
		old[v.name] = cur
	}
	werr := db.waitFlushed(ctx)
	return skipped, errors.Join(werr, db.restoreFlushVars(ctx, old))
}

// user is the server user benchlab connects as.
func (db *DB) user() string { return db.cfg.User }

// restoreFlushVars sets the flush variables in old back to their values.
func (db *DB) restoreFlushVars(ctx context.Context, old map[string]string) error {
	var errs []error
	// Restore in reverse: pct before lwm, since lwm may not exceed pct.
	for i := len(flushVars) - 1; i >= 0; i-- {
		v, ok := old[flushVars[i].name]
		if !ok {
			continue
		}
		if _, err := db.admin.Exec(context.WithoutCancel(ctx), fmt.Sprintf("SET GLOBAL %s = %s", flushVars[i].name, v)); err != nil {
			errs = append(errs, db.Wrap(fmt.Errorf("%s: restore %s: %w", db.engine, flushVars[i].name, err)))
		}
	}
	return errors.Join(errs...)
}

// HistoryLength reads InnoDB's history list length (undo logs of committed
// changes that purge has yet to remove) from SHOW ENGINE INNODB STATUS.
func (db *DB) HistoryLength(ctx context.Context) (int64, error) {
	st, ok, err := db.admin.firstRow(ctx, "SHOW ENGINE INNODB STATUS")
	if err != nil {
		return 0, db.Wrap(fmt.Errorf("%s: innodb status: %w", db.engine, err))
	}
	m := historyRE.FindStringSubmatch(st)
	if !ok || m == nil {
		return 0, fmt.Errorf("%s: innodb status has no history list length", db.engine)
	}
	return strconv.ParseInt(m[1], 10, 64)
}

var historyRE = regexp.MustCompile(`History list length (\d+)`)

// purgedHistory is the history list length waitPurged accepts as worked off:
// purge keeps a few hundred entries of recent transactions at all times.
const purgedHistory = 1000

// errAccessDenied is MySQL's ER_SPECIFIC_ACCESS_DENIED_ERROR: the user
// lacks a privilege (PROCESS, for the InnoDB status).
const errAccessDenied = 1227

// isAccessDenied reports whether err is the server refusing for want of a
// privilege.
func isAccessDenied(err error) bool {
	var me *gomysql.MySQLError
	return errors.As(err, &me) && me.Number == errAccessDenied
}

// waitPurged polls the history list length each second until it is at most
// purgedHistory or has not fallen for three polls, within maxFlushWait. A
// user of an existing server (dsn) without the PROCESS privilege cannot read
// it: the wait is then skipped (false), as the articles' cleanup has none.
func (db *DB) waitPurged(ctx context.Context) (bool, error) {
	deadline := time.Now().Add(maxFlushWait)
	best, still := int64(-1), 0
	for time.Now().Before(deadline) {
		n, err := db.HistoryLength(ctx)
		if isAccessDenied(err) {
			return false, nil
		}
		if err != nil {
			return true, err
		}
		if n <= purgedHistory {
			return true, nil
		}
		if best >= 0 && n >= best {
			if still++; still >= 3 {
				return true, nil
			}
		} else {
			best, still = n, 0
		}
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			return true, ctx.Err()
		}
	}
	return true, nil
}

// maxFlushWait bounds waitFlushed on a server that keeps dirtying pages.
const maxFlushWait = 5 * time.Minute

// waitFlushed polls the dirty page count each second until it is at most 1%
// of the buffer pool or has not fallen for three polls.
func (db *DB) waitFlushed(ctx context.Context) error {
	deadline := time.Now().Add(maxFlushWait)
	best, still := int64(-1), 0
	for time.Now().Before(deadline) {
		dirty, err := db.admin.status(ctx, "Innodb_buffer_pool_pages_dirty")
		if err != nil {
			return db.Wrap(fmt.Errorf("%s: dirty pages: %w", db.engine, err))
		}
		total, err := db.admin.status(ctx, "Innodb_buffer_pool_pages_total")
		if err != nil {
			return db.Wrap(fmt.Errorf("%s: buffer pool pages: %w", db.engine, err))
		}
		if dirty*100 <= total {
			return nil
		}
		if best >= 0 && dirty >= best {
			if still++; still >= 3 {
				return nil
			}
		} else {
			best, still = dirty, 0
		}
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
