package postgres_test

import (
	"context"
	"testing"

	"benchlab/internal/engine"
	"benchlab/internal/server/servertest"
)

func TestLostConnection(t *testing.T) {
	servertest.LostConnection(t, "postgres", func(ctx context.Context, admin engine.Conn) {
		admin.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE backend_type = 'client backend' "+
			"AND datname = 'sbtest' AND pid <> pg_backend_pid()")
	})
}
