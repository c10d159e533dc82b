package engine

import (
	"bytes"
	"maps"
	"sync"
	"time"
)

// The tick's memory of the active quests' records, decoded.
//
// A tick reads every active quest, and decoding a thousand records was
// the largest single share of its work (their strings, their counts'
// maps). The questCache keeps, per quest, the record as it was committed
// (its exact bytes) and the Quest it decodes to. A tick that finds the
// stored record byte for byte equal to the cached one takes a copy of the
// cached Quest instead of decoding (tickRound, activeQuests); any other
// record is decoded as before and remembered.
//
// It is kept in step with what commits only, as the pendingView is: a
// write transaction hands over the quests it saved once its commit
// succeeded (Engine.write), so a transaction rolled back never leaves a
// change here; and an entry is used only while the store holds exactly
// its bytes, so an entry that arrives late, or a record written by other
// means (a migration, salvage), is simply missed. What a hit yields is
// the Quest the record decodes to: a saved quest is kept as decodeQuest
// would read its record back (cachedCopy; TestQuestCacheIsTheDecodedRecord
// checks that over a real workload).
//
// The cached Quests are never changed. A copy has counts and a queue of
// its own (every move changes them in place) and shares the rest: the
// strings, the slices, cut to their length (no code changes a quest's
// slice in place, and an append to one moves it), and the shared maps,
// whose clones were a third of what a busy tick's copies and the cache
// held (bench/RESULTS.md, issue 23, ninth pass).
//
// The shared maps: a Quest's RoleProviders, TeamAccept, StallSigs and
// StallCounts are never changed in place but by a transaction that
// decoded its quest itself (settleRoles, NewQuest and resume replace
// them; stallSignal changes a copy when the quest may be the cache's:
// ownStallMaps), so a copy of a quest shares them with the quest it
// copies: the cache's with the saved quest's, a tick's with the cache's.
type questCache struct {
	mu sync.Mutex // guards m
	m  map[string]cachedQuest
}

// cachedQuest is a quest's record as committed and its decoded form,
// before the running entries are laid over it (overlayDispatch).
type cachedQuest struct {
	raw []byte
	q   *Quest
}

// get copies quest id into q when the cache holds exactly record raw,
// and reports whether it did; m, when not nil, are the maps of q's slot
// (tickCopyInto).
func (c *questCache) get(id string, raw []byte, q *Quest, m *questMaps) bool {
	c.mu.Lock()
	e, ok := c.m[id]
	c.mu.Unlock()
	if !ok || !bytes.Equal(e.raw, raw) {
		return false
	}
	tickCopyInto(q, e.q, m)
	return true
}

// put remembers that record raw decodes to q, which it copies, unless a
// newer revision of the quest is known already. raw must stay unchanged
// (a copy of the record, not bbolt's memory).
func (c *questCache) put(id string, raw []byte, q *Quest) {
	kept := cachedCopy(q)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]cachedQuest{}
	}
	if e, ok := c.m[id]; ok && e.q.Rev > q.Rev {
		return
	}
	c.m[id] = cachedQuest{raw: raw, q: kept}
}

// trim drops the quests that are no longer active, once the cache holds
// more quests than are active.
func (c *questCache) trim(active []*Quest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) <= len(active) {
		return
	}
	keep := make(map[string]bool, len(active))
	for _, q := range active {
		keep[q.ID] = true
	}
	for id := range c.m {
		if !keep[id] {
			delete(c.m, id)
		}
	}
}

// questUpdate is what a write transaction hands to the cache after its
// commit: quest's record as written (rec, bytes of the transaction's
// block, which nothing changes once claimed) and the quest it encodes.
type questUpdate struct {
	rec []byte
	q   *Quest
}

// learn hands the saved quests of a committed transaction to the cache:
// those still active, which the next tick reads.
func (c *questCache) learn(us []questUpdate) {
	for _, u := range us {
		if u.q.Status == QuestActive {
			c.put(u.q.ID, bytes.Clone(u.rec), u.q)
		}
	}
}

// tickCopy sets q to a copy of cached for a transaction to change: its
// own counts and queue; the strings, the slices (cut to their length) and
// the shared maps (questCache) shared.
func tickCopy(q, cached *Quest) { tickCopyInto(q, cached, nil) }

// tickCopyInto is tickCopy with the counts and the queue copied into m's
// maps (a tick's quest slot's: tickSlabs.maps), emptied first, rather
// than into new ones; m keeps the maps for the slot's next tick. Only q
// refers to them: the caches take copies of their own (cachedCopy). The
// shared maps are cached's.
func tickCopyInto(q, cached *Quest, m *questMaps) {
	*q = *cached
	q.Roles = clip(q.Roles)
	q.Checkpoints = clip(q.Checkpoints)
	q.Replays = clip(q.Replays)
	q.Egress = clip(q.Egress)
	q.CouncilReviewers = clip(q.CouncilReviewers)
	q.CouncilJudges = clip(q.CouncilJudges)
	q.PhaseGates = clip(q.PhaseGates)
	if m == nil {
		q.Counts = maps.Clone(q.Counts)
		q.Queued = maps.Clone(q.Queued)
	} else {
		q.Counts = refill(&m.counts, q.Counts)
		q.Queued = refill(&m.queued, q.Queued)
	}
}

// refill is a copy of from in *into, emptied first (made when nil), nil
// for nil as maps.Clone's.
func refill[K comparable, V any](into *map[K]V, from map[K]V) map[K]V {
	if from == nil {
		return nil
	}
	if *into == nil {
		*into = make(map[K]V, len(from))
	}
	clear(*into)
	maps.Copy(*into, from)
	return *into
}

// clip is s with its capacity cut to its length, so that an append
// moves it instead of writing into an array another quest shares.
func clip(s []string) []string { return s[:len(s):len(s)] }

// cachedCopy is q as decodeQuest reads its record back (questCodec): its
// times in UTC without a monotonic reading, the lists and maps that an
// empty one reads back as nil set so, its counts and queue its own (the
// shared maps q's).
func cachedCopy(q *Quest) *Quest {
	c := new(Quest)
	tickCopy(c, q)
	c.Created, c.Updated, c.WallMark = storedTime(c.Created), storedTime(c.Updated), storedTime(c.WallMark)
	c.Checkpoints = nilIfEmpty(c.Checkpoints)
	c.Replays = nilIfEmpty(c.Replays)
	c.Egress = nilIfEmpty(c.Egress)
	c.CouncilReviewers = nilIfEmpty(c.CouncilReviewers)
	c.CouncilJudges = nilIfEmpty(c.CouncilJudges)
	c.PhaseGates = nilIfEmpty(c.PhaseGates)
	c.Queued = nilIfNone(c.Queued)
	c.RoleProviders = nilIfNone(c.RoleProviders)
	c.TeamAccept = nilIfNone(c.TeamAccept)
	c.StallSigs = nilIfNone(c.StallSigs)
	return c
}

// storedTime is t as a record keeps it: seconds and nanoseconds, in UTC.
func storedTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return time.Unix(t.Unix(), int64(t.Nanosecond())).UTC()
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

func nilIfNone(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}
