package daemon

import (
	"os"
	"testing"

	"github.com/questbox/questbox/internal/confine"
)

// TestMain makes the test binary the launcher of the agents the tests
// confine, as main makes questbox.
func TestMain(m *testing.M) {
	confine.Main()
	os.Exit(m.Run())
}
