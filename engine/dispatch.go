package engine

import (
	"bytes"
	"slices"

	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
)

// The dispatch layout (schema 6). A dispatch writes one record: its run,
// under the running index's key quest id '/' node id. Nothing else:
//
//   - the node's record keeps saying pending, and the node stays in its
//     quest's pending index (readers lay the running entry over the record,
//     see records.OverlayRunning);
//   - the quest's record is not rewritten: the bookkeeping of the dispatch
//     (the node runs, one agent run more, the quest's place in the
//     dispatch order) is derived from the running entries whose run is
//     newer than the record's DispatchSeq (overlayDispatch), and folded
//     into the record whenever the quest is saved for another reason;
//   - the run's record lives in its running entry while it runs (from
//     schema 8 in a compact binary form, engine/records/runningentry.go; the JSON of the
//     run before) and moves to the runs bucket, as JSON, when it ends or
//     its node leaves running.
//
// So a dispatch is one B-tree write besides its event, into a bucket that
// holds only the runs in flight (a few pages however large the store), and
// a quest whose node runs keys its entries next to each other in the order
// of the active index, so the tick reads them with a cursor walking beside
// the active quests.

// overlayDispatch lays q's running entries over its record: each entry
// whose run is newer than the record's DispatchSeq is a dispatch the
// record does not count yet, and is counted here as move and newRun
// counted it in memory: the node leaves pending for running, the quest
// names it running, an agent run more (a replay counts none), DispatchSeq
// is the run's. Saving the quest folds them into its record; the entries
// whose run is not newer than DispatchSeq are folded already. Every
// entry, folded or not, adds its run's reservation to q.reserved, which
// no record keeps.
//
// c is a cursor of the running index; a quest without entries costs one
// seek.
func overlayDispatch(c *store.Cursor, q *Quest) {
	q.ReservedTokens = 0
	prefix := store.RunningPrefix(q.ID)
	base := q.DispatchSeq
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		applyEntry(q, base, k[len(prefix):], v)
	}
}

// runningWalk is a cursor of the running index walking beside the active
// index while activeQuests reads it: both are in the order of the quests'
// ids (runningKey), so the entries of the next quest read are at or after
// the cursor, most often right at it, and a quest costs a compare or a
// step instead of a seek from the root. The running index must not be
// written while the walk is used (activeQuests only reads).
type runningWalk struct {
	c *store.Cursor
	// k, v is the cursor's entry: the first one not before last (nil:
	// none), and every entry between last and k has last as its prefix.
	k, v []byte
	// last is the prefix of the quest laid over last; nil before the
	// first.
	last, prefix []byte
}

// overlay lays q's running entries over its record, as overlayDispatch.
func (w *runningWalk) overlay(q *Quest) {
	q.ReservedTokens = 0
	prefix := append(append(w.prefix[:0], q.ID...), '/')
	if w.last == nil || bytes.Compare(prefix, w.last) <= 0 || bytes.HasPrefix(prefix, w.last) {
		w.k, w.v = w.c.Seek(prefix)
	} else {
		// prefix is past every key with prefix last: the first entry not
		// before it is k or after it, past the entries of quests whose
		// records are not read here (finished, or read earlier in the
		// transaction).
		for step := 0; w.k != nil && bytes.Compare(w.k, prefix) < 0; step++ {
			if step == 8 {
				w.k, w.v = w.c.Seek(prefix)
				break
			}
			w.k, w.v = w.c.Next()
		}
	}
	base := q.DispatchSeq
	for ; w.k != nil && bytes.HasPrefix(w.k, prefix); w.k, w.v = w.c.Next() {
		applyEntry(q, base, w.k[len(prefix):], w.v)
	}
	w.last, w.prefix = prefix, w.last
}

// applyEntry counts the running entry of node (its value v) in q, unless
// q's record folded it already, and its reservation in any case: base is
// the record's DispatchSeq, before any entry was laid over it. Entries
// come in the order of their keys (or of a map, in salvage), not of their
// runs: a council's members "n9" and "n10" dispatched in one transaction
// have keys in the other order than their runs, so each is compared with
// the record's DispatchSeq, not with the latest entry's.
func applyEntry(q *Quest, base uint64, node, v []byte) {
	r, ok := records.ScanRunEntry(v)
	if !ok {
		return
	}
	q.ReservedTokens += r.Reserved
	if r.Seq() <= base {
		return
	}
	q.Counts.Dec(Pending)
	q.Counts.Inc(Running)
	q.Running = string(node)
	trackQueued(q, &Node{ID: q.Running, Role: r.Role}, Running)
	if r.Provider != "replay" {
		q.Counters.AgentRuns++
	}
	q.DispatchSeq = max(q.DispatchSeq, r.Seq())
}

// putRunning records run r of node n (of quest q) as running: its entry,
// and q's DispatchSeq, so that a save of q in this transaction folds it;
// its reservation counts in q at once.
func (t *txn) putRunning(q *Quest, n *Node, r *Run) error {
	q.ReservedTokens += r.Reserved
	key := t.Claim(store.AppendRunningKey(t.Spare(len(q.ID)+1+len(n.ID)), q.ID, n.ID))
	var v []byte
	var seq uint64
	if r == t.dispatching && t.plannedSeq > 0 {
		// newRun's: its id is runID(plannedSeq), no need to parse it.
		seq = t.plannedSeq
		v = t.Claim(records.AppendRunningSeq(t.Spare(64), q.ID, n.ID, r, seq))
	} else {
		seq = records.RunNumber(r.ID)
		v = t.Claim(records.AppendRunning(t.Spare(64), q.ID, n.ID, r))
	}
	if t.laterRunning {
		t.later.puts = append(t.later.puts, runningPut{key, v, t.laterRank})
	} else if err := records.RunningForWrite(t.tx).Put(key, v); err != nil {
		return err
	}
	q.DispatchSeq = max(q.DispatchSeq, seq)
	q.Running = n.ID
	return nil
}

// runningLater is what a tick keeps its running entries in until
// flushRunning puts them, with flushRunning's sort: the engine's
// (Engine.later), reused from tick to tick, as only a tick's write
// transaction, one at a time, uses it.
type runningLater struct {
	puts  []runningPut
	order []uint64
}

// reset empties l for a tick of at most n dispatches; what a tick that
// failed before its flush left in it is dropped.
func (l *runningLater) reset(n int) {
	clear(l.puts)
	l.puts = l.puts[:0]
	if cap(l.puts) < n {
		l.puts = make([]runningPut, 0, n)
	}
}

// runningPut is a running entry put later (flushRunning): its key and
// value, bytes of the transaction's block, and its quest's place in the
// active index, whose order is the order of the keys (runningKey).
type runningPut struct {
	key, value []byte
	rank       int32
}

// FlushRunning puts the running entries kept for later, in key order.
// bbolt inserts a key into its leaf's sorted list with a copy of every
// entry after it: a tick's thousand dispatches, put in the order of the
// tick (the order of their quests' dispatches, not of their ids), moved
// half the leaf each; in key order each is appended.
func (t *txn) FlushRunning() error {
	l := t.later
	if l == nil || len(l.puts) == 0 {
		return nil
	}
	// Sorted as numbers, each an entry's rank and its place in the list:
	// swapping the entries themselves (two slices each) costs a write
	// barrier per pointer while the collector marks.
	order := l.order[:0]
	for i, p := range l.puts {
		order = append(order, uint64(p.rank)<<32|uint64(i))
	}
	slices.Sort(order)
	l.order = order
	rb := records.RunningForWrite(t.tx)
	for _, o := range order {
		p := &l.puts[uint32(o)]
		if err := rb.Put(p.key, p.value); err != nil {
			return err
		}
	}
	clear(l.puts)
	l.puts = l.puts[:0]
	return nil
}

// plannedRun is the run n is dispatched with in this transaction (newRun),
// or, for a node placed running by other means (PlantNode), one made of
// its last run id.
func (t *txn) plannedRun(q *Quest, n *Node) *Run {
	if t.dispatching != nil && t.dispatching.Node == n.ID {
		return t.dispatching
	}
	r := &Run{Quest: q.ID, Node: n.ID, Role: n.Role, Attempt: n.Tries + 1, Started: t.now}
	if len(n.Runs) > 0 {
		r.ID = n.Runs[len(n.Runs)-1]
	}
	return r
}

// leaveRunning ends node n's running entry: its run record moves to the
// runs bucket, as JSON (a compact entry is written out as records.AppendRun), unless
// the run's end wrote it there already (endRun).
func (t *txn) leaveRunning(q *Quest, n *Node) error {
	rb := records.RunningForWrite(t.tx)
	key := store.RunningKey(q.ID, n.ID)
	v := rb.Get(key)
	if v == nil {
		return nil
	}
	r, ok := records.ScanRunEntry(v)
	if ok {
		q.ReservedTokens -= r.Reserved // its tokens are settled (endRun)
	}
	if ok && r.ID != "" {
		runs := appendOnly(t.tx.Runs())
		if runs.Get([]byte(r.ID)) == nil {
			if err := runs.Put([]byte(r.ID), records.RunRecord(key, v)); err != nil {
				return err
			}
		}
	}
	return rb.Delete(key)
}

// PutRun writes run r where it lives: the runs bucket once ended, else
// its running entry if it has one (a note on a run in flight).
func (t *txn) PutRun(r *Run) error {
	if r.Ended.IsZero() {
		key := store.RunningKey(r.Quest, r.Node)
		if v := t.tx.Running().Get(key); v != nil {
			if e, ok := records.ScanRunEntry(v); ok && e.ID == r.ID {
				return records.RunningForWrite(t.tx).Put(key, records.AppendRunning(make([]byte, 0, 64), r.Quest, r.Node, r))
			}
		}
	}
	return appendOnly(t.tx.Runs()).Put([]byte(r.ID), records.AppendRun(make([]byte, 0, 256), r))
}

// getQuest reads quest id with its runs in flight laid over its record
// (overlayDispatch); ok is false when it does not exist.
func getQuest(tx *store.Tx, id string) (q *Quest, ok bool, err error) {
	q, ok, err = records.GetQuestRecord(tx.Quests(), id)
	if ok {
		overlayDispatch(tx.Running().Cursor(), q)
	}
	return q, ok, err
}
