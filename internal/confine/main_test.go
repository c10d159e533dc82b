//go:build linux

package confine

import (
	"os"
	"testing"

	"github.com/questbox/questbox/internal/buildtest"
)

// TestMain makes the test binary the launcher (confined commands started
// by the tests exec it with a launcher verb) and the agent the tests
// confine (agentMain, when agentEnv is set).
func TestMain(m *testing.M) {
	Main()
	if os.Getenv(agentEnv) != "" {
		agentMain()
	}
	code := m.Run()
	buildtest.Cleanup()
	os.Exit(code)
}
