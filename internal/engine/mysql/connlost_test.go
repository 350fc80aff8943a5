package mysql_test

import (
	"context"
	"testing"

	"benchlab/internal/engine"
	"benchlab/internal/server/servertest"
)

func TestLostConnection(t *testing.T) {
	servertest.LostConnection(t, "mariadb", func(ctx context.Context, admin engine.Conn) {
		ids, _ := admin.Values(ctx, "SELECT id FROM information_schema.processlist WHERE db = 'sbtest' AND id <> CONNECTION_ID()")
		for _, id := range ids {
			admin.Exec(ctx, "KILL CONNECTION "+id[0])
		}
	})
}
