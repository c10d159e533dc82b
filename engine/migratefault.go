//go:build migratefault

package engine

// A build for cmd/questbox's TestUpgradeKilledBetweenParts only: the
// 8 -> 9 upgrade moves one node a part, and its third part stops — two
// parts committed, the third's transaction open — says so on stderr, and
// waits to be killed. Release builds never have the tag.

import (
	"fmt"
	"os"
	"time"
)

// migrateFaultLine is what the build prints when it stops.
const migrateFaultLine = "migratefault: stopped in the upgrade's third part, two committed"

func init() {
	migrateBudget = 1
	parts := 0
	migratePartHook = func() {
		if parts++; parts < 3 {
			return
		}
		fmt.Fprintln(os.Stderr, migrateFaultLine)
		for {
			time.Sleep(time.Hour) // until killed
		}
	}
}
