package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/questbox/questbox/engine/budget"
	"github.com/questbox/questbox/engine/commit"
	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/followup"
	"github.com/questbox/questbox/engine/outbox"
	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
	"github.com/questbox/questbox/engine/team"
	"github.com/questbox/questbox/engine/tickmem"
)

// txn is one write transaction of the engine: it caches the quests it
// read, saves the ones it tracked at the end, and collects the events it
// emitted.
type txn struct {
	e      *Engine
	tx     *store.Tx
	now    time.Time
	quests map[string]*Quest // every quest read, by id
	saved  map[string]bool   // the quests to save at the end
	order  []string          // the quests to save, in order
	last   uint64            // highest event seq written
	// group is the group record of the events emitted and not yet
	// written (emit, flushEvents): grouped events, the first with seq
	// groupFirst, the newest groupLast.
	group                 []byte
	grouped               int
	groupFirst, groupLast uint64
	// sess is the serving session, nil when none runs; snow is now on
	// its clock (see engine/budget/wallclock.go).
	sess *budget.Session
	snow time.Time
	// Cursors kept for the transaction's point reads (see get): a read
	// through bbolt's Get allocates a cursor and its stack each time,
	// and the tick reads a quest, a node and the running index per
	// dispatch.
	curQuests, curNodes, curRunning *store.Cursor
	// walk, while activeQuests reads the active quests, lays the running
	// entries over them walking beside the active index (runningWalk).
	walk *runningWalk
	// block is where the transaction's keys and records are carved from
	// (see spare); a tick's starts as the engine's kept one (tickScratch).
	block carver
	// dispatchedWhy is the reason of the latest dispatch's event, for
	// provider dispatchedTo (newRun).
	dispatchedTo, dispatchedWhy string
	// dispatching is the run newRun is dispatching, for its running
	// entry (putRunning); it points at planned, so that a dispatch
	// allocates no Run of its own.
	dispatching *Run
	planned     Run
	plannedSeq  uint64 // planned's number: its id is runID(plannedSeq)
	// runs and events are the runs bucket and the outbox, kept for
	// newRun's sequence and emit's.
	runs, events *store.Bucket
	// quests and heads are where the tick's decoded quests and the
	// heads of the nodes it dispatches are carved from (allocQuest,
	// allocHead): a few allocations for a thousand dispatches instead
	// of one each.
	questSlab []Quest
	headSlab  []Node
	// runSlab is where the run lists of the heads a tick dispatches are
	// carved from (allocRuns).
	runSlab []string
	// slabs, a tick's (nil for any other transaction), is carved from
	// before the slabs above, which take what does not fit
	// (tickslabs.go): the tick's set's (tickRound.slabs).
	slabs *tickmem.Slabs
	// groups is where a tick's event group records are carved from
	// (tickScratch).
	groups carver
	// groupRoom is the room the transaction's event group record starts
	// with (emit): a tick that dispatches a thousand nodes emits a
	// thousand events, and a record grown from a few hundred bytes
	// would be copied a dozen times.
	groupRoom int
	// touched are the quests one of whose nodes changed (tickmem.PendingView);
	// updates what the view learns once the transaction commits.
	touched map[string]bool
	updates []viewUpdate
	// saves are the quests the transaction wrote, with their records,
	// for the tickmem.QuestCache once it commits.
	saves []tickmem.QuestUpdate
	// material is the owner's material of the quests whose prompts this
	// transaction built, for the members of a council (materialMemo).
	material materialMemo
	// laterRunning, while set, keeps the running entries putRunning
	// writes in later instead (a tick's: Engine.later), for
	// flushRunning to put in key order (see tickRound.quest), each with
	// laterRank, the place of its quest in the active index.
	laterRunning bool
	laterRank    int32
	later        *runningLater
	// scratch, a tick's, is where activeQuests keeps its list and its
	// sort (tickScratch); nil for any other transaction.
	scratch *tickScratch
	// activeRank is, for each quest activeQuests returned, in its order,
	// the quest's place in the active index.
	activeRank []int32
	// fromCache is set once a quest the transaction read is a copy of the
	// tickmem.QuestCache's (cachedQuestInto, peek): its shared maps are the
	// cache's, so a change to one changes a copy (ownStallMaps); ownStall
	// is the latest quest given stall maps of its own.
	fromCache bool
	ownStall  *Quest
	// opt are the engine's options in force when the transaction began
	// (reload.go): one set for the whole transaction.
	opt *Options
	// follows are the follow-up work this transaction enabled
	// (followUp), for the engine once it committed (chain.go).
	follows []followup.Follow
}

// Blocks a transaction carves its keys and records from start at
// firstBlock and double up to blockSize: a write of one result needs a
// kilobyte or two (and a group commit runs hundreds of them, each with a
// txn of its own), a tick dispatching a thousand nodes about 400 KiB.
const (
	firstBlock = 512
	blockSize  = 32 << 10
)

// Spare returns an empty slice at the free end of the transaction's
// block, with at least hint bytes of room, for an encoder to append a
// record to; claim then reserves what the record took. bbolt keeps the
// key and the value given to Put until the commit, so each needs bytes of
// its own: carved from blocks, a thousand records cost a few dozen
// allocations instead of a thousand. A record that outgrows the room
// moves to bytes of its own (append reallocates), which claim sees.
func (t *txn) Spare(hint int) []byte { return t.block.spare(hint) }

// Claim reserves b, an encoder's result on a slice from spare, in the
// block and returns it with its capacity cut to its length, so that no
// later append can reach the next record. A b that append moved out of
// the block (its capacity grew) is its own already.
func (t *txn) Claim(b []byte) []byte { return t.block.claim(b) }

// carver is a block records are carved from (spare, then claim), and a
// new one, past its end, when it is full.
type carver struct {
	b []byte
	// made counts the bytes of the blocks made once the first was full:
	// what a tick's kept block (tickScratch) lacked.
	made int
}

func (c *carver) spare(hint int) []byte {
	if cap(c.b)-len(c.b) < hint {
		size := max(min(max(2*cap(c.b), firstBlock), blockSize), hint)
		c.b = make([]byte, 0, size)
		c.made += size
	}
	return c.b[len(c.b):]
}

func (c *carver) claim(b []byte) []byte {
	if rest := c.b[len(c.b):]; cap(b) == cap(rest) {
		c.b = c.b[:len(c.b)+len(b)]
	}
	return b[:len(b):len(b)]
}

// Key8 is a big-endian uint64 key, carved from the transaction's block.
func (t *txn) Key8(v uint64) []byte {
	return t.Claim(binary.BigEndian.AppendUint64(t.Spare(8), v))
}

// slabLen is how many quests or node heads a slab holds at most
// (allocQuest, allocHead); a transaction's first slabs are smaller (4,
// then twice the previous), so that a tick of a few quests or a write of
// one quest carves no more than it needs. A slab lives as long as any of
// its values: a node head kept by a run in flight keeps its slab's
// others (up to 16 KiB) while it runs.
const slabLen = 32

// allocQuest returns a zero Quest carved from the tick's slabs, else from
// the transaction's slab.
func (t *txn) allocQuest() *Quest {
	if t.slabs != nil {
		if q := t.slabs.Quest(); q != nil {
			return q
		}
	}
	if len(t.questSlab) == cap(t.questSlab) {
		t.questSlab = make([]Quest, 0, min(max(2*cap(t.questSlab), 4), slabLen))
	}
	t.questSlab = t.questSlab[:len(t.questSlab)+1]
	return &t.questSlab[len(t.questSlab)-1]
}

// AllocHead returns a zero Node carved from the tick's slabs, else from
// the transaction's slab.
func (t *txn) AllocHead() *Node {
	if t.slabs != nil {
		if n := t.slabs.Head(); n != nil {
			return n
		}
	}
	if len(t.headSlab) == cap(t.headSlab) {
		t.headSlab = make([]Node, 0, min(max(2*cap(t.headSlab), 4), slabLen))
	}
	t.headSlab = t.headSlab[:len(t.headSlab)+1]
	return &t.headSlab[len(t.headSlab)-1]
}

// allocRuns returns an empty run list with room for one run, carved from
// the tick's slabs, else from the transaction's slab (of slabLen lists); a
// list that grows past one moves to its own array (append).
func (t *txn) allocRuns() []string {
	if t.slabs != nil {
		if l := t.slabs.RunList(); l != nil {
			return l
		}
	}
	if len(t.runSlab) == cap(t.runSlab) {
		t.runSlab = make([]string, 0, min(max(2*cap(t.runSlab), 4), 8*slabLen))
	}
	t.runSlab = t.runSlab[:len(t.runSlab)+1]
	return t.runSlab[len(t.runSlab)-1 : len(t.runSlab)-1 : len(t.runSlab)]
}

// bytesOf is s as bytes carved from the transaction's block, for a key
// or a value that must stay valid until the commit.
func (t *txn) bytesOf(s string) []byte {
	return t.Claim(append(t.Spare(len(s)), s...))
}

// get is b.Get through the cursor *c, made on first use and kept for the
// transaction. A Seek starts again from the bucket's root, so the cursor
// stays valid across the transaction's writes; like Get, it returns nil
// for a missing key or a nested bucket.
func get(c **store.Cursor, b *store.Bucket, key []byte) []byte {
	if *c == nil {
		*c = b.Cursor()
	}
	k, v := (*c).Seek(key)
	if !bytes.Equal(k, key) {
		return nil
	}
	return v
}

// errUnchanged ends a transaction that wrote nothing without a commit.
var errUnchanged = commit.ErrUnchanged

// update runs fn in one write transaction of its own (one commit, one
// fsync pair) and wakes event subscribers after it committed. fn returns
// t.unchanged() to end a transaction that wrote nothing without committing
// it: no page is written and no fsync is spent.
func (e *Engine) update(fn func(t *txn) error) error {
	return e.write(fn, false, nil)
}

// batch is update through the group commit (engine/commit): fn shares a
// transaction with the writes that arrive at the same time, and batch
// returns once that transaction is committed. fn may run more than once,
// so it must reset whatever it sets outside the transaction at its start;
// it returns t.unchanged() only when it wrote nothing. tk is the write's
// announcement (Store.expect), or nil.
func (e *Engine) batch(fn func(t *txn) error, tk *ticket) error {
	return e.write(fn, true, tk)
}

func (e *Engine) write(fn func(t *txn) error, grouped bool, tk *ticket) error {
	if err := e.writable(); err != nil {
		tk.Settle()
		return err
	}
	w := &engineWrite{e: e, fn: fn}
	var err error
	if grouped {
		err = e.store.batch(w.run, tk)
	} else {
		err = e.store.update(w.run)
	}
	return w.committed(err)
}

// batchAsync is batch without waiting: it queues fn in the group commit
// and returns at once; then is called with what batch would have
// returned, once fn's transaction committed or failed, on the goroutine
// that committed it (Store.batchAsync): then must not block nor write.
func (e *Engine) batchAsync(fn func(t *txn) error, tk *ticket, then func(error)) {
	if err := e.writable(); err != nil {
		tk.Settle()
		then(err)
		return
	}
	w := &engineWrite{e: e, fn: fn, async: true}
	e.store.batchAsync(w.run, tk, func(err error) { then(w.committed(err)) })
}

// raiseTo sets v to seq unless it holds a higher one already.
func raiseTo(v *atomic.Uint64, seq uint64) {
	for u := v.Load(); u < seq && !v.CompareAndSwap(u, seq); u = v.Load() {
	}
}

// publishQueued wakes the event subscribers once for the writes queued as
// data that a group commit just committed (Store.afterEachCommit): a
// batch of hundreds of results wakes each subscriber once, not once per
// result, each wake making it read the outbox anew while the rest of the
// batch is handed out.
func (e *Engine) publishQueued() {
	if seq := e.unpublished.Swap(0); seq > 0 {
		e.hub.Publish(seq)
	}
}

// engineWrite is one write of the engine's through the store: fn run in
// a txn, its quests saved, and what it changed published once committed.
type engineWrite struct {
	e  *Engine
	fn func(t *txn) error
	// async: queued as data (batchAsync); its events are published with
	// its batch's (publishQueued).
	async bool
	// Set by run, for committed.
	last    uint64
	updates []viewUpdate
	saved   []tickmem.QuestUpdate
	follows []followup.Follow
	// pruned is the tick commit whose retention prune the write's
	// transaction ran (pruneLater); 0: none.
	pruned uint64
	// counted: a run got to its end, and the tickmem.QuestCache counts the write
	// until committed tells it how it ended (tickmem.QuestCache.Wrote); db and id
	// are the store and the transaction id of the latest such run.
	counted bool
	db      store.Instance
	id      uint64
}

// run is the write's transaction function; it may run more than once
// (group commit), each run starting afresh.
func (w *engineWrite) run(tx *store.Tx) error {
	e := w.e
	w.last, w.updates, w.saved, w.pruned, w.follows = 0, nil, nil, 0, nil
	now := e.clock.Now()
	// In a group commit, the write's events join the batch's group and
	// its time is the batch's (sharedGroup).
	shared := e.store.shared.in(tx)
	if shared != nil {
		if shared.now.IsZero() {
			shared.now = now
		}
		now = shared.now
	}
	t := &txn{e: e, tx: tx, now: now.UTC(), quests: map[string]*Quest{}, saved: map[string]bool{}, sess: e.sess.Load(), opt: e.conf()}
	if t.sess != nil {
		t.snow = t.sess.At(now)
	}
	if shared != nil {
		t.group, t.grouped, t.groupFirst, t.groupLast = shared.group, shared.grouped, shared.groupFirst, shared.groupLast
	}
	if err := w.fn(t); err != nil {
		return err
	}
	if err := w.pruneLater(t, shared); err != nil {
		return err
	}
	if shared == nil || len(t.group) >= sharedGroupBytes {
		if err := t.flushEvents(); err != nil {
			return err
		}
	}
	if shared != nil {
		shared.group, shared.grouped, shared.groupFirst, shared.groupLast = t.group, t.grouped, t.groupFirst, t.groupLast
	}
	// The only place the engine writes a quest record: what it saves here
	// the tickmem.QuestCache learns once the commit succeeded (committed), and a
	// tick takes its entries for the records as long as every commit was
	// such a write (tickmem.QuestCache, Current). A quest record written any
	// other way must be written outside the engine's transactions.
	for _, id := range t.order {
		q := t.quests[id]
		t.foldWall(q)
		q.Rev++
		rec := t.Claim(records.AppendQuest(t.Spare(256), q))
		if err := tx.Quests().Put(t.bytesOf(q.ID), rec); err != nil {
			return err
		}
		t.viewOf(q)
		t.saves = append(t.saves, tickmem.QuestUpdate{Record: rec, Quest: q})
	}
	w.last, w.updates, w.saved, w.follows = t.last, t.updates, t.saves, t.follows
	w.db, w.id = tx.Instance(), uint64(tx.ID())
	if !w.counted {
		w.counted = true
		e.decoded.Wrote()
	}
	return nil
}

// pruneLater runs, in the first write of a group commit's transaction
// that changes something after a tick that started runs, the retention
// prune the tick left (tickRound.run): the outbox's oldest records, which
// a tick on a released store map faulted back in page by page (a quarter of
// its time), are deleted with
// the commit of the runs' results instead, which comes anyway: no commit
// is added. The outbox keeps its retention as before; between the tick
// and that commit it also holds the tick's events. A prune that fails
// fails the write's transaction: the write then runs alone, without it
// (commitGroup), and the next tick that starts runs asks again.
func (w *engineWrite) pruneLater(t *txn, shared *sharedGroup) error {
	due := w.e.pruneDue.Load()
	if shared == nil || shared.pruned || due == 0 {
		return nil
	}
	shared.pruned = true
	if _, err := outbox.PruneRetention(t.tx, w.e.opt.EventRetention); err != nil {
		w.e.pruneDue.CompareAndSwap(due, 0)
		w.e.log.Warn("prune events after a tick", "err", err)
		return err
	}
	w.pruned = due
	return nil
}

// committed publishes what the write changed once its transaction
// returned err, and returns the write's error (errUnchanged is none).
func (w *engineWrite) committed(err error) error {
	if w.counted && err != nil {
		w.e.decoded.Settle()
	}
	if errors.Is(err, errUnchanged) {
		return nil
	}
	if err == nil {
		// Only what committed reaches the view (tickmem.PendingView) and the
		// tick's decoded quests (tickmem.QuestCache).
		for _, u := range w.updates {
			w.e.view.Put(u.quest, u.rev, u.head)
			if u.sitting != nil {
				w.e.sittings.PutAt(u.quest, u.sitting)
			}
		}
		if w.counted {
			w.e.decoded.LearnAt(w.saved, w.db, w.id)
		}
		if w.pruned != 0 {
			w.e.pruneDue.CompareAndSwap(w.pruned, 0)
		}
		w.e.chain.Note(w.follows)
	}
	if err == nil && w.last > 0 {
		if !w.async {
			w.e.hub.Publish(w.last)
		} else {
			raiseTo(&w.e.unpublished, w.last)
		}
	}
	w.updates, w.follows = nil, nil
	return err
}

// unchanged returns errUnchanged when the transaction has saved no quest
// and emitted no event, nil otherwise. Every change the engine makes
// touches a quest or emits an event, except those a caller counts itself.
func (t *txn) unchanged() error {
	if len(t.order) == 0 && t.last == 0 {
		return errUnchanged
	}
	return nil
}

// writable returns ErrReadOnly from a read-only engine.
func (e *Engine) writable() error {
	if e.readOnly {
		return fmt.Errorf("questbox store %s is open read-only here: a writing command opens it for writing: %w", e.store.Path(), ErrReadOnly)
	}
	return nil
}

// Quest reads a quest and tracks it: it is saved at the end.
func (t *txn) Quest(id string) (*Quest, error) {
	q, err := t.Peek(id)
	if err != nil {
		return nil, err
	}
	t.Track(q)
	return q, nil
}

// Peek reads a quest without tracking it: it is saved only if something
// tracks it later. The tick peeks, so that a quest it does not change is
// not written.
//
// A quest whose record the tickmem.QuestCache holds as it is stored is a copy of
// the cached one, as in the tick (cachedQuestInto), but the cache learns
// nothing from a miss here: a group commit's record read here may be an
// earlier write's of the same batch, not committed yet. A result's write
// reads its quest so, which the busy cycle's group commits held decoded
// by the hundred: a copy shares
// the cached quest's strings, slices and shared maps.
func (t *txn) Peek(id string) (*Quest, error) {
	if q, ok := t.quests[id]; ok {
		return q, nil
	}
	raw := get(&t.curQuests, t.tx.Quests(), []byte(id))
	q := new(Quest)
	if raw != nil && t.e.decoded.Get(id, raw, q, nil) {
		t.fromCache = true
		return t.adoptQuest(id, q), nil
	}
	return t.decodeQuestInto(id, raw, q)
}

// decodeQuestInto decodes quest id's record raw (nil: there is none)
// into q (nil: a new Quest) and keeps it as the transaction's copy.
func (t *txn) decodeQuestInto(id string, raw []byte, q *Quest) (*Quest, error) {
	if q == nil {
		q = new(Quest)
	}
	if err := decodeStoredQuest(id, raw, q); err != nil {
		return nil, err
	}
	return t.adoptQuest(id, q), nil
}

// cachedQuestInto is decodeQuestInto through the tick's decoded quests
// (tickmem.QuestCache): a copy of the cached Quest when the cache holds exactly
// record raw, else the record decoded, and remembered (or, not active,
// forgotten) when remember is set (raw is the record as last committed:
// tickmem.QuestCache.Put).
func (t *txn) cachedQuestInto(id string, raw []byte, q *Quest, remember bool) (*Quest, error) {
	if raw != nil && t.e.decoded.Get(id, raw, q, t.slabs.MapsOf(q)) {
		t.fromCache = true
		return t.adoptQuest(id, q), nil
	}
	if err := decodeStoredQuest(id, raw, q); err != nil {
		return nil, err
	}
	if remember {
		t.e.decoded.Put(id, bytes.Clone(raw), q)
	}
	return t.adoptQuest(id, q), nil
}

// decodeStoredQuest decodes quest id's record raw (nil: there is none)
// into q.
func decodeStoredQuest(id string, raw []byte, q *Quest) error {
	if raw == nil {
		return fmt.Errorf("quest %s: %w", id, ErrNotFound)
	}
	if err := records.DecodeQuest(raw, q); err != nil {
		return fmt.Errorf("decode quest %s: %w", id, err)
	}
	return nil
}

// adoptQuest makes q, quest id's record as stored, the transaction's
// copy, with the running entries laid over it (overlayDispatch).
func (t *txn) adoptQuest(id string, q *Quest) *Quest {
	q.Counts.MarkMade()
	if t.walk != nil {
		t.walk.overlay(q)
	} else {
		if t.curRunning == nil {
			t.curRunning = t.tx.Running().Cursor()
		}
		overlayDispatch(t.curRunning, q)
	}
	t.quests[id] = q
	return q
}

// Track registers a changed quest to be saved at commit.
func (t *txn) Track(q *Quest) {
	t.keep(q)
	q.Updated = t.now
}

// keep registers a quest to be saved at commit without marking it updated:
// only its bookkeeping (the wall clock) changed.
func (t *txn) keep(q *Quest) {
	if !t.saved[q.ID] {
		t.saved[q.ID] = true
		t.order = append(t.order, q.ID)
	}
	t.quests[q.ID] = q
}

func (t *txn) Node(id string) (*Node, error) {
	return records.ReadNode(t.tx, id)
}

// NodeRecord is node id's stored record, read through the transaction's
// node cursor (valid until the transaction writes the nodes bucket).
func (t *txn) NodeRecord(id string) ([]byte, error) {
	key, err := records.NodeKey(id)
	if err != nil {
		return nil, err
	}
	raw := get(&t.curNodes, t.tx.Nodes(), key)
	if raw == nil {
		return nil, fmt.Errorf("node %s: %w", id, ErrNotFound)
	}
	return raw, nil
}

// NodeHead reads node id for its dispatch (pick): a Node with the fields
// of records.NodeHead only, marked so that saving it is a bug. A dispatch moves it
// to running, which does not write its record (records.OverlayRunning); the run's
// end reads it whole.
func (t *txn) NodeHead(id string) (*Node, error) {
	raw, err := t.NodeRecord(id)
	if err != nil {
		return nil, err
	}
	return t.HeadOf(id, raw, nil)
}

// NextNodeHead is records.NodeHead for id when its record is the one right after
// the record the node cursor read last, with a step of the cursor instead
// of a search from the root; ok is false when it is not (read it with
// records.NodeHead). The caller has read the previous record with records.NodeHead or
// nextNodeHead, with no write of the nodes bucket since: a write may move
// what a bbolt cursor steps to.
func (t *txn) NextNodeHead(id string, like *records.NodeHead) (n *Node, ok bool, err error) {
	if t.curNodes == nil {
		return nil, false, nil
	}
	seq, ok := records.NodeSeq(id)
	if !ok {
		return nil, false, nil
	}
	k, raw := t.curNodes.Next()
	if len(k) != 8 || binary.BigEndian.Uint64(k) != seq || raw == nil {
		return nil, false, nil
	}
	n, err = t.HeadOf(id, raw, like)
	return n, err == nil, err
}

// HeadOf is records.NodeHead of node id's record raw; like is what the caller
// expects it to hold, or nil (records.ScanNodeHead).
func (t *txn) HeadOf(id string, raw []byte, like *records.NodeHead) (*Node, error) {
	var h records.NodeHead
	if !records.ScanNodeHead(raw, &h, like) {
		h = records.NodeHead{}
		if err := json.Unmarshal(raw, &h); err != nil {
			return nil, fmt.Errorf("decode node %s: %w", id, err)
		}
	}
	// Carved from the transaction's slab, as the tickmem.PendingView's heads are:
	// a tick reads hundreds (a council's members).
	n := t.AllocHead()
	*n = Node{ID: h.ID, Quest: h.Quest, Parent: h.Parent, Role: h.Role, Hypothesis: h.Hypothesis, Status: h.Status,
		Depth: h.Depth, Order: h.Order, Tries: h.Tries, Feedback: h.Feedback, Provider: h.Provider, HeadOnly: true, HeadRuns: int(h.RunCount),
		Team: h.Team, Stage: h.Stage, RevisionCount: h.RevisionCount, MaxRevisions: h.MaxRevisions}
	if n.Status == Pending {
		key := t.Claim(store.AppendRunningKey(t.Spare(len(n.Quest)+1+len(n.ID)), n.Quest, n.ID))
		if run := get(&t.curRunning, t.tx.Running(), key); run != nil {
			records.SetRunning(n, run)
		}
	}
	return n, nil
}

func (t *txn) SaveNode(n *Node) error {
	if n.HeadOnly {
		panic("BUG: saving node " + n.ID + ", which was read for its dispatch only")
	}
	// A node changed: its quest is saved too, with a new revision, so
	// that the tick's memory of its first pending node is not used
	// (tickmem.PendingView).
	t.touch(n.Quest)
	if !t.saved[n.Quest] {
		if q, err := t.Peek(n.Quest); err == nil {
			t.keep(q)
		}
	}
	n.Updated = t.now
	if err := t.indexEvidence(n); err != nil {
		return err
	}
	n.ChainForm()
	if err := records.SpillAttempts(t.tx, t, n); err != nil {
		return err
	}
	return records.PutNode(appendOnly(t.tx.Nodes()), n)
}

// Move is the only place a node's status changes. It enforces the ratchet,
// keeps the indexes and the quest's counts in step, and emits the event.
func (t *txn) Move(q *Quest, n *Node, to Status, why string) error {
	from := n.Status
	if from.Terminal() {
		return fmt.Errorf("node %s is %s: %w", n.ID, from, ErrLocked)
	}
	if !from.CanMove(to) || !team.MoveOK(n, to) {
		return fmt.Errorf("node %s: %s -> %s: %w", n.ID, from, to, ErrIllegalMove)
	}
	key := t.Key8(n.Order)
	if err := t.leaveIndexes(q, n, from, to, key); err != nil {
		return err
	}
	if err := t.enterIndexes(q, n, from, to, key); err != nil {
		return err
	}
	trackQueued(q, n, to)
	if to == Pending && n.Claim != nil && n.Claim.Replay && !slices.Contains(q.Replays, n.ID) {
		// A replay that was interrupted (shutdown, crash, a broken
		// catalog) keeps its answer: queue it to be judged again.
		q.Replays = append(q.Replays, n.ID)
	}
	q.Counts.Dec(from)
	q.Counts.Inc(to)
	n.Status = to
	if to != Running {
		// A dispatch leaves the node's record and the quest's as they
		// are: its running entry says the node runs (records.OverlayRunning) and
		// what the quest counts of it (overlayDispatch).
		t.touch(q.ID)
		t.Track(q)
		if err := t.SaveNode(n); err != nil {
			return err
		}
	}
	return t.Emit(domain.NodeEvent(q, n, from, to, why))
}

// leaveIndexes takes node n of quest q (key: its order) out of the
// indexes of status from, on its way to status to. A running node stays in
// its pending index (its record says pending, schema 6): a dispatch leaves
// that index as it is, and a node that stops running leaves it unless it
// goes back to pending.
func (t *txn) leaveIndexes(q *Quest, n *Node, from, to Status, key []byte) error {
	idx := records.IndexFor(from)
	if from == Running {
		idx = bPending
	}
	if (from == Pending && to == Running) || (from == Running && to == Pending) {
		idx = nil
	}
	if idx != nil {
		b, err := sub(t.tx, idx, q.ID)
		if err != nil {
			return err
		}
		if err := b.Delete(key); err != nil {
			return err
		}
	}
	switch from {
	case Running:
		if err := t.leaveRunning(q, n); err != nil {
			return err
		}
		if q.Running == n.ID {
			q.Running = ""
		}
	case AwaitingConsent:
		return t.tx.Consent().Delete([]byte(n.ID))
	}
	return nil
}

// enterIndexes puts node n of quest q, coming from status from, into the
// indexes of status to; a terminal status gives it the quest's next lock
// sequence.
func (t *txn) enterIndexes(q *Quest, n *Node, from, to Status, key []byte) error {
	if idx := records.IndexFor(to); idx != nil && !(from == Running && to == Pending) {
		b, err := sub(t.tx, idx, q.ID)
		if err != nil {
			return err
		}
		if err := b.Put(key, []byte(n.ID)); err != nil {
			return err
		}
	}
	switch to {
	case Running:
		if err := t.putRunning(q, n, t.plannedRun(q, n)); err != nil {
			return err
		}
	case AwaitingConsent:
		if err := t.tx.Consent().Put([]byte(n.ID), []byte(q.ID)); err != nil {
			return err
		}
	}
	if !to.Terminal() {
		return nil
	}
	b, err := sub(t.tx, bLocked, q.ID)
	if err != nil {
		return err
	}
	seq, err := b.NextSequence()
	if err != nil {
		return err
	}
	n.LockSeq = seq
	return b.Put(u64(seq), []byte(n.ID))
}

// normHypothesis is the key under which duplicate hypotheses collide:
// case-folded, whitespace collapsed.
func normHypothesis(h string) string {
	return strings.Join(strings.Fields(strings.ToLower(h)), " ")
}

func hypKey(h string) []byte {
	sum := sha256.Sum256([]byte(normHypothesis(h)))
	return sum[:]
}

// NewNode creates a node in status st (Pending or Proposed; an egress
// consent AwaitingConsent) unless the quest already has that hypothesis;
// then it returns the existing id and dup=true.
func (t *txn) NewNode(q *Quest, parent *Node, role, hyp string, st Status, rel string) (n *Node, dup bool, err error) {
	return t.NewNodeWith(q, parent, role, hyp, st, rel, nil)
}

// NewNodeWith is newNode, with init (when not nil) setting the new node's
// own fields (a stage's Team and stage, an owner's phase) before it is
// saved and its created event, which carries them, is emitted.
func (t *txn) NewNodeWith(q *Quest, parent *Node, role, hyp string, st Status, rel string, init func(*Node)) (n *Node, dup bool, err error) {
	hyp = strings.TrimSpace(hyp)
	if hyp == "" {
		return nil, false, fmt.Errorf("empty hypothesis: %w", ErrInvalid)
	}
	hb, err := sub(t.tx, bHyps, q.ID)
	if err != nil {
		return nil, false, err
	}
	if id := hb.Get(hypKey(hyp)); id != nil {
		old, err := t.Node(string(id))
		return old, true, err
	}
	nodes := appendOnly(t.tx.Nodes())
	seq, err := nodes.NextSequence()
	if err != nil {
		return nil, false, err
	}
	n = &Node{ID: domain.NodeID(seq), Quest: q.ID, Role: role, Hypothesis: hyp, Status: st, Order: seq, Created: t.now}
	if parent != nil {
		n.Parent = parent.ID
		n.Depth = parent.Depth + 1
	}
	if init != nil {
		init(n)
	}
	if err := hb.Put(hypKey(hyp), []byte(n.ID)); err != nil {
		return nil, false, err
	}
	qn, err := sub(t.tx, bQNodes, q.ID)
	if err != nil {
		return nil, false, err
	}
	if err := qn.Put(u64(seq), []byte(n.ID)); err != nil {
		return nil, false, err
	}
	if st == AwaitingConsent {
		// A quest's egress consent is born waiting (package engine/humangate).
		if err := t.tx.Consent().Put([]byte(n.ID), []byte(q.ID)); err != nil {
			return nil, false, err
		}
	} else {
		idx, err := sub(t.tx, records.IndexFor(st), q.ID)
		if err != nil {
			return nil, false, err
		}
		if err := idx.Put(u64(seq), []byte(n.ID)); err != nil {
			return nil, false, err
		}
	}
	q.Counts.Inc(st)
	trackQueued(q, n, st)
	t.Track(q)
	if err := t.SaveNode(n); err != nil {
		return nil, false, err
	}
	if parent != nil && rel != "" {
		if err := t.Edge(q, parent.ID, n.ID, rel); err != nil {
			return nil, false, err
		}
	}
	return n, false, t.Emit(domain.NodeEvent(q, n, "", st, "created"))
}

func (t *txn) Edge(q *Quest, from, to, rel string) error {
	b, err := sub(t.tx, bEdges, q.ID)
	if err != nil {
		return err
	}
	seq, err := b.NextSequence()
	if err != nil {
		return err
	}
	return putJSON(b, u64(seq), Edge{From: from, To: to, Relation: rel})
}

// first returns the first node id of a per-quest index, or "".
func first(tx *store.Tx, idx []byte, quest string) string {
	b := subRO(tx, idx, quest)
	if b == nil {
		return ""
	}
	_, v := b.Cursor().First()
	return string(v)
}

// trackQueued keeps Quest.Queued in step with the status of owner and
// strategist nodes.
func trackQueued(q *Quest, n *Node, to Status) {
	if n.Role != RoleOwner && n.Role != RoleStrategist && !domain.IsGateRole(n.Role) {
		return
	}
	if n.Role == RoleOwner || domain.IsGateRole(n.Role) {
		// The owner whose council sits (council.go).
		if to == CouncilPending {
			if q.Queued == nil {
				q.Queued = map[string]string{}
			}
			q.Queued[queuedCouncil] = n.ID
		} else if q.Queued[queuedCouncil] == n.ID {
			delete(q.Queued, queuedCouncil)
		}
		if domain.IsGateRole(n.Role) {
			return
		}
	}
	if to == Pending {
		if q.Queued == nil {
			q.Queued = map[string]string{}
		}
		q.Queued[n.Role] = n.ID
	} else if q.Queued[n.Role] == n.ID {
		delete(q.Queued, n.Role)
	}
}
