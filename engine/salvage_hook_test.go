package engine

import (
	"time"

	"github.com/questbox/questbox/engine/ledger"
	"github.com/questbox/questbox/engine/store"
)

// salvage is Salvage with a test hook after each step (store.SalvageSteps).
func salvage(dir string, now time.Time, fail func(step string) error) (SalvageReport, error) {
	k, _, err := ledger.LoadOrCreateDeviceKey(dir)
	if err != nil {
		return SalvageReport{}, err
	}
	return store.SalvageSteps(dir, now, salvageRecords(k), fail)
}
