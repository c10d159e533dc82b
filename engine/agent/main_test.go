package agent

import (
	"os"
	"testing"

	"github.com/questbox/questbox/internal/confine"
)

// TestMain makes the test binary the launcher of the confined commands
// the tests start.
func TestMain(m *testing.M) {
	confine.Main()
	os.Exit(m.Run())
}
