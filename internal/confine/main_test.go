package confine

import (
	"os"
	"testing"
)

// TestMain makes the test binary the launcher: confined commands started
// by the tests exec it with a launcher verb.
func TestMain(m *testing.M) {
	Main()
	os.Exit(m.Run())
}
