package workload

import (
	"context"
	"strings"
	"testing"

	"benchlab/internal/engine"
)

// kvOnly is an engine without the SQL view.
type kvOnly struct{ engine.DB }

func TestConnectSQLNamesWhoNeededSQL(t *testing.T) {
	_, _, err := ConnectSQL(context.Background(), kvOnly{}, "tpcc prepare")
	if err == nil || !strings.HasPrefix(err.Error(), "tpcc prepare: ") || !strings.Contains(err.Error(), "does not speak SQL") {
		t.Fatalf("error %v, want one naming tpcc prepare and SQL", err)
	}
}
