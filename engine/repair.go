package engine

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/ledger"
	"github.com/questbox/questbox/engine/store"
)

// rebuild derives again, inside tx, what the engine keeps in step with the
// records a salvage copied, so that the store works and verifies although
// records were lost: it drops node records that do not decode; it rebuilds
// every per-quest index, each quest's counts, running node and queued
// roles, and the set of active quests from the nodes; it gives a quest
// record that was lost a stopped placeholder; it raises every bucket
// sequence above the keys present (new ids must never reuse one); it
// restores a lost schema version and ledger head; and it appends a
// SALVAGED ledger record naming the ledger records and the locked nodes
// that were lost. It returns one line per thing it did.
//
// seqKnown says whether salvage read a top-level bucket's header (its
// sequence): where it did not, the bucket's last records may have been
// lost unseen, and sequences are raised past every id referenced anywhere
// so that no new node, quest or run takes the id of a lost one.
func rebuild(tx *store.Tx, now time.Time, seqKnown func(bucket []byte) bool) ([]string, error) {
	r := &rebuilder{tx: tx, now: now}
	steps := []func() error{
		r.buckets,
		r.readNodes,
		r.repairChains,
		r.readQuests,
		r.placeholders,
		r.keepLockSeqs,
		r.reindex,
		r.writeQuests,
		r.raiseSeqs,
		func() error { return restoreSchema(tx, &r.out) },
		r.resumeUpgrade,
		func() error { return recordLoss(tx, now, r.byID, r.rewritten, !seqKnown(bLedger), &r.out) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return r.out, err
		}
	}
	return r.out, nil
}

// rebuilder holds what rebuild's steps read and derive, in their order.
type rebuilder struct {
	tx  *store.Tx
	now time.Time
	out []string
	// nodes are the node records that decode, in creation order; refs
	// the highest id any record refers to, per prefix (referenced).
	nodes []*Node
	refs  map[byte]uint64
	// quests are the quest records that decode, and placeholders.
	quests   map[string]*Quest
	maxQuest uint64
	// lockSeq is each quest's lock sequence, which export cursors count
	// on: it must survive the indexes being dropped.
	lockSeq map[string]uint64
	byID    map[string]*Node
	// running is the running index as salvage found it, node id -> its
	// entry (runningEntries), read before the indexes are dropped.
	running map[string][]byte
	// rewritten are the nodes whose record repairChains wrote again.
	rewritten []string
}

func (r *rebuilder) note(format string, args ...any) {
	r.out = append(r.out, fmt.Sprintf(format, args...))
}

// buckets creates every bucket that was lost and drops the records that
// do not decode.
func (r *rebuilder) buckets() error {
	if err := store.RecreateBuckets(r.tx, &r.out); err != nil {
		return err
	}
	if err := dropForeign(r.tx, &r.out); err != nil {
		return err
	}
	return store.DropInvalid(r.tx, recordDecodes, &r.out)
}

// flatBuckets hold records only, never a nested bucket.
var flatBuckets = [][]byte{bNodes, bQuests, bLedger, bEvents, bRuns, bExports, bJudge, bAttempts}

// dropForeign deletes what a stale page put where it does not belong: a
// nested bucket among records, and in the ledger and the events a record
// that is not one of theirs — its key not the sequence it says it has, or
// without the fields every one of theirs has (a page of some other
// bucket, read as theirs). The damaged file keeps them; a dropped ledger
// record is recorded as lost.
func dropForeign(tx *store.Tx, out *[]string) error {
	for _, name := range flatBuckets {
		b := tx.Bucket(name)
		var drop [][]byte
		_ = b.ForEach(func(k, v []byte) error {
			// What every ledger record and every event has; a rewritten
			// ledger record keeps its shape (the ledger check names it).
			var rec struct {
				Seq  uint64  `json:"seq"`
				Prev *string `json:"prev"`
				Hash string  `json:"hash"`
				Kind string  `json:"kind"`
			}
			valid := json.Unmarshal(v, &rec) == nil
			if bytesEqual(name, bEvents) && isGroup(v) {
				// A group (eventgroup.go) whose checksum holds but
				// whose key is not its first seq is a copy from
				// elsewhere; one that does not decode is dropInvalid's.
				if store.GroupMisplaced(k, v) {
					drop = append(drop, slices.Clone(k))
				}
				return nil
			}
			switch {
			case v == nil:
				drop = append(drop, slices.Clone(k))
			case !valid: // dropInvalid's
			case bytesEqual(name, bLedger) && (len(k) != 8 || rec.Seq != seqOf(k) || rec.Prev == nil || len(rec.Hash) != 64),
				bytesEqual(name, bEvents) && (len(k) != 8 || rec.Seq != seqOf(k) || rec.Kind == ""):
				drop = append(drop, slices.Clone(k))
			}
			return nil
		})
		for _, k := range drop {
			if err := b.DropKey(k); err != nil {
				return err
			}
			*out = append(*out, fmt.Sprintf("bucket %s: %s held a stray record or bucket (a stale page): dropped", name, store.ShowKey(k)))
		}
	}
	return nil
}

func bytesEqual(a, b []byte) bool { return string(a) == string(b) }

// readNodes reads the nodes, in creation order, drops the records that do
// not decode as the node their key names, and raises the nodes' sequence.
func (r *rebuilder) readNodes() error {
	nb := r.tx.Nodes()
	var drop [][]byte
	r.running = runningEntries(r.tx)
	err := nb.ForEach(func(k, v []byte) error {
		n := new(Node)
		err := decodeNode(v, n)
		if err == nil && n.Quest == "" {
			// Damage to the field's name leaves valid JSON without it: a
			// node of no quest could be indexed nowhere.
			err = errors.New("it names no quest")
		}
		if err == nil && !n.Status.Valid() {
			// Nor counted in its quest (StatusCounts).
			err = fmt.Errorf("unknown status %q", n.Status)
		}
		if err != nil || len(k) != 8 || n.ID != domain.NodeID(seqOf(k)) || n.Order != seqOf(k) {
			r.note("node record %s does not decode as node %s (%v): dropped", store.ShowKey(k), domain.NodeID(seqOf(k)), err)
			drop = append(drop, slices.Clone(k))
			return nil
		}
		if e := r.running[n.ID]; e != nil && n.Status == Pending {
			// A running node's record says pending (overlayRunning).
			setRunning(n, e)
		}
		r.nodes = append(r.nodes, n)
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range drop {
		if err := nb.DropKey(k); err != nil {
			return err
		}
	}
	r.refs = referenced(r.tx, r.nodes)
	maxNode := r.refs['n']
	if len(r.nodes) > 0 {
		maxNode = max(maxNode, r.nodes[len(r.nodes)-1].Order)
	}
	return store.RaiseSequence(nb, maxNode, &r.out)
}

// readQuests reads the quests and drops the records that do not decode.
func (r *rebuilder) readQuests() error {
	qb := r.tx.Quests()
	r.quests = map[string]*Quest{}
	var bad [][]byte
	err := qb.ForEach(func(k, v []byte) error {
		q := new(Quest)
		if err := decodeQuest(v, q); err != nil || q.ID != string(k) {
			r.note("quest record %s does not decode (%v): dropped", store.ShowKey(k), err)
			bad = append(bad, slices.Clone(k))
			return nil
		}
		// The dispatches its record does not count yet (overlayDispatch).
		base := q.DispatchSeq
		for node, e := range r.running {
			if _, ok := scanRunEntry(e); ok && r.questOf(node) == q.ID {
				applyEntry(q, base, []byte(node), e)
			}
		}
		r.quests[q.ID] = q
		r.maxQuest = max(r.maxQuest, idNumber(q.ID, 'q'))
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range bad {
		if err := qb.DropKey(k); err != nil {
			return err
		}
	}
	return nil
}

// placeholders gives a lost quest a stopped placeholder its nodes can
// live in, and raises the quests' sequence.
func (r *rebuilder) placeholders() error {
	for _, n := range r.nodes {
		if r.quests[n.Quest] != nil {
			continue
		}
		q := &Quest{ID: n.Quest, Name: "salvaged " + n.Quest, Direction: "(lost to store damage)", Status: QuestStopped,
			Reason: "its record was lost to store damage; `questbox salvage` recreated it from its nodes: check it before `questbox quest resume " + n.Quest + "`",
			Mode:   ModeSolo, Roles: []string{n.Role}, Provider: ProviderExternal, Gate: "default", Limits: domain.DefaultLimits(), Created: n.Created, Updated: r.now}
		r.quests[q.ID] = q
		r.maxQuest = max(r.maxQuest, idNumber(q.ID, 'q'))
		r.note("quest %s was lost: recreated as a stopped placeholder from its nodes", q.ID)
	}
	for _, n := range r.nodes {
		if q := r.quests[n.Quest]; !slices.Contains(q.Roles, n.Role) && q.Name == "salvaged "+q.ID {
			q.Roles = append(q.Roles, n.Role)
		}
	}
	return store.RaiseSequence(r.tx.Quests(), max(r.maxQuest, r.refs['q']), &r.out)
}

// keepLockSeqs reads each quest's lock sequence, from its locked index
// and its export cursor, before the indexes are dropped.
func (r *rebuilder) keepLockSeqs() error {
	r.lockSeq = map[string]uint64{}
	locked := r.tx.Locked()
	_ = locked.ForEachBucket(func(q []byte) error {
		r.lockSeq[string(q)] = locked.Bucket(q).Sequence()
		return nil
	})
	_ = r.tx.Exports().ForEach(func(k, v []byte) error {
		var st exportState
		if json.Unmarshal(v, &st) == nil {
			r.lockSeq[string(k)] = max(r.lockSeq[string(k)], st.Cursor)
			if st.Pending != nil {
				r.lockSeq[string(k)] = max(r.lockSeq[string(k)], st.Pending.Upto)
			}
		}
		return nil
	})
	return nil
}

// reindex drops every index and derives it again from the nodes, with
// each quest's counts, running node and queued roles, and the lock
// sequences.
func (r *rebuilder) reindex() error {
	for _, name := range store.IndexBuckets {
		if err := r.tx.DeleteBucket(name); err != nil {
			return err
		}
		if _, err := r.tx.CreateBucket(name); err != nil {
			return err
		}
	}
	for _, q := range r.quests {
		q.Counts, q.Running, q.Queued = domain.EmptyCounts(), "", nil
	}
	r.byID = map[string]*Node{}
	for _, n := range r.nodes {
		r.byID[n.ID] = n
		if err := r.index(n, r.quests[n.Quest]); err != nil {
			return err
		}
	}
	for qid, seq := range r.lockSeq {
		if r.quests[qid] == nil {
			continue
		}
		b, err := sub(r.tx, bLocked, qid)
		if err != nil {
			return err
		}
		if err := b.SetSequence(seq); err != nil {
			return err
		}
	}
	return nil
}

// index puts node n of quest q into every index its status calls for.
func (r *rebuilder) index(n *Node, q *Quest) error {
	q.Counts.Inc(n.Status)
	key := u64(n.Order)
	put := func(parent []byte, k, v []byte) error {
		b, err := sub(r.tx, parent, q.ID)
		if err != nil {
			return err
		}
		return b.Put(k, v)
	}
	if err := put(bQNodes, key, []byte(n.ID)); err != nil {
		return err
	}
	hb, err := sub(r.tx, bHyps, q.ID)
	if err != nil {
		return err
	}
	if hk := hypKey(n.Hypothesis); hb.Get(hk) == nil {
		if err := hb.Put(hk, []byte(n.ID)); err != nil {
			return err
		}
	}
	if idx := indexFor(n.Status); idx != nil {
		if err := put(idx, key, []byte(n.ID)); err != nil {
			return err
		}
	}
	switch {
	case n.Status == Running:
		// In its pending index too, and its run in its running entry
		// (dispatch.go).
		if err := put(bPending, key, []byte(n.ID)); err != nil {
			return err
		}
		if err := r.tx.Running().Put(store.RunningKey(q.ID, n.ID), r.runningValue(n)); err != nil {
			return err
		}
		q.Running = n.ID
		if len(n.Runs) > 0 {
			q.DispatchSeq = max(q.DispatchSeq, runNumber(n.Runs[len(n.Runs)-1]))
		}
	case n.Status == AwaitingConsent:
		if err := r.tx.Consent().Put([]byte(n.ID), []byte(q.ID)); err != nil {
			return err
		}
	case n.Status.Terminal():
		if n.LockSeq == 0 {
			r.note("locked node %s has no lock sequence: not in its quest's export order", n.ID)
			break
		}
		if err := put(bLocked, u64(n.LockSeq), []byte(n.ID)); err != nil {
			return err
		}
		if shownEvidence(n) {
			if err := put(bEvidence, u64(n.LockSeq), []byte(n.ID)); err != nil {
				return err
			}
		}
		r.lockSeq[q.ID] = max(r.lockSeq[q.ID], n.LockSeq)
	}
	trackQueued(q, n, n.Status)
	return nil
}

// writeQuests writes every quest back, without replays whose node is
// gone, and the set of active quests.
func (r *rebuilder) writeQuests() error {
	qb := r.tx.Quests()
	for _, id := range slices.Sorted(maps.Keys(r.quests)) {
		q := r.quests[id]
		q.Replays = slices.DeleteFunc(q.Replays, func(id string) bool {
			n := r.byID[id]
			return n == nil || n.Claim == nil || !n.Claim.Replay
		})
		if err := putQuest(qb, q); err != nil {
			return err
		}
		if q.Status == QuestActive {
			if err := r.tx.Active().Put([]byte(q.ID), nil); err != nil {
				return err
			}
		}
	}
	r.note("rebuilt the per-quest indexes, counts and active set (nodes: %d, quests: %d)", len(r.nodes), len(r.quests))
	return nil
}

// raiseSeqs raises the sequences of the buckets keyed by sequence (runs,
// events, the ledger, each quest's edges) past their keys.
func (r *rebuilder) raiseSeqs() error {
	var maxRun uint64
	_ = r.tx.Runs().ForEach(func(k, _ []byte) error {
		maxRun = max(maxRun, idNumber(string(k), 'r'))
		return nil
	})
	_ = r.tx.Running().ForEach(func(_, v []byte) error {
		e, _ := scanRunEntry(v)
		maxRun = max(maxRun, idNumber(e.ID, 'r'))
		return nil
	})
	if err := store.RaiseSequence(r.tx.Runs(), max(maxRun, r.refs['r']), &r.out); err != nil {
		return err
	}
	ab := r.tx.Attempts()
	last, _ := ab.Cursor().Last()
	if err := store.RaiseSequence(ab, max(seqOf(last), maxAttemptSeq(r.nodes)), &r.out); err != nil {
		return err
	}
	for _, name := range [][]byte{bEvents, bLedger} {
		b := r.tx.Bucket(name)
		if k, v := b.Cursor().Last(); k != nil {
			last := seqOf(k)
			if end, err := lastSeqIn(k, v); err == nil {
				last = end // a group's newest event
			}
			if err := store.RaiseSequence(b, last, &r.out); err != nil {
				return err
			}
		}
	}
	eb := r.tx.Edges()
	return eb.ForEachBucket(func(q []byte) error {
		b := eb.Bucket(q)
		if k, _ := b.Cursor().Last(); k != nil {
			return store.RaiseSequence(b, seqOf(k), &r.out)
		}
		return nil
	})
}

// recordDecodes says whether record v of the record bucket name decodes
// (store.ForInvalid): JSON, quests in their codec, ledger records as
// Verify reads them, event groups and attempt records in their binary
// forms.
func recordDecodes(name string, v []byte) bool {
	switch {
	case name == string(bQuests):
		return decodeQuest(v, new(Quest)) == nil
	case name == string(bLedger):
		// Verify decodes every ledger record (a time that does not parse
		// is as damaged as a broken brace): so must what salvage keeps.
		return json.Valid(v) && json.Unmarshal(v, new(LedgerRecord)) == nil
	case name == string(bEvents) && isGroup(v):
		first, ok := groupKey(v)
		return ok && checkGroup(u64(first), v) == nil
	case name == string(bAttempts):
		_, err := decodeAttemptRecord(v)
		return err == nil
	}
	return json.Valid(v)
}

// invalidRecords names every record of the record buckets that does not
// decode.
func invalidRecords(tx *store.Tx) []string { return store.InvalidRecords(tx, recordDecodes) }

// damagedRecords is what salvage repairs in a store whose pages are
// sound: records that do not decode, and a locked index out of step with
// the nodes (an index page from another commit; rebuild derives every
// index again).
func damagedRecords(tx *store.Tx) []string {
	return append(append(invalidRecords(tx), checkChains(tx)...), checkLedger(tx, SchemaVersion).index...)
}

// referenced returns, per id prefix (n, q, r), the highest id number any
// record refers to: nodes (their quest, parent and runs), runs, events,
// ledger records and edges.
func referenced(tx *store.Tx, nodes []*Node) map[byte]uint64 {
	out := map[byte]uint64{}
	see := func(ids ...string) {
		for _, id := range ids {
			if id != "" {
				out[id[0]] = max(out[id[0]], idNumber(id, id[0]))
			}
		}
	}
	for _, n := range nodes {
		see(n.Quest, n.Parent)
		see(n.Runs...)
	}
	var ref struct {
		ID    string `json:"id"`
		Quest string `json:"quest"`
		Node  string `json:"node"`
		From  string `json:"from"`
		To    string `json:"to"`
	}
	scan := func(b *store.Bucket) {
		_ = b.ForEach(func(k, v []byte) error {
			if isGroup(v) {
				_, _ = eachEvent(k, v, 0, func(ev *Event) bool {
					see("", ev.Quest, ev.Node, ev.From, ev.To)
					return true
				})
				return nil
			}
			ref.ID, ref.Quest, ref.Node, ref.From, ref.To = "", "", "", "", ""
			if v != nil && json.Unmarshal(v, &ref) == nil {
				see(ref.ID, ref.Quest, ref.Node, ref.From, ref.To)
			}
			return nil
		})
	}
	for _, name := range [][]byte{bRuns, bEvents, bLedger} {
		scan(tx.Bucket(name))
	}
	_ = tx.Edges().ForEachBucket(func(q []byte) error {
		see(string(q))
		scan(tx.Edges().Bucket(q))
		return nil
	})
	return out
}

// idNumber is n of an id "<prefix>n", or 0.
func idNumber(id string, prefix byte) uint64 {
	if len(id) < 2 || id[0] != prefix {
		return 0
	}
	v, _ := strconv.ParseUint(id[1:], 10, 64)
	return v
}

// restoreSchema puts back a lost schema version: 2 if a ledger record
// carries a node hash or there is nothing to seal, else 1 (migration 1 to
// 2 then seals the ledger at the next open).
func restoreSchema(tx *store.Tx, out *[]string) error {
	m := tx.Meta()
	if m.Get(kSchema) != nil {
		return nil
	}
	v := uint64(SchemaVersion)
	if k, _ := tx.Ledger().Cursor().First(); k != nil {
		v = 1
		_ = tx.Ledger().ForEach(func(_, raw []byte) error {
			if bytes.Contains(raw, []byte(`"node_hash":`)) {
				v = SchemaVersion
			}
			return nil
		})
	}
	*out = append(*out, fmt.Sprintf("the schema version was lost: set to v%d", v))
	return m.Put(kSchema, u64(v))
}

// recordLoss appends a SALVAGED record to the ledger when ledger records
// or locked nodes were lost, so that Verify can tell store damage, on
// record, from tampering. A lost ledger head is set to the last record.
//
// tailUnknown says the ledger's own sequence was lost: records after the
// last one found may have been lost without a trace, so a locked node
// whose record is missing is counted as lost too.
func recordLoss(tx *store.Tx, now time.Time, nodes map[string]*Node, rewritten []string, tailUnknown bool, out *[]string) error {
	meta := tx.Meta()
	lg := readLedgerGaps(tx.Ledger(), string(meta.Get(kLedgerHead)))
	if lg.head != "" && !lg.headFound {
		// The head names a record that was lost: records may be missing
		// after the last one found.
		tailUnknown = true
	}
	unproven := lg.unproven(nodes, tailUnknown)
	for _, id := range rewritten {
		// A locked node whose attempts were lost: its record is no
		// longer the one its ledger record hashed.
		if n := nodes[id]; n != nil && n.Status.Terminal() && !slices.Contains(unproven, id) {
			unproven = append(unproven, id)
		}
	}
	slices.Sort(unproven)
	if tailUnknown {
		*out = append(*out, "the ledger's sequence or its head was lost: records after the last one found may be lost too")
	}
	if err := lg.fixHead(meta, out); err != nil {
		return err
	}
	if len(lg.lost) == 0 && len(unproven) == 0 {
		return nil
	}
	r := LedgerRecord{Time: now.UTC(), Outcome: OutcomeSalvaged, Lost: lg.lost, Unproven: unproven}
	if err := ledger.Append(tx, r); err != nil {
		return err
	}
	*out = append(*out, "the verdict ledger records the loss: "+ledger.Loss(r))
	return nil
}

// ledgerGaps is what recordLoss reads of the ledger: the seq ranges
// missing, the last record's hash, each node's last record, and the head
// and whether a record has its hash.
type ledgerGaps struct {
	lost      [][2]uint64
	lastHash  string
	last      map[string]LedgerRecord
	head      string
	headFound bool
}

func readLedgerGaps(lb *store.Bucket, head string) *ledgerGaps {
	lg := &ledgerGaps{last: map[string]LedgerRecord{}, head: head}
	gap := func(from, to uint64) {
		if from <= to {
			lg.lost = append(lg.lost, [2]uint64{from, to})
		}
	}
	next := uint64(1)
	_ = lb.ForEach(func(k, v []byte) error {
		seq := seqOf(k)
		gap(next, seq-1)
		next = seq + 1
		var r LedgerRecord
		if json.Unmarshal(v, &r) == nil {
			lg.lastHash = r.Hash
			lg.headFound = lg.headFound || r.Hash == head
			if r.Node != "" {
				lg.last[r.Node] = r
			}
		}
		return nil
	})
	gap(next, lb.Sequence())
	return lg
}

// unproven lists the locked nodes the ledger can no longer prove: a
// terminal node whose locking record was lost, a node the ledger locked
// that is gone, or that came back older.
//
// A locked node with no locking record at all is unproven even when the
// ledger shows no gap: a torn write can bring back the ledger's pages,
// its sequence and its head all from an older commit and the node's page
// from a newer one, and nothing in the ledger then says a record is
// missing. A locking record that differs from the node is counted lost
// only when records were lost; otherwise it stays the ledger's to report.
func (lg *ledgerGaps) unproven(nodes map[string]*Node, tailUnknown bool) []string {
	var out []string
	gaps := len(lg.lost) > 0 || tailUnknown
	for _, id := range slices.Sorted(maps.Keys(nodes)) {
		n := nodes[id]
		if !n.Status.Terminal() {
			continue
		}
		r, ok := lg.last[id]
		switch {
		case !ok || !r.Status.Terminal():
			out = append(out, id) // its locking record was lost
		case gaps && (r.Status != n.Status || r.ClaimHash != n.ClaimHash):
			out = append(out, id) // its locking record was lost; an older terminal one is left
		}
	}
	for _, id := range slices.Sorted(maps.Keys(lg.last)) {
		switch n := nodes[id]; {
		case !lg.last[id].Status.Terminal():
		case n == nil:
			out = append(out, id) // the node itself was lost
		case !n.Status.Terminal():
			out = append(out, id) // the record that locked it was lost; an older one came back
		}
	}
	slices.Sort(out)
	return out
}

// fixHead sets the ledger head to the last record found when it was lost
// with its page or read from a stale one (an older meta bucket names an
// older record as the head).
func (lg *ledgerGaps) fixHead(meta *store.Bucket, out *[]string) error {
	if lg.head == lg.lastHash || lg.lastHash == "" {
		return nil
	}
	if err := meta.Put(kLedgerHead, []byte(lg.lastHash)); err != nil {
		return err
	}
	switch {
	case lg.head == "":
		*out = append(*out, "the ledger head was lost: set to the last ledger record")
	case lg.headFound:
		*out = append(*out, "the ledger head named an older record (read from a stale page): set to the last ledger record")
	default:
		*out = append(*out, "the ledger head named a record that was lost: set to the last ledger record found")
	}
	return nil
}

// questOf is the quest of node id among the nodes read, "" if none.
func (r *rebuilder) questOf(id string) string {
	i, ok := slices.BinarySearchFunc(r.nodes, nodeOrder(id), func(n *Node, o uint64) int { return cmp.Compare(n.Order, o) })
	if !ok {
		return ""
	}
	return r.nodes[i].Quest
}

// nodeOrder is the sequence number of node id, 0 if it is not a node id.
func nodeOrder(id string) uint64 { return idNumber(id, 'n') }

// runningValue is running node n's entry: the run record salvage found
// in its entry, else the one in the runs bucket (a schema 5 entry names
// its run only), else one made of what the node says.
func (r *rebuilder) runningValue(n *Node) []byte {
	e := r.running[n.ID]
	if _, ok := scanRunEntry(e); ok {
		return e
	}
	run := Run{Quest: n.Quest, Node: n.ID, Role: n.Role, Attempt: n.Tries + 1, Started: n.Updated}
	if len(n.Runs) > 0 {
		run.ID = n.Runs[len(n.Runs)-1]
		if _, err := getJSON(r.tx.Runs(), []byte(run.ID), &run); err == nil {
			run.Quest, run.Node = n.Quest, n.ID
		}
	}
	return appendRunning(nil, n.Quest, n.ID, &run)
}
