package engine

import (
	"bytes"
	"maps"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
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
//
// Current: comparing each record with its entry still read every active
// quest's record, a thousand of them all over the quests bucket, which a
// tick whose store map was released (Store.releaseMapped) faulted back in
// page by page (bench/RESULTS.md, issue 23, eleventh pass). So the cache
// also knows when it is current: when every entry of an active quest is
// its record as stored as of commit at (bbolt's transaction id) of store
// db, a tick's next transaction (id at+1, nothing written yet) takes the
// entries without reading the records (current, activeQuests). It is so
// once a tick has read every active quest's record (validated), and it
// stays so while each commit after it is an engine write that the cache
// learned (learnAt): commit ids are consecutive (a transaction rolled back
// takes none), so any commit it did not learn — a write of another kind,
// one whose commit failed after bbolt wrote it, one whose news has not
// arrived yet (out) — leaves a gap, and the tick reads the records again.
type questCache struct {
	mu sync.Mutex // guards the fields below
	m  map[string]cachedQuest
	// db and at are the store and the commit as of which every active
	// quest's entry is its record (nil: not known).
	db *bolt.DB
	at uint64
	// out counts the engine's writes that ran in a transaction and have
	// not yet told the cache how it ended (wrote, learnAt, settle).
	out int
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

// getCurrent copies quest id into q from its entry, without its record,
// and reports whether there is one; the cache must be current (current).
func (c *questCache) getCurrent(id string, q *Quest, m *questMaps) bool {
	c.mu.Lock()
	e, ok := c.m[id]
	c.mu.Unlock()
	if ok {
		tickCopyInto(q, e.q, m)
	}
	return ok
}

// put remembers that record raw decodes to q, which it copies, or, when
// q is not active, forgets the quest (its record is not one the tick may
// take). raw must stay unchanged (a copy of the record, not bbolt's
// memory), and be the quest's record as committed last: read in a write
// transaction that has written no quest yet, so that no commit the cache
// may still learn of is newer.
func (c *questCache) put(id string, raw []byte, q *Quest) {
	if q.Status != QuestActive {
		c.mu.Lock()
		delete(c.m, id)
		c.mu.Unlock()
		return
	}
	kept := cachedCopy(q)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]cachedQuest{}
	}
	c.m[id] = cachedQuest{raw: raw, q: kept}
}

// current reports whether the cache is current for tx, a write
// transaction that has written no quest yet: every active quest's entry
// is its record in tx.
func (c *questCache) current(tx *bolt.Tx) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out == 0 && c.db == tx.DB() && c.at+1 == uint64(tx.ID())
}

// validated records that every active quest's entry was checked against
// its record (or replaced by it) in tx, a write transaction that has
// written no quest yet: the cache is current as of the commit before it.
func (c *questCache) validated(tx *bolt.Tx) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.db, c.at = tx.DB(), uint64(tx.ID())-1
}

// wrote counts an engine write that ran in a transaction; learnAt or
// settle tells how it ended.
func (c *questCache) wrote() {
	c.mu.Lock()
	c.out++
	c.mu.Unlock()
}

// settle is what a write counted by wrote that did not commit tells.
func (c *questCache) settle() {
	c.mu.Lock()
	c.out--
	c.mu.Unlock()
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

// learnAt hands the saved quests of a write counted by wrote, which
// committed as commit id of store db, to the cache: those still active,
// which the next tick reads. The cache stays current when it was as of
// the commit before (or id: a commit of several writes).
func (c *questCache) learnAt(us []questUpdate, db *bolt.DB, id uint64) {
	kept := make([]*Quest, len(us))
	raws := make([][]byte, len(us))
	for i, u := range us {
		if u.q.Status == QuestActive {
			kept[i], raws[i] = cachedCopy(u.q), bytes.Clone(u.rec)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]cachedQuest{}
	}
	for i, u := range us {
		// A write learned late (its commit's news came after a tick
		// read the record of a later one) leaves the newer entry.
		if e, ok := c.m[u.q.ID]; kept[i] != nil && (!ok || e.q.Rev <= u.q.Rev) {
			c.m[u.q.ID] = cachedQuest{raw: raws[i], q: kept[i]}
		}
	}
	c.out--
	if c.db == db && c.at+1 == id {
		c.at = id
	}
}

// tickCopy sets q to a copy of cached for a transaction to change: its
// own counts and queue; the strings, the slices (cut to their length) and
// the shared maps (questCache) shared.
func tickCopy(q, cached *Quest) { tickCopyInto(q, cached, nil) }

// tickCopyInto is tickCopy with the queue copied into m's map (a tick's
// quest slot's: tickSlabs.maps), emptied first, rather than into a new
// one; m keeps the map for the slot's next tick. Only q refers to it: the
// caches take copies of their own (cachedCopy). The counts are a value
// (StatusCounts), copied with the struct. The shared maps are cached's.
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
		q.Queued = maps.Clone(q.Queued)
	} else {
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
