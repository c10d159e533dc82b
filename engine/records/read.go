package records

import (
	"fmt"
	"strconv"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/store"
)

// Reading the nodes and the runs in flight: a node record with the running
// index laid over it, a run from the runs bucket or its running entry, and
// the running index's writers and its migration to the dispatch layout.

func ReadNode(tx *store.Tx, id string) (*domain.Node, error) {
	n := new(domain.Node)
	key, kerr := NodeKey(id)
	if kerr != nil {
		return nil, kerr
	}
	raw := tx.Nodes().Get(key)
	if raw == nil {
		return nil, fmt.Errorf("node %s: %w", id, domain.ErrNotFound)
	}
	if err := DecodeNode(raw, n); err != nil {
		return nil, fmt.Errorf("decode %s: %w", key, err)
	}
	OverlayRunning(tx, n)
	return n, nil
}

// OverlayRunning lays the running index over a node record read from the
// store. From schema 3 a dispatch does not rewrite the node's record: the
// record keeps the status it was dispatched from (pending) and the
// running index (from schema 6 quest/node -> its run, see engine/dispatch.go)
// says that it runs, with which run. So a tick that dispatches a node per
// quest dirties no page of the nodes bucket, however many nodes the store
// holds; the record is written when the run ends (its verdict, an
// interruption), as it was before. Every reader of node records goes
// through here (ReadNode, and rebuild).
func OverlayRunning(tx *store.Tx, n *domain.Node) {
	if n.Status != domain.Pending {
		return
	}
	rb := tx.Running()
	if rb == nil {
		return
	}
	run := rb.Get(store.RunningKey(n.Quest, n.ID))
	if run == nil {
		// Before schema 6 (an older store read as it is): node -> run id.
		run = rb.Get([]byte(n.ID))
	}
	if run != nil {
		SetRunning(n, run)
	}
}

// NodeKey is a node's key in the nodes bucket: its sequence number, big
// endian, so that nodes created together share pages and a tick dirties one
// page per dispatched node however many nodes the store holds.
func NodeKey(id string) ([]byte, error) {
	v, ok := NodeSeq(id)
	if !ok {
		return nil, fmt.Errorf("node %q: %w", id, domain.ErrNotFound)
	}
	return store.U64(v), nil
}

// NodeSeq is the number in node id (its key, NodeKey), false when id is
// not a node id as nodeID writes it.
func NodeSeq(id string) (uint64, bool) {
	if len(id) < 2 || id[0] != 'n' {
		return 0, false
	}
	// Only the form nodeID writes: no sign, no leading zero.
	v, err := strconv.ParseUint(id[1:], 10, 64)
	if err != nil || (id[1] == '0' && len(id) > 2) {
		return 0, false
	}
	return v, true
}

// ReadNodeLog reads node id with its whole attempt log (Node.Attempts):
// what shows a node reads it so, never a write.
func ReadNodeLog(tx *store.Tx, id string) (*domain.Node, error) {
	n, err := ReadNode(tx, id)
	if err != nil {
		return nil, err
	}
	return n, LoadAttempts(tx, n)
}

// runningFill is how full bbolt packs the running index's pages when it
// splits them at a commit. Its default (half) suits keys inserted one at a
// time at random places; the running index instead gets a tick's
// dispatches in one burst, all its new entries in nodes that the commit
// writes whole, and loses them one by one as runs end. Packed full, a
// tick of a thousand dispatches writes about half the pages for them.
// FillPercent is per bucket handle, per transaction: every writer of the
// index goes through RunningForWrite.
const runningFill = 0.95

// RunningForWrite is the running index of tx, set to pack its pages full.
func RunningForWrite(tx *store.Tx) *store.Bucket {
	b := tx.Running()
	b.FillPercent = runningFill
	return b
}

// GetRun reads run id: from the runs bucket once it ended, from the
// running entry of node of quest while it runs. With quest or node
// unknown (""), the running index is searched.
func GetRun(tx *store.Tx, id, quest, node string) (domain.Run, bool, error) {
	var r domain.Run
	if ok, err := store.GetJSON(tx.Runs(), []byte(id), &r); ok || err != nil {
		return r, ok, err
	}
	k, v := runningValue(tx, id, quest, node)
	if v == nil {
		return r, false, nil
	}
	if err := DecodeRunning(k, v, &r); err != nil {
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
			if r, ok := ScanRunEntry(v); ok && r.ID == id {
				return k, v
			}
		}
		return nil, nil
	}
	c := rb.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if r, ok := ScanRunEntry(v); ok && r.ID == id {
			return k, v
		}
	}
	return nil, nil
}

// RunningRuns is every run in flight, from the running index.
func RunningRuns(tx *store.Tx, quest string) ([]domain.Run, error) {
	var out []domain.Run
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
		var r domain.Run
		if err := DecodeRunning(k, v, &r); err != nil {
			return nil, fmt.Errorf("decode running entry %s: %w", k, err)
		}
		if tx.Runs().Get([]byte(r.ID)) == nil {
			out = append(out, r)
		}
	}
	return out, nil
}

// MigrateRunning is the migration to schema 6. A schema 5 running entry is
// node id -> run id, the run in the runs bucket and the node out of its
// pending index; each becomes quest id/node id -> the run record, the node
// back in its pending index (its record says pending). The quests'
// records counted their dispatches already (their DispatchSeq is at least
// the run's), so nothing is counted twice.
func MigrateRunning(tx *store.Tx) error {
	rb := RunningForWrite(tx)
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
		n, err := ReadNodeRecord(tx, o.node)
		if err != nil {
			return fmt.Errorf("migrate running node %s: %w", o.node, err)
		}
		var r domain.Run
		if ok, err := store.GetJSON(tx.Runs(), []byte(o.run), &r); err != nil || !ok {
			r = domain.Run{ID: o.run, Quest: n.Quest, Node: n.ID, Role: n.Role, Attempt: n.Tries + 1}
		}
		if err := tx.Runs().Delete([]byte(o.run)); err != nil {
			return err
		}
		if err := rb.Put(store.RunningKey(n.Quest, n.ID), AppendRunning(nil, n.Quest, n.ID, &r)); err != nil {
			return err
		}
		if n.Status == domain.Pending {
			b, err := store.Sub(tx, store.Pending, n.Quest)
			if err != nil {
				return err
			}
			if err := b.Put(store.U64(n.Order), []byte(n.ID)); err != nil {
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
	q, ok, err := GetQuestRecord(qb, quest)
	if err != nil || !ok || q.DispatchSeq >= RunNumber(run) {
		return err
	}
	q.DispatchSeq = RunNumber(run)
	return PutQuest(qb, q)
}

// ReadNodeRecord reads node id's record as stored, without the running
// index laid over it.
func ReadNodeRecord(tx *store.Tx, id string) (*domain.Node, error) {
	key, err := NodeKey(id)
	if err != nil {
		return nil, err
	}
	n := new(domain.Node)
	raw := tx.Nodes().Get(key)
	if raw == nil {
		return n, fmt.Errorf("node %s: %w", id, domain.ErrNotFound)
	}
	if err := DecodeNode(raw, n); err != nil {
		return n, fmt.Errorf("decode %s: %w", key, err)
	}
	return n, nil
}
