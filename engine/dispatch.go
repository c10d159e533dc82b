package engine

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
)

// The dispatch layout (schema 6). A dispatch writes one record: its run,
// under the running index's key quest id '/' node id. Nothing else:
//
//   - the node's record keeps saying pending, and the node stays in its
//     quest's pending index (readers lay the running entry over the record,
//     see overlayRunning);
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

// runningFill is how full bbolt packs the running index's pages when it
// splits them at a commit. Its default (half) suits keys inserted one at a
// time at random places; the running index instead gets a tick's
// dispatches in one burst, all its new entries in nodes that the commit
// writes whole, and loses them one by one as runs end. Packed full, a
// tick of a thousand dispatches writes about half the pages for them.
// FillPercent is per bucket handle, per transaction: every writer of the
// index goes through runningForWrite.
const runningFill = 0.95

// runningForWrite is the running index of tx, set to pack its pages full.
func runningForWrite(tx *store.Tx) *store.Bucket {
	b := tx.Running()
	b.FillPercent = runningFill
	return b
}

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
	} else if err := runningForWrite(t.tx).Put(key, v); err != nil {
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
	rb := runningForWrite(t.tx)
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
	rb := runningForWrite(t.tx)
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

// getRun reads run id: from the runs bucket once it ended, from the
// running entry of node of quest while it runs. With quest or node
// unknown (""), the running index is searched.
func getRun(tx *store.Tx, id, quest, node string) (Run, bool, error) {
	var r Run
	if ok, err := getJSON(tx.Runs(), []byte(id), &r); ok || err != nil {
		return r, ok, err
	}
	k, v := runningValue(tx, id, quest, node)
	if v == nil {
		return r, false, nil
	}
	if err := records.DecodeRunning(k, v, &r); err != nil {
		return r, false, fmt.Errorf("decode run %s: %w", id, err)
	}
	return r, true, nil
}

// runningValue is the running entry of run id (of node of quest, when
// known) and its key, or nil.
func runningValue(tx *store.Tx, id, quest, node string) (k, v []byte) {
	rb := tx.Running()
	if quest != "" && node != "" {
		k := store.RunningKey(quest, node)
		if v := rb.Get(k); v != nil {
			if r, ok := records.ScanRunEntry(v); ok && r.ID == id {
				return k, v
			}
		}
		return nil, nil
	}
	c := rb.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if r, ok := records.ScanRunEntry(v); ok && r.ID == id {
			return k, v
		}
	}
	return nil, nil
}

// PutRun writes run r where it lives: the runs bucket once ended, else
// its running entry if it has one (a note on a run in flight).
func (t *txn) PutRun(r *Run) error {
	if r.Ended.IsZero() {
		key := store.RunningKey(r.Quest, r.Node)
		if v := t.tx.Running().Get(key); v != nil {
			if e, ok := records.ScanRunEntry(v); ok && e.ID == r.ID {
				return runningForWrite(t.tx).Put(key, records.AppendRunning(make([]byte, 0, 64), r.Quest, r.Node, r))
			}
		}
	}
	return appendOnly(t.tx.Runs()).Put([]byte(r.ID), records.AppendRun(make([]byte, 0, 256), r))
}

// runningRuns is every run in flight, from the running index.
func runningRuns(tx *store.Tx, quest string) ([]Run, error) {
	var out []Run
	c := tx.Running().Cursor()
	k, v := c.First()
	if quest != "" {
		k, v = c.Seek(store.RunningPrefix(quest))
	}
	for ; k != nil; k, v = c.Next() {
		q, _, ok := store.SplitRunningKey(k)
		if quest != "" && q != quest {
			break
		}
		if !ok {
			continue
		}
		var r Run
		if err := records.DecodeRunning(k, v, &r); err != nil {
			return nil, fmt.Errorf("decode running entry %s: %w", k, err)
		}
		if tx.Runs().Get([]byte(r.ID)) == nil {
			out = append(out, r)
		}
	}
	return out, nil
}

// migrateRunning is the migration to schema 6. A schema 5 running entry is
// node id -> run id, the run in the runs bucket and the node out of its
// pending index; each becomes quest id/node id -> the run record, the node
// back in its pending index (its record says pending). The quests'
// records counted their dispatches already (their DispatchSeq is at least
// the run's), so nothing is counted twice.
func migrateRunning(tx *store.Tx) error {
	rb := runningForWrite(tx)
	type old struct{ node, run string }
	var olds []old
	err := rb.ForEach(func(k, v []byte) error {
		if _, _, ok := store.SplitRunningKey(k); !ok {
			olds = append(olds, old{string(k), string(v)})
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, o := range olds {
		if err := rb.Delete([]byte(o.node)); err != nil {
			return err
		}
		n, err := readNodeRecord(tx, o.node)
		if err != nil {
			return fmt.Errorf("migrate running node %s: %w", o.node, err)
		}
		var r Run
		if ok, err := getJSON(tx.Runs(), []byte(o.run), &r); err != nil || !ok {
			r = Run{ID: o.run, Quest: n.Quest, Node: n.ID, Role: n.Role, Attempt: n.Tries + 1}
		}
		if err := tx.Runs().Delete([]byte(o.run)); err != nil {
			return err
		}
		if err := rb.Put(store.RunningKey(n.Quest, n.ID), records.AppendRunning(nil, n.Quest, n.ID, &r)); err != nil {
			return err
		}
		if n.Status == Pending {
			b, err := sub(tx, bPending, n.Quest)
			if err != nil {
				return err
			}
			if err := b.Put(u64(n.Order), []byte(n.ID)); err != nil {
				return err
			}
		}
		if err := foldDispatch(tx, n.Quest, r.ID); err != nil {
			return err
		}
	}
	return nil
}

// foldDispatch raises quest's DispatchSeq to run's, so that the entry of
// run, which the record counts already, is not counted again.
func foldDispatch(tx *store.Tx, quest, run string) error {
	qb := tx.Quests()
	q, ok, err := records.GetQuestRecord(qb, quest)
	if err != nil || !ok || q.DispatchSeq >= records.RunNumber(run) {
		return err
	}
	q.DispatchSeq = records.RunNumber(run)
	return records.PutQuest(qb, q)
}

// readNodeRecord reads node id's record as stored, without the running
// index laid over it.
func readNodeRecord(tx *store.Tx, id string) (*Node, error) {
	key, err := nodeKey(id)
	if err != nil {
		return nil, err
	}
	n := new(Node)
	raw := tx.Nodes().Get(key)
	if raw == nil {
		return n, fmt.Errorf("node %s: %w", id, ErrNotFound)
	}
	if err := records.DecodeNode(raw, n); err != nil {
		return n, fmt.Errorf("decode %s: %w", key, err)
	}
	return n, nil
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
