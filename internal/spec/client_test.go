package spec

import (
	"errors"
	"strings"
	"testing"
)

// TestClientField: a target's client is "driver" or "fast" on an engine
// that has both; another value, or a client on an engine with one, is a
// validation error naming target[i].client.
func TestClientField(t *testing.T) {
	src := func(engine, client string) string {
		return "name = \"x\"\n[[target]]\nname = \"a\"\nengine = \"" + engine + "\"\nclient = \"" + client + "\"\n"
	}
	for _, c := range []struct{ engine, client, says string }{
		{"postgres", "fast", ""},
		{"mariadb", "driver", ""},
		{"postgres", "pgx", `"pgx" is not a client; want "driver"`},
		{"mariadb", "Fast", `"Fast" is not a client`},
		{"sqlite", "driver", "engine sqlite has one client; a target chooses its client on"},
	} {
		s, err := Parse([]byte(src(c.engine, c.client)), "x.toml", "")
		if err == nil {
			err = s.Validate()
		}
		if c.says == "" {
			if err != nil {
				t.Errorf("%s client %q: %v", c.engine, c.client, err)
			} else if got := s.Targets[0].EngineTarget(nil).Client; string(got) != c.client {
				t.Errorf("%s client %q: the engine target's client is %q", c.engine, c.client, got)
			}
			continue
		}
		var e *Error
		if !errors.As(err, &e) || e.Field != "target[0].client" || !strings.Contains(e.Msg, c.says) || !IsInvalid(err) {
			t.Errorf("%s client %q: error %v, want target[0].client saying %q", c.engine, c.client, err, c.says)
		}
	}
}
