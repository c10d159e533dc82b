package activity

import (
	"fmt"
	"time"

	"github.com/questbox/questbox/engine/domain"
)

// Activity is what runs and what waits at one moment: the one count of
// live consents and agents running that the LEDs, the API's summary, MQTT
// and /metrics all show (they used to count it each their own way, and
// /metrics counted expired requests the button no longer offers).
type Activity struct {
	// Consents are the live consent requests, oldest first: those the
	// button can still answer. Requests past their deadline are left out
	// (Expired counts them) until the engine sends them back to pending.
	Consents []domain.ConsentRequest
	Expired  int
	// AgentsRunning is the agent runs in flight.
	AgentsRunning int
	// NeedAttention counts the quests that need the owner
	// (Quest.NeedsAttention); TeamsBlocked those with a blocked Team
	// (Quest.HasBlockedTeam).
	NeedAttention, TeamsBlocked int
	// Quests are the quests read for the count, in Quests order; nil from
	// Counts.
	Quests []*domain.Quest
}

// Source is what the activity reads of the engine. Its methods read
// committed state and are safe to call from any goroutine.
type Source interface {
	// ConsentQueue returns the consent requests at now, oldest first,
	// the expired ones marked.
	ConsentQueue(now time.Time) ([]domain.ConsentRequest, error)
	// Quests returns every quest.
	Quests() ([]*domain.Quest, error)
	// EachQuest calls fn with every quest in the order of their ids, one
	// at a time; q is valid only during the call.
	EachQuest(fn func(q *domain.Quest)) error
	// InFlight is the number of agent runs in flight.
	InFlight() int
}

// Read reads the activity at now. It reads the consent queue and the
// quests (their Counts, kept in step by the engine): no node is scanned.
func Read(s Source, now time.Time) (Activity, error) {
	a, err := consents(s, now)
	if err != nil {
		return a, err
	}
	qs, err := s.Quests()
	if err != nil {
		return a, fmt.Errorf("reading quests: %w", err)
	}
	a.Quests = qs
	running := 0
	for _, q := range qs {
		running += q.Counts.Get(domain.Running)
		a.countQuest(q)
	}
	// A run's slot frees just before its verdict commits: count the larger.
	a.AgentsRunning = max(running, s.InFlight())
	return a, nil
}

// Counts is Read without its Quests: the counts only, for a face that
// shows no quest (the LEDs, on every burst of events). It reads one quest
// at a time (Source.EachQuest) instead of keeping all of them: a busy
// cycle of 1,000 quests woke the LEDs several times, each holding every
// quest decoded at once.
func Counts(s Source, now time.Time) (Activity, error) {
	a, err := consents(s, now)
	if err != nil {
		return a, err
	}
	running := 0
	err = s.EachQuest(func(q *domain.Quest) {
		running += q.Counts.Get(domain.Running)
		a.countQuest(q)
	})
	if err != nil {
		return a, fmt.Errorf("reading quests: %w", err)
	}
	a.AgentsRunning = max(running, s.InFlight())
	return a, nil
}

// countQuest counts q in NeedAttention and TeamsBlocked.
func (a *Activity) countQuest(q *domain.Quest) {
	if q.NeedsAttention() {
		a.NeedAttention++
	}
	if q.HasBlockedTeam() {
		a.TeamsBlocked++
	}
}

// consents is the activity's consent part at now.
func consents(s Source, now time.Time) (Activity, error) {
	var a Activity
	all, err := s.ConsentQueue(now)
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
