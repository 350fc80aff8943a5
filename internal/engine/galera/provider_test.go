package galera

import (
	"strings"
	"testing"

	"benchlab/internal/engine"
)

// TestNotInstalled checks that a machine without Galera's provider is
// told which package to install, before anything starts.
func TestNotInstalled(t *testing.T) {
	old := provider
	provider = "/nonexistent/libgalera_smm.so"
	defer func() { provider = old }()
	err := Driver{}.CheckTarget(engine.Target{Name: "g", Engine: Name, Settings: map[string]string{SettingNodes: "3"}})
	if err == nil || !strings.Contains(err.Error(), "engine: Galera is not installed") ||
		!strings.Contains(err.Error(), "install the Debian package galera-4") {
		t.Fatalf("got %v; want an error naming the package galera-4", err)
	}
}
