package engine

import (
	"fmt"
	"time"
)

// Activity is what runs and what waits at one moment: the one count of
// live consents and agents running that the LEDs, the API's summary, MQTT
// and /metrics all show (they used to count it each their own way, and
// /metrics counted expired requests the button no longer offers).
type Activity struct {
	// Consents are the live consent requests, oldest first: those the
	// button can still answer. Requests past their deadline are left out
	// (Expired counts them) until the engine sends them back to pending.
	Consents []ConsentRequest
	Expired  int
	// AgentsRunning is the agent runs in flight.
	AgentsRunning int
	// Quests are the quests read for the count, in Quests order.
	Quests []*Quest
}

// Activity reads the activity at now. It reads the consent queue and the
// quests (their Counts, kept in step by the engine): no node is scanned.
func (e *Engine) Activity(now time.Time) (Activity, error) {
	var a Activity
	all, err := e.Consents()
	if err != nil {
		return a, fmt.Errorf("reading consents: %w", err)
	}
	for _, r := range all {
		if e.ConsentExpired(r, now) {
			a.Expired++
			continue
		}
		a.Consents = append(a.Consents, r)
	}
	qs, err := e.Quests()
	if err != nil {
		return a, fmt.Errorf("reading quests: %w", err)
	}
	a.Quests = qs
	running := 0
	for _, q := range qs {
		running += q.Counts[Running]
	}
	// A run's slot frees just before its verdict commits: count the larger.
	a.AgentsRunning = max(running, e.InFlight())
	return a, nil
}
