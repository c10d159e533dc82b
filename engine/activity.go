package engine

import (
	"fmt"
	"time"

	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
	"github.com/questbox/questbox/engine/tickmem"
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
	// NeedAttention counts the quests that need the owner
	// (Quest.NeedsAttention); TeamsBlocked those with a blocked Team
	// (Quest.HasBlockedTeam).
	NeedAttention, TeamsBlocked int
	// Quests are the quests read for the count, in Quests order; nil from
	// ActivityCounts.
	Quests []*Quest
}

// Activity reads the activity at now. It reads the consent queue and the
// quests (their Counts, kept in step by the engine): no node is scanned.
func (e *Engine) Activity(now time.Time) (Activity, error) {
	a, err := e.consentActivity(now)
	if err != nil {
		return a, err
	}
	qs, err := e.Quests()
	if err != nil {
		return a, fmt.Errorf("reading quests: %w", err)
	}
	a.Quests = qs
	running := 0
	for _, q := range qs {
		running += q.Counts.Get(Running)
		a.countQuest(q)
	}
	// A run's slot frees just before its verdict commits: count the larger.
	a.AgentsRunning = max(running, e.InFlight())
	return a, nil
}

// ActivityCounts is Activity without its Quests: the counts only, for a face
// that shows no quest (the LEDs, on every burst of events). It decodes one
// quest at a time into the same value instead of keeping all of them: a busy
// cycle of 1,000 quests woke the LEDs several times, each holding every quest
// decoded at once. A quest whose record the tickmem.QuestCache holds as stored is a
// copy of the cached one, its counts and queue in maps the walk reuses, as a
// tick's: decoding every quest on every burst was a fifth of what a busy
// cycle allocated (docs/design.md, "Memory on a small box").
func (e *Engine) ActivityCounts(now time.Time) (Activity, error) {
	a, err := e.consentActivity(now)
	if err != nil {
		return a, err
	}
	running := 0
	var q Quest
	var m tickmem.QuestMaps
	err = e.store.view(func(tx *store.Tx) error {
		// The quests' records are in the order of their ids, as the
		// running index's entries.
		w := runningWalk{c: tx.Running().Cursor()}
		return tx.Quests().ForEach(func(k, v []byte) error {
			if !e.decoded.Get(string(k), v, &q, &m) {
				q = Quest{}
				if err := records.DecodeQuest(v, &q); err != nil {
					return fmt.Errorf("decode quest %s: %w", k, err)
				}
			}
			w.overlay(&q)
			running += q.Counts.Get(Running)
			a.countQuest(&q)
			return nil
		})
	})
	if err != nil {
		return a, fmt.Errorf("reading quests: %w", err)
	}
	a.AgentsRunning = max(running, e.InFlight())
	return a, nil
}

// countQuest counts q in NeedAttention and TeamsBlocked.
func (a *Activity) countQuest(q *Quest) {
	if q.NeedsAttention() {
		a.NeedAttention++
	}
	if q.HasBlockedTeam() {
		a.TeamsBlocked++
	}
}

// consentActivity is the activity's consent part at now.
func (e *Engine) consentActivity(now time.Time) (Activity, error) {
	var a Activity
	all, err := e.ConsentQueue(now)
	if err != nil {
		return a, fmt.Errorf("reading consents: %w", err)
	}
	for _, r := range all {
		if r.Expired {
			a.Expired++
			continue
		}
		a.Consents = append(a.Consents, r)
	}
	return a, nil
}
