package engine

import (
	"fmt"
	"time"

	"github.com/questbox/questbox/engine/activity"
	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
	"github.com/questbox/questbox/engine/tickmem"
)

// Activity is what runs and what waits at one moment (activity.Activity).
type Activity = activity.Activity

// Activity reads the activity at now (activity.Read). It reads the
// consent queue and the quests (their Counts, kept in step by the
// engine): no node is scanned.
func (e *Engine) Activity(now time.Time) (Activity, error) {
	return activity.Read(activitySource{e}, now)
}

// ActivityCounts is Activity without its Quests: the counts only, for a
// face that shows no quest (activity.Counts).
func (e *Engine) ActivityCounts(now time.Time) (Activity, error) {
	return activity.Counts(activitySource{e}, now)
}

// activitySource is the engine as the activity reads it (activity.Source).
type activitySource struct{ *Engine }

var _ activity.Source = activitySource{}

// EachQuest decodes one quest at a time into the same value. A quest
// whose record the tickmem.QuestCache holds as stored is a copy of the cached
// one, its counts and queue in maps the walk reuses, as a tick's:
// decoding every quest on every burst was a fifth of what a busy cycle
// allocated (docs/design.md, "Memory on a small box").
func (s activitySource) EachQuest(fn func(q *Quest)) error {
	var q Quest
	var m tickmem.QuestMaps
	return s.store.view(func(tx *store.Tx) error {
		// The quests' records are in the order of their ids, as the
		// running index's entries.
		w := runningWalk{c: tx.Running().Cursor()}
		return tx.Quests().ForEach(func(k, v []byte) error {
			if !s.decoded.Get(string(k), v, &q, &m) {
				q = Quest{}
				if err := records.DecodeQuest(v, &q); err != nil {
					return fmt.Errorf("decode quest %s: %w", k, err)
				}
			}
			w.overlay(&q)
			fn(&q)
			return nil
		})
	})
}
