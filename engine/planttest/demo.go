package planttest

import (
	"context"
	"fmt"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/gates/consent"
)

// DemoMaxTicks bounds Demo's ticks: the demo quest ends in about 30.
const DemoMaxTicks = 100

// Demo runs the demo quest (engine.DemoQuestSpec) on e to its end, as
// `run --demo` does with a person who holds the button for every consent
// request: it ticks, waits for each tick's runs, and approves each request
// on the (simulated) button. e must have the demo provider. It returns
// the quest's id once the quest is no longer active, or an error naming
// where it stood after DemoMaxTicks ticks.
func Demo(ctx context.Context, e *engine.Engine) (string, error) {
	q, err := e.NewQuest(e.DemoQuestSpec())
	if err != nil {
		return "", err
	}
	for range DemoMaxTicks {
		if _, err := e.Tick(ctx); err != nil {
			return q.ID, err
		}
		e.Wait()
		reqs, err := e.Consents()
		if err != nil {
			return q.ID, err
		}
		for _, r := range reqs {
			c, err := consent.New(consent.Button{}, r.ClaimHash)
			if err != nil {
				return q.ID, err
			}
			if err := e.Approve(r.Node, c); err != nil {
				return q.ID, err
			}
		}
		now, err := e.Quest(q.ID)
		if err != nil {
			return q.ID, err
		}
		if now.Status != engine.QuestActive {
			return q.ID, nil
		}
	}
	return q.ID, fmt.Errorf("the demo quest %s is still active after %d ticks", q.ID, DemoMaxTicks)
}
