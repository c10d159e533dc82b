package records

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
	"github.com/questbox/questbox/engine/store"
)

// Rules is what a rebuild asks of the rules above the records: how a
// running entry counts in its quest and a node's status in its quest's
// queue, the key of a hypothesis, which locked nodes show their evidence,
// what an export's state says of its quest's lock sequence, whether a
// record decodes (the ledger's included), and the ledger's record of what
// was lost. The engine's rules satisfy it.
type Rules interface {
	ApplyEntry(q *domain.Quest, base uint64, node, v []byte)
	TrackQueued(q *domain.Quest, n *domain.Node, to domain.Status)
	HypKey(h string) []byte
	ShownEvidence(n *domain.Node) bool
	ExportLockSeq(v []byte) (uint64, bool)
	RecordDecodes(name string, v []byte) bool
	RecordLoss(tx *store.Tx, now time.Time, nodes map[string]*domain.Node, rewritten []string, tailUnknown bool, out *[]string) error
}

// Rebuild derives again, inside tx, what the engine keeps in step with the
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
//
// schema is the schema version the engine writes (restored when lost),
// provider the one a placeholder quest names, rules the engine's.
func Rebuild(tx *store.Tx, now time.Time, seqKnown func(bucket []byte) bool, schema uint64, provider string, rules Rules) ([]string, error) {
	r := &rebuilder{tx: tx, now: now, schema: schema, provider: provider, rules: rules}
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
		func() error { return restoreSchema(tx, r.schema, &r.out) },
		r.resumeUpgrade,
		func() error { return rules.RecordLoss(tx, now, r.byID, r.rewritten, !seqKnown(store.Ledger), &r.out) },
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
	// schema, provider and rules are Rebuild's.
	schema   uint64
	provider string
	rules    Rules
	// nodes are the node records that decode, in creation order; refs
	// the highest id any record refers to, per prefix (referenced).
	nodes []*domain.Node
	refs  map[byte]uint64
	// quests are the quest records that decode, and placeholders.
	quests   map[string]*domain.Quest
	maxQuest uint64
	// lockSeq is each quest's lock sequence, which export cursors count
	// on: it must survive the indexes being dropped.
	lockSeq map[string]uint64
	byID    map[string]*domain.Node
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
	return store.DropInvalid(r.tx, r.rules.RecordDecodes, &r.out)
}

// flatBuckets hold records only, never a nested bucket.
var flatBuckets = [][]byte{store.Nodes, store.Quests, store.Ledger, store.Events, store.Runs, store.Exports, store.Judge, store.Attempts}

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
			if bytesEqual(name, store.Events) && IsGroup(v) {
				// A group (engine/records/eventgroup.go) whose checksum holds but
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
			case bytesEqual(name, store.Ledger) && (len(k) != 8 || rec.Seq != store.SeqOf(k) || rec.Prev == nil || len(rec.Hash) != 64),
				bytesEqual(name, store.Events) && (len(k) != 8 || rec.Seq != store.SeqOf(k) || rec.Kind == ""):
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
		n := new(domain.Node)
		err := DecodeNode(v, n)
		if err == nil && n.Quest == "" {
			// Damage to the field's name leaves valid JSON without it: a
			// node of no quest could be indexed nowhere.
			err = errors.New("it names no quest")
		}
		if err == nil && !n.Status.Valid() {
			// Nor counted in its quest (StatusCounts).
			err = fmt.Errorf("unknown status %q", n.Status)
		}
		if err != nil || len(k) != 8 || n.ID != domain.NodeID(store.SeqOf(k)) || n.Order != store.SeqOf(k) {
			r.note("node record %s does not decode as node %s (%v): dropped", store.ShowKey(k), domain.NodeID(store.SeqOf(k)), err)
			drop = append(drop, slices.Clone(k))
			return nil
		}
		if e := r.running[n.ID]; e != nil && n.Status == domain.Pending {
			// A running node's record says pending (overlayRunning).
			SetRunning(n, e)
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
	r.quests = map[string]*domain.Quest{}
	var bad [][]byte
	err := qb.ForEach(func(k, v []byte) error {
		q := new(domain.Quest)
		if err := DecodeQuest(v, q); err != nil || q.ID != string(k) {
			r.note("quest record %s does not decode (%v): dropped", store.ShowKey(k), err)
			bad = append(bad, slices.Clone(k))
			return nil
		}
		// The dispatches its record does not count yet (overlayDispatch).
		base := q.DispatchSeq
		for node, e := range r.running {
			if _, ok := ScanRunEntry(e); ok && r.questOf(node) == q.ID {
				r.rules.ApplyEntry(q, base, []byte(node), e)
			}
		}
		r.quests[q.ID] = q
		r.maxQuest = max(r.maxQuest, IDNumber(q.ID, 'q'))
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
		q := &domain.Quest{ID: n.Quest, Name: "salvaged " + n.Quest, Direction: "(lost to store damage)", Status: domain.QuestStopped,
			Reason: "its record was lost to store damage; `questbox salvage` recreated it from its nodes: check it before `questbox quest resume " + n.Quest + "`",
			Mode:   domain.ModeSolo, Roles: []string{n.Role}, Provider: r.provider, Gate: "default", Limits: domain.DefaultLimits(), Created: n.Created, Updated: r.now}
		r.quests[q.ID] = q
		r.maxQuest = max(r.maxQuest, IDNumber(q.ID, 'q'))
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
		if seq, ok := r.rules.ExportLockSeq(v); ok {
			r.lockSeq[string(k)] = max(r.lockSeq[string(k)], seq)
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
	r.byID = map[string]*domain.Node{}
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
		b, err := store.Sub(r.tx, store.Locked, qid)
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
func (r *rebuilder) index(n *domain.Node, q *domain.Quest) error {
	q.Counts.Inc(n.Status)
	key := store.U64(n.Order)
	put := func(parent []byte, k, v []byte) error {
		b, err := store.Sub(r.tx, parent, q.ID)
		if err != nil {
			return err
		}
		return b.Put(k, v)
	}
	if err := put(store.QNodes, key, []byte(n.ID)); err != nil {
		return err
	}
	hb, err := store.Sub(r.tx, store.Hyps, q.ID)
	if err != nil {
		return err
	}
	if hk := r.rules.HypKey(n.Hypothesis); hb.Get(hk) == nil {
		if err := hb.Put(hk, []byte(n.ID)); err != nil {
			return err
		}
	}
	if idx := IndexFor(n.Status); idx != nil {
		if err := put(idx, key, []byte(n.ID)); err != nil {
			return err
		}
	}
	switch {
	case n.Status == domain.Running:
		// In its pending index too, and its run in its running entry
		// (engine/dispatch.go).
		if err := put(store.Pending, key, []byte(n.ID)); err != nil {
			return err
		}
		if err := r.tx.Running().Put(store.RunningKey(q.ID, n.ID), r.runningValue(n)); err != nil {
			return err
		}
		q.Running = n.ID
		if len(n.Runs) > 0 {
			q.DispatchSeq = max(q.DispatchSeq, RunNumber(n.Runs[len(n.Runs)-1]))
		}
	case n.Status == domain.AwaitingConsent:
		if err := r.tx.Consent().Put([]byte(n.ID), []byte(q.ID)); err != nil {
			return err
		}
	case n.Status.Terminal():
		if n.LockSeq == 0 {
			r.note("locked node %s has no lock sequence: not in its quest's export order", n.ID)
			break
		}
		if err := put(store.Locked, store.U64(n.LockSeq), []byte(n.ID)); err != nil {
			return err
		}
		if r.rules.ShownEvidence(n) {
			if err := put(store.Evidence, store.U64(n.LockSeq), []byte(n.ID)); err != nil {
				return err
			}
		}
		r.lockSeq[q.ID] = max(r.lockSeq[q.ID], n.LockSeq)
	}
	r.rules.TrackQueued(q, n, n.Status)
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
		if err := PutQuest(qb, q); err != nil {
			return err
		}
		if q.Status == domain.QuestActive {
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
		maxRun = max(maxRun, IDNumber(string(k), 'r'))
		return nil
	})
	_ = r.tx.Running().ForEach(func(_, v []byte) error {
		e, _ := ScanRunEntry(v)
		maxRun = max(maxRun, IDNumber(e.ID, 'r'))
		return nil
	})
	if err := store.RaiseSequence(r.tx.Runs(), max(maxRun, r.refs['r']), &r.out); err != nil {
		return err
	}
	ab := r.tx.Attempts()
	last, _ := ab.Cursor().Last()
	if err := store.RaiseSequence(ab, max(store.SeqOf(last), maxAttemptSeq(r.nodes)), &r.out); err != nil {
		return err
	}
	for _, name := range [][]byte{store.Events, store.Ledger} {
		b := r.tx.Bucket(name)
		if k, v := b.Cursor().Last(); k != nil {
			last := store.SeqOf(k)
			if end, err := LastSeqIn(k, v); err == nil {
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
			return store.RaiseSequence(b, store.SeqOf(k), &r.out)
		}
		return nil
	})
}

// referenced returns, per id prefix (n, q, r), the highest id number any
// record refers to: nodes (their quest, parent and runs), runs, events,
// ledger records and edges.
func referenced(tx *store.Tx, nodes []*domain.Node) map[byte]uint64 {
	out := map[byte]uint64{}
	see := func(ids ...string) {
		for _, id := range ids {
			if id != "" {
				out[id[0]] = max(out[id[0]], IDNumber(id, id[0]))
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
			if IsGroup(v) {
				_, _ = EachEvent(k, v, 0, func(ev *domain.Event) bool {
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
	for _, name := range [][]byte{store.Runs, store.Events, store.Ledger} {
		scan(tx.Bucket(name))
	}
	_ = tx.Edges().ForEachBucket(func(q []byte) error {
		see(string(q))
		scan(tx.Edges().Bucket(q))
		return nil
	})
	return out
}

// IDNumber is n of an id "<prefix>n", or 0.
func IDNumber(id string, prefix byte) uint64 {
	if len(id) < 2 || id[0] != prefix {
		return 0
	}
	v, _ := strconv.ParseUint(id[1:], 10, 64)
	return v
}

// restoreSchema puts back a lost schema version: 2 if a ledger record
// carries a node hash or there is nothing to seal, else 1 (migration 1 to
// 2 then seals the ledger at the next open).
func restoreSchema(tx *store.Tx, schema uint64, out *[]string) error {
	m := tx.Meta()
	if m.Get(store.KeySchema) != nil {
		return nil
	}
	v := schema
	if k, _ := tx.Ledger().Cursor().First(); k != nil {
		v = 1
		_ = tx.Ledger().ForEach(func(_, raw []byte) error {
			if bytes.Contains(raw, []byte(`"node_hash":`)) {
				v = schema
			}
			return nil
		})
	}
	*out = append(*out, fmt.Sprintf("the schema version was lost: set to v%d", v))
	return m.Put(store.KeySchema, store.U64(v))
}

// questOf is the quest of node id among the nodes read, "" if none.
func (r *rebuilder) questOf(id string) string {
	i, ok := slices.BinarySearchFunc(r.nodes, NodeOrder(id), func(n *domain.Node, o uint64) int { return cmp.Compare(n.Order, o) })
	if !ok {
		return ""
	}
	return r.nodes[i].Quest
}

// NodeOrder is the sequence number of node id, 0 if it is not a node id.
func NodeOrder(id string) uint64 { return IDNumber(id, 'n') }

// runningValue is running node n's entry: the run record salvage found
// in its entry, else the one in the runs bucket (a schema 5 entry names
// its run only), else one made of what the node says.
func (r *rebuilder) runningValue(n *domain.Node) []byte {
	e := r.running[n.ID]
	if _, ok := ScanRunEntry(e); ok {
		return e
	}
	run := domain.Run{Quest: n.Quest, Node: n.ID, Role: n.Role, Attempt: n.Tries + 1, Started: n.Updated}
	if len(n.Runs) > 0 {
		run.ID = n.Runs[len(n.Runs)-1]
		if _, err := store.GetJSON(r.tx.Runs(), []byte(run.ID), &run); err == nil {
			run.Quest, run.Node = n.Quest, n.ID
		}
	}
	return AppendRunning(nil, n.Quest, n.ID, &run)
}

// repairChains keeps of each node's chain what survives a salvage: a
// chain that breaks loses the attempts before the break, never the node.
// The oldest record left is written again naming none before it, and the
// node's count and running hash are derived again. A locked node it
// changed is one the ledger can no longer prove (ledger.RecordLoss).
func (r *rebuilder) repairChains() error {
	b := r.tx.Attempts()
	nb := store.AppendOnly(r.tx.Nodes())
	for _, n := range r.nodes {
		if n.AttemptCount == 0 {
			continue
		}
		chain, raws, err := ReadChain(r.tx, n)
		if err == nil && len(chain)+1 == n.AttemptCount && SumOf(raws) == n.AttemptSum {
			continue
		}
		if k := len(chain); k > 0 && chain[k-1].Prev != 0 {
			v := AppendAttemptRecord(nil, n.ID, 0, &chain[k-1].Attempt)
			if err := b.Put(store.U64(attemptKeyOf(n, chain, k-1)), v); err != nil {
				return err
			}
			raws[k-1] = v
		}
		lost := n.AttemptCount - 1 - len(chain)
		n.AttemptCount, n.AttemptSum = len(chain)+1, SumOf(raws)
		if len(chain) == 0 {
			n.AttemptSeq = 0
		}
		r.note("node %s: %d of its attempts were lost with their records; its log keeps the %d after them", n.ID, max(0, lost), n.AttemptCount)
		if err := PutNode(nb, n); err != nil {
			return err
		}
		r.rewritten = append(r.rewritten, n.ID)
	}
	return nil
}

// resumeUpgrade has the next open run migration 8 again, over every
// node, when a node salvage kept still holds its log in its record in a
// store that says schema 9: its meta keys were lost with their page (the
// schema restored as the newest), or the node came back in a copy from
// before its part moved it. Such a node is read correctly as it is, but
// the store is not the one schema 9 says; the migration moves what it
// finds and nothing twice.
func (r *rebuilder) resumeUpgrade() error {
	m := r.tx.Meta()
	if store.SeqOf(m.Get(store.KeySchema)) <= 8 {
		return nil // the open migrates it anyway
	}
	held := 0
	for _, n := range r.nodes {
		if !n.Status.Terminal() && n.AttemptCount == 0 && len(n.Attempts) > 0 {
			held++
		}
	}
	if held == 0 {
		return nil
	}
	if m.Get(store.KeyMigrating) == nil {
		if err := m.Put(store.KeyMigrating, store.U64(8)); err != nil {
			return err
		}
	}
	r.note("%d nodes still hold their attempt log in their record (an upgrade from v8 that had not finished): the upgrade runs again over every node when the store is next opened", held)
	return m.Delete(KeyMigrated)
}

// attemptKeyOf is the key of chain[i]: the node's AttemptSeq for the newest, the
// prev of the record after it otherwise.
func attemptKeyOf(n *domain.Node, chain []AttemptRecord, i int) uint64 {
	if i == 0 {
		return n.AttemptSeq
	}
	return chain[i-1].Prev
}

// maxAttemptSeq is the highest attempt record any node names.
func maxAttemptSeq(nodes []*domain.Node) uint64 {
	var m uint64
	for _, n := range nodes {
		m = max(m, n.AttemptSeq)
	}
	return m
}

// runningEntries reads the running index for salvage, in either form
// (schema 6, quest/node -> run record; schema 5, node -> run id): node id
// -> its run record (a bare id for schema 5).
func runningEntries(tx *store.Tx) map[string][]byte {
	out := map[string][]byte{}
	_ = tx.Running().ForEach(func(k, v []byte) error {
		node := string(k)
		if _, n, ok := store.SplitRunningKey(k); ok {
			node = n
		}
		out[node] = bytes.Clone(v)
		return nil
	})
	return out
}

// SetRunning marks n running with run, its running entry.
func SetRunning(n *domain.Node, run []byte) {
	n.Status = domain.Running
	r, ok := ScanRunEntry(run)
	if !ok && len(run) > 0 && run[0] == 'r' {
		r.ID = string(run) // a schema 5 entry, which salvage reads: the run's id
	}
	if r.ID != "" && (len(n.Runs) == 0 || n.Runs[len(n.Runs)-1] != r.ID) {
		n.Runs = append(n.Runs, r.ID)
	}
}

// IndexFor is the per-quest index bucket a status lives in, if any.
func IndexFor(s domain.Status) []byte {
	switch s {
	case domain.Pending:
		return store.Pending
	case domain.Proposed:
		return store.Proposed
	case domain.Deferred:
		return store.Deferred
	}
	return nil
}
