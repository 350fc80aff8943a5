package mongodb

import (
	"strings"
	"testing"

	"benchlab/internal/engine"
)

func TestCheckTarget(t *testing.T) {
	for _, c := range []struct {
		t    engine.Target
		want string
	}{
		{engine.Target{}, "dsn:"},
		{engine.Target{DSN: "postgres://u:secret@127.0.0.1/db"}, "dsn:"},
		{engine.Target{DSN: "mongodb://"}, "dsn:"},
		{engine.Target{DSN: "mongodb://127.0.0.1:27017/?connectTimeoutMS=soon"}, "dsn:"},
		{engine.Target{DSN: "mongodb://127.0.0.1:27017/", Memory: "2GB"}, "dsn:"},
	} {
		err := Driver{}.CheckTarget(c.t)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%+v: %v; want an error starting %q", c.t, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("%v shows the password", err)
		}
	}
	if err := (Driver{}).CheckTarget(engine.Target{DSN: "mongodb://u:p@127.0.0.1:27017/bench?authSource=admin"}); err != nil {
		t.Errorf("a good dsn: %v", err)
	}
}
