package tickmem

import (
	"bytes"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/store"
)

// The tick's memory of the active quests' records, decoded.
//
// A tick reads every active quest, and decoding a thousand records was
// the largest single share of its work (their strings, their counts'
// maps). The QuestCache keeps, per quest, the record as it was committed
// (its exact bytes) and the Quest it decodes to. A tick that finds the
// stored record byte for byte equal to the cached one takes a copy of the
// cached Quest instead of decoding (the engine's tickRound, activeQuests); any other
// record is decoded as before and remembered.
//
// It is kept in step with what commits only, as the PendingView is: a
// write transaction hands over the quests it saved once its commit
// succeeded (Engine.write), so a transaction rolled back never leaves a
// change here; and an entry is used only while the store holds exactly
// its bytes, so an entry that arrives late, or a record written by other
// means (a migration, salvage), is simply missed. What a hit yields is
// the Quest the record decodes to: a saved quest is kept as records.DecodeQuest
// would read its record back (cachedCopy; the engine's
// TestQuestCacheIsTheDecodedRecord checks that over a real workload).
//
// The cached Quests are never changed. A copy has counts and a queue of
// its own (every move changes them in place) and shares the rest: the
// strings, the slices, cut to their length (no code changes a quest's
// slice in place, and an append to one moves it), and the shared maps,
// whose clones were a third of what a busy tick's copies and the cache held.
//
// The shared maps: a Quest's RoleProviders, TeamAccept, StallSigs and
// StallCounts are never changed in place but by a transaction that
// decoded its quest itself (settleRoles, NewQuest and resume replace
// them; verdict.StallSignal changes a copy when the quest may be the cache's:
// ownStallMaps), so a copy of a quest shares them with the quest it
// copies: the cache's with the saved quest's, a tick's with the cache's.
//
// Current: comparing each record with its entry still read every active
// quest's record, a thousand of them all over the quests bucket, which a
// tick whose store map was released (engine/commit, Store.releaseMapped) faulted back in
// page by page. So the cache
// also knows when it is current: when every entry of an active quest is
// its record as stored as of commit at (bbolt's transaction id) of store
// db, a tick's next transaction (id at+1, nothing written yet) takes the
// entries without reading the records (Current, activeQuests). It is so
// once a tick has read every active quest's record (Validated), and it
// stays so while each commit after it is an engine write that the cache
// learned (LearnAt): commit ids are consecutive (a transaction rolled back
// takes none), so any commit it did not learn — a write of another kind,
// one whose commit failed after bbolt wrote it, one whose news has not
// arrived yet (out) — leaves a gap, and the tick reads the records again.
//
// The active set: while current, the cache also holds an entry for no
// other quest, so its entries are the active index's quests (ids, in the
// index's order) and a tick reads neither the records nor the index
// (CurrentSet), nor does the idle check (NoneActive). A validating tick
// makes the entries exactly the quests it walked; a learned write whose
// quest is no longer active removes its entry (and remembers, in gone,
// the revision that removed it, so that an older write's news arriving
// after it does not bring the entry back); news of a commit the
// validating tick read past (seen) is old and ignored.
type QuestCache struct {
	mu sync.Mutex // guards the fields below
	m  map[string]CachedQuest
	// ids are m's keys in byte order (the active index's).
	ids []string
	// gone is the revision of each quest whose entry a write that left
	// it not active removed, while news of other writes may still come
	// (out > 0).
	gone map[string]uint64
	// db and at are the store and the commit as of which every active
	// quest's entry is its record (nil: not known); seen is the commit
	// the last validating tick read the store as of.
	db       store.Instance
	at, seen uint64
	// out counts the engine's writes that ran in a transaction and have
	// not yet told the cache how it ended (Wrote, LearnAt, Settle).
	out int
}

// CachedRef is a cached quest of the active set (CurrentSet).
type CachedRef struct {
	ID    string
	Quest *domain.Quest
}

// set makes e quest id's entry, under c.mu.
func (c *QuestCache) set(id string, e CachedQuest) {
	if c.m == nil {
		c.m = map[string]CachedQuest{}
	}
	if _, ok := c.m[id]; !ok {
		i, _ := slices.BinarySearch(c.ids, id)
		c.ids = slices.Insert(c.ids, i, id)
	}
	c.m[id] = e
}

// drop removes quest id's entry, under c.mu.
func (c *QuestCache) drop(id string) {
	if _, ok := c.m[id]; !ok {
		return
	}
	delete(c.m, id)
	if i, ok := slices.BinarySearch(c.ids, id); ok {
		c.ids = slices.Delete(c.ids, i, i+1)
	}
}

// forget removes quest id's entry for a record of revision rev that is
// not active, under c.mu.
func (c *QuestCache) forget(id string, rev uint64) {
	c.drop(id)
	if c.out > 0 {
		if c.gone == nil {
			c.gone = map[string]uint64{}
		}
		c.gone[id] = max(c.gone[id], rev)
	}
}

// CachedQuest is a quest's record as committed and its decoded form,
// before the running entries are laid over it (the engine's overlayDispatch).
type CachedQuest struct {
	raw []byte
	q   *domain.Quest
}

// Get copies quest id into q when the cache holds exactly record raw,
// and reports whether it did; m, when not nil, are the maps of q's slot
// (TickCopyInto).
func (c *QuestCache) Get(id string, raw []byte, q *domain.Quest, m *QuestMaps) bool {
	c.mu.Lock()
	e, ok := c.m[id]
	c.mu.Unlock()
	if !ok || !bytes.Equal(e.raw, raw) {
		return false
	}
	TickCopyInto(q, e.q, m)
	return true
}

// GetCurrent copies quest id into q from its entry, without its record,
// and reports whether there is one; the cache must be current (Current).
func (c *QuestCache) GetCurrent(id string, q *domain.Quest, m *QuestMaps) bool {
	c.mu.Lock()
	e, ok := c.m[id]
	c.mu.Unlock()
	if ok {
		TickCopyInto(q, e.q, m)
	}
	return ok
}

// Put remembers that record raw decodes to q, which it copies, or, when
// q is not active, forgets the quest (its record is not one the tick may
// take). raw must stay unchanged (a copy of the record, not bbolt's
// memory), and be the quest's record as committed last: read in a write
// transaction that has written no quest yet, so that no commit the cache
// may still learn of is newer.
func (c *QuestCache) Put(id string, raw []byte, q *domain.Quest) {
	if q.Status != domain.QuestActive {
		c.mu.Lock()
		c.forget(id, q.Rev)
		c.mu.Unlock()
		return
	}
	kept := cachedCopy(q)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.set(id, CachedQuest{raw: raw, q: kept})
}

// Current reports whether the cache is current for tx, a write
// transaction that has written no quest yet: every active quest's entry
// is its record in tx.
func (c *QuestCache) Current(tx *store.Tx) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out == 0 && c.db == tx.Instance() && c.at+1 == uint64(tx.ID())
}

// CurrentSet appends to into the active quests, in the active index's
// order, and reports whether it could: the cache must be current for tx
// (Current), and the quests tx read already (touched) be in the set
// exactly when they are active, so that the set is tx's active index.
func (c *QuestCache) CurrentSet(tx *store.Tx, touched map[string]*domain.Quest, into []CachedRef) ([]CachedRef, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.out != 0 || c.db != tx.Instance() || c.at+1 != uint64(tx.ID()) {
		return into, false
	}
	for id, q := range touched {
		if _, ok := c.m[id]; ok != (q.Status == domain.QuestActive) {
			return into, false
		}
	}
	for _, id := range c.ids {
		into = append(into, CachedRef{ID: id, Quest: c.m[id].q})
	}
	return into, true
}

// NoneActive reports, for tx, a read transaction, whether the cache
// knows the active set as of tx's commit (known), and whether it is
// empty.
func (c *QuestCache) NoneActive(tx *store.Tx) (none, known bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.out != 0 || c.db != tx.Instance() || c.at != uint64(tx.ID()) {
		return false, false
	}
	return len(c.ids) == 0, true
}

// Validated records that every quest of the active index, walked in its
// order (qs), was checked against its record (or replaced by it) in tx,
// a write transaction that has written no quest yet, and is active: the
// cache is current as of the commit before it, and holds those quests
// only.
func (c *QuestCache) Validated(tx *store.Tx, qs []*domain.Quest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ids = c.ids[:0]
	for _, q := range qs {
		c.ids = append(c.ids, q.ID)
	}
	if len(c.m) != len(c.ids) {
		keep := make(map[string]CachedQuest, len(c.ids))
		for _, id := range c.ids {
			keep[id] = c.m[id]
		}
		c.m = keep
	}
	c.db, c.at = tx.Instance(), uint64(tx.ID())-1
	c.seen = c.at
}

// Wrote counts an engine write that ran in a transaction; LearnAt or
// Settle tells how it ended.
func (c *QuestCache) Wrote() {
	c.mu.Lock()
	c.out++
	c.mu.Unlock()
}

// Settle is what a write counted by Wrote that did not commit tells.
func (c *QuestCache) Settle() {
	c.mu.Lock()
	c.told()
	c.mu.Unlock()
}

// told counts a write's news in, under c.mu: once none is out, no news
// older than a removal can come.
func (c *QuestCache) told() {
	c.out--
	if c.out == 0 {
		clear(c.gone)
	}
}

// Trim drops the quests that are no longer active, once the cache holds
// more quests than are active.
func (c *QuestCache) Trim(active []*domain.Quest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	trimToActive(c.m, active, c.drop)
}

// QuestUpdate is what a write transaction hands to the cache after its
// commit: quest's record as written (rec, bytes of the transaction's
// block, which nothing changes once claimed) and the quest it encodes.
type QuestUpdate struct {
	Record []byte
	Quest  *domain.Quest
}

// LearnAt hands the saved quests of a write counted by Wrote, which
// committed as commit id of store db, to the cache: those still active,
// which the next tick reads, and those no longer active, whose entries
// go. The cache stays current when it was as of the commit before (or
// id: a commit of several writes).
func (c *QuestCache) LearnAt(us []QuestUpdate, db store.Instance, id uint64) {
	kept := make([]*domain.Quest, len(us))
	raws := make([][]byte, len(us))
	for i, u := range us {
		if u.Quest.Status == domain.QuestActive {
			kept[i], raws[i] = cachedCopy(u.Quest), bytes.Clone(u.Record)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// A commit the last validating tick read past is in its entries
	// already; its news is old.
	old := c.db == db && id <= c.seen
	for i, u := range us {
		// A write learned late (its commit's news came after a tick
		// read the record of a later one, or after a later write left
		// the quest not active) leaves the newer word.
		e, ok := c.m[u.Quest.ID]
		g, isGone := c.gone[u.Quest.ID]
		if old || ok && e.q.Rev > u.Quest.Rev || !ok && isGone && g >= u.Quest.Rev {
			continue
		}
		if kept[i] == nil {
			c.forget(u.Quest.ID, u.Quest.Rev)
			continue
		}
		c.set(u.Quest.ID, CachedQuest{raw: raws[i], q: kept[i]})
	}
	c.told()
	if c.db == db && c.at+1 == id {
		c.at = id
	}
}

// tickCopy sets q to a copy of cached for a transaction to change: its
// own counts and queue; the strings, the slices (cut to their length) and
// the shared maps (QuestCache) shared.
func tickCopy(q, cached *domain.Quest) { TickCopyInto(q, cached, nil) }

// TickCopyInto is tickCopy with the queue copied into m's map (a tick's
// quest slot's: Slabs.maps), emptied first, rather than into a new
// one; m keeps the map for the slot's next tick. Only q refers to it: the
// caches take copies of their own (cachedCopy). The counts are a value
// (StatusCounts), copied with the struct. The shared maps are cached's.
func TickCopyInto(q, cached *domain.Quest, m *QuestMaps) {
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

// cachedCopy is q as records.DecodeQuest reads its record back (records.QuestCodec): its
// times in UTC without a monotonic reading, the lists and maps that an
// empty one reads back as nil set so, its counts and queue its own (the
// shared maps q's).
func cachedCopy(q *domain.Quest) *domain.Quest {
	c := new(domain.Quest)
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

// What the cache holds, read for the engine's checks of it (its tests):
// none of these is on a tick's path.

// Record is the entry's record as committed; it must not be changed.
func (e CachedQuest) Record() []byte { return e.raw }

// Quest is what the entry's record decodes to; it must not be changed.
func (e CachedQuest) Quest() *domain.Quest { return e.q }

// Entry returns quest id's entry; ok is false when the cache holds none.
func (c *QuestCache) Entry(id string) (e CachedQuest, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok = c.m[id]
	return e, ok
}

// Snapshot returns a copy of the cache's entries by quest id and of its
// ids (in byte order), taken at once.
func (c *QuestCache) Snapshot() (entries map[string]CachedQuest, ids []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.m), slices.Clone(c.ids)
}

// CurrentAsOf reports whether the cache is current as of tx's commit, tx
// a read transaction: the next write transaction takes its entries for
// the active quests' records without reading them (Current).
func (c *QuestCache) CurrentAsOf(tx *store.Tx) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out == 0 && c.db == tx.Instance() && c.at == uint64(tx.ID())
}

// Drop removes quest id's entry, as if the cache had never learned it.
func (c *QuestCache) Drop(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drop(id)
}
