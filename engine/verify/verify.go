package verify

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/ledger"
	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
)

// Rules is what the check asks of the engine's rules: how the engine
// reads a quest's counts and which locked nodes' evidence its owner's
// prompt shows. The check reads the records as the engine does, so that
// what it calls damage is what the engine would trip on. Both are pure
// reads of what they are given.
type Rules interface {
	// OverlayDispatch lays q's running entries, read through c, a
	// cursor of the running index, over its record, as the engine reads
	// a quest.
	OverlayDispatch(c *store.Cursor, q *domain.Quest)
	// ShownEvidence reports whether n's evidence is shown in its quest's
	// owner's prompt, and so has an entry in the evidence index.
	ShownEvidence(n *domain.Node) bool
}

// Report is what Check found.
type Report struct {
	Records int `json:"records"`
	Locked  int `json:"locked_nodes"`
	// Pages and Keys are the pages in use and the records in them.
	Pages int `json:"pages"`
	Keys  int `json:"keys"`
	// Schema is the store's schema version.
	Schema uint64 `json:"schema"`
	// Signature is the ledger head's signature (ledger.CheckSeal).
	Signature ledger.Signature `json:"signature"`
	// Notes are findings that are not damage: a meta page rewritten at
	// open, losses a salvage recorded, an old schema read as it is.
	Notes []string `json:"notes,omitempty"`
	// Problems lists every problem found, page-level and ledger, each
	// naming the page, record or node; empty when the store is sound.
	Problems []string `json:"problems,omitempty"`
}

// Check checks the store's pages (the page check of store.DB.Snapshot)
// and the whole verdict ledger: every record's hash and link; that every locked node has the
// status and claim hash of its last ledger record and, from schema 2, the
// very bytes that record hashed; that no node left a status the ledger
// locked; and that no node is terminal without the ledger having locked
// it. It reports every problem found, not only the first.
//
// It is correct while the engine writes: both checks read one consistent
// snapshot (a read transaction, see store.DB.Snapshot) instead of pausing the
// writers for the duration — they are held off only for the moment it
// takes to read the meta pages. The page check reads the file, not bbolt's
// memory map, so a damaged page is a named problem, never a crash.
//
// Errors: store.ErrCorrupt for page-level damage (the ledger is not read then:
// salvage first) and for indexes out of step with the records (pages of
// different commits; any ledger problems found beside them are listed
// too); domain.ErrLedgerBroken for ledger problems in a store whose indexes
// agree with its records. The report's Problems lists them all either way.
//
// It checks the head's signature too (ledger.CheckSeal): on the box's own store
// (OpenStore) a head unsigned, signed by another key than the box's, or
// not matching its signature is a ledger problem; on a file checked on its
// own (a backup) only a signature that does not match is. The report's
// Signature says what was found, problem or not.
func Check(db *store.DB, box *ledger.Box, rules Rules) (Report, error) {
	rep := Report{Schema: db.Schema(), Notes: db.Notes()} // not what OpenStore did of the key: the daemon logs that once
	err := db.Snapshot(func(tx *store.Tx, pc store.PageCheck) error {
		rep.Pages, rep.Keys = pc.Pages, pc.Keys
		rep.Notes = append(rep.Notes, pc.Notes...)
		if pc.Err != nil {
			rep.Problems = pc.Problems
			rep.Notes = append(rep.Notes, "the verdict ledger was not checked: the store's pages are damaged")
			return pc.Err
		}
		lc := CheckLedger(tx, rep.Schema, rules)
		sig, problem := ledger.CheckSeal(tx, rep.Schema, box)
		rep.Signature = sig
		if problem != "" {
			lc.Problems = append(lc.Problems, problem)
		}
		lc.Rotten = append(lc.Rotten, RottenEvents(tx)...)
		lc.Rotten = append(lc.Rotten, records.CheckChains(tx)...)
		rep.Records, rep.Locked = lc.Records, lc.locked
		rep.Notes = append(rep.Notes, lc.Notes...)
		if damage := append(slices.Clip(lc.Rotten), lc.Index...); len(damage) > 0 {
			// Records that do not decode, or indexes that disagree with
			// the records: the store's pages are damaged or come from
			// different commits (a write the card lost, a torn copy).
			// Ledger problems found beside that are read from the same
			// pages and prove no rewrite: the store is damaged, and
			// salvage drops what does not decode, rebuilds the indexes
			// and records in the ledger what it can no longer prove.
			rep.Problems = append(damage, lc.Problems...)
			return store.Corrupt(db.Dir(), db.Path(), rep.Problems...)
		}
		if len(lc.Problems) > 0 {
			rep.Problems = lc.Problems
			return fmt.Errorf("questbox store %s: %s: %w", db.Path(), strings.Join(rep.Problems, "; "), domain.ErrLedgerBroken)
		}
		return nil
	})
	return rep, err
}

// RottenEvents names the outbox records that do not decode: a group whose
// checksum or form is wrong, a single record that is not JSON. Readers
// of the outbox would stop there; salvage drops them.
func RottenEvents(tx *store.Tx) []string {
	var out []string
	_ = tx.Events().ForEach(func(k, v []byte) error {
		ok := json.Valid(v)
		if records.IsGroup(v) {
			first, sound := records.GroupKey(v)
			ok = sound && records.CheckGroup(store.U64(first), v) == nil
		}
		if !ok {
			out = append(out, fmt.Sprintf("event record %d does not decode", store.SeqOf(k)))
		}
		return nil
	})
	return out
}

// LedgerCheck is what CheckLedger found: the chain as package ledger
// read it (its records, problems, notes, the records that do not decode,
// each node's last record, what salvage recorded lost), and what the
// locked nodes and the indexes say beside it.
type LedgerCheck struct {
	ledger.Chain
	locked int
	// Index lists where the locked index is out of step with the nodes:
	// store damage (an index page from another commit), which salvage
	// repairs by rebuilding every index, not a rewrite the ledger proves.
	// The chain's Rotten lists the ledger and node records that do not
	// decode: store damage too (bit rot, or a page of another bucket's
	// records where the tree names a ledger page), which salvage drops
	// and records.
	Index []string

	// shown are the locked nodes whose evidence the owner's prompt
	// shows: the entries the evidence index must have (schema 7).
	shown map[string]evidenceEntry

	// rewritten are the locked nodes whose record no longer matches
	// their locking record: whatever the indexes say of them follows
	// from that one change (a flipped byte in "lock_seq" takes a node out
	// of its locked index), so it is not counted as index damage.
	rewritten map[string]bool

	// statuses counts each quest's nodes by status, their running
	// entries laid over their records (Rules.OverlayDispatch), for counts;
	// unread says that a node record did not decode (its quest unknown).
	statuses map[string]map[domain.Status]int
	unread   bool
}

// CheckLedger checks the ledger and the locked nodes in tx under the rules
// of schema (before schema 2, records carry no node hash).
func CheckLedger(tx *store.Tx, schema uint64, rules Rules) LedgerCheck {
	c := LedgerCheck{Chain: ledger.ReadChain(tx), rewritten: map[string]bool{}, shown: map[string]evidenceEntry{},
		statuses: map[string]map[domain.Status]int{}}
	if head := string(tx.Meta().Get(store.KeyLedgerHead)); head != c.Prev && !c.Unknown {
		c.Problem("ledger head does not match the last record (records were removed)")
	}
	locked := lockedIndex(tx)
	present := c.nodes(tx, schema, locked, rules)
	for _, id := range slices.Sorted(maps.Keys(c.Last)) {
		if r := c.Last[id]; r.Status.Terminal() && !present[id] && !c.Unproven[id] {
			c.Problem("locked node %s (ledger record %d) is missing from the store", id, r.Seq)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(locked)) {
		if !present[id] && !c.Unproven[id] {
			c.Index = append(c.Index, fmt.Sprintf("the locked index of quest %s names node %s, which is missing from the store", locked[id], id))
		}
	}
	c.indexesName(tx, present)
	if schema >= 7 {
		c.evidenceIndex(tx)
	}
	c.counts(tx, rules)
	if schema < 2 {
		c.Notes = append(c.Notes, "schema v1: locked nodes were checked by status and claim hash only")
	}
	return c
}

// indexesName checks that every node the per-quest node indexes and the
// running index name is in the store: a torn write can leave an index page
// of another commit, and `quest show`, the tick or the recovery of
// interrupted runs would then look for a node that is not there.
func (c *LedgerCheck) indexesName(tx *store.Tx, present map[string]bool) {
	for _, name := range [][]byte{store.QNodes, store.Pending, store.Proposed, store.Deferred} {
		idx := tx.Bucket(name)
		_ = idx.ForEachBucket(func(q []byte) error {
			return idx.Bucket(q).ForEach(func(_, id []byte) error {
				if !present[string(id)] && !c.Unproven[string(id)] {
					c.Index = append(c.Index, fmt.Sprintf("the %s index of quest %s names node %s, which is missing from the store", name, q, id))
				}
				return nil
			})
		})
	}
	// The runs in flight (schema 6: quest/node -> run; node -> run id
	// before, read as it is).
	_ = tx.Running().ForEach(func(k, _ []byte) error {
		node := string(k)
		if _, n, ok := store.SplitRunningKey(k); ok {
			node = n
		}
		if !present[node] && !c.Unproven[node] {
			c.Index = append(c.Index, fmt.Sprintf("the running index names node %s, which is missing from the store", node))
		}
		return nil
	})
}

// evidenceEntry is where a node belongs in the evidence index.
type evidenceEntry struct {
	quest string
	seq   uint64
}

// evidenceIndex checks the evidence index (schema 7) against the nodes:
// it must name every locked node whose evidence the owner's prompt shows
// (Rules.ShownEvidence), under its quest and lock sequence, and nothing else.
// A wrong entry is store damage, as in the other indexes: the owner's
// prompt would leave out evidence or fail on a node that is not there,
// and salvage rebuilds the index from the nodes.
func (c *LedgerCheck) evidenceIndex(tx *store.Tx) {
	idx := tx.Evidence()
	if idx == nil {
		c.Index = append(c.Index, "the evidence index is missing")
		return
	}
	found := map[string]bool{}
	_ = idx.ForEachBucket(func(q []byte) error {
		return idx.Bucket(q).ForEach(func(k, id []byte) error {
			want, ok := c.shown[string(id)]
			switch {
			case ok && want.quest == string(q) && want.seq == store.SeqOf(k) && !found[string(id)]:
				found[string(id)] = true
			case c.Unproven[string(id)] || c.rewritten[string(id)]:
			case ok:
				c.Index = append(c.Index, fmt.Sprintf("the evidence index of quest %s names node %s under lock sequence %d; its record says quest %s, lock sequence %d", q, id, store.SeqOf(k), want.quest, want.seq))
			default:
				c.Index = append(c.Index, fmt.Sprintf("the evidence index of quest %s names node %s, which is not a locked node with evidence in the store", q, id))
			}
			return nil
		})
	})
	for _, id := range slices.Sorted(maps.Keys(c.shown)) {
		if !found[id] && !c.Unproven[id] && !c.rewritten[id] {
			c.Index = append(c.Index, fmt.Sprintf("locked node %s has evidence but is missing from its quest's evidence index", id))
		}
	}
}

// lockedIndex maps every node of the locked index to its quest.
func lockedIndex(tx *store.Tx) map[string]string {
	locked := map[string]string{}
	_ = tx.Locked().ForEachBucket(func(q []byte) error {
		return tx.Locked().Bucket(q).ForEach(func(_, id []byte) error {
			locked[string(id)] = string(q)
			return nil
		})
	})
	return locked
}

// nodes checks every node: a terminal one must match its last record;
// none may have left a status the ledger locked. It returns the nodes
// present.
func (c *LedgerCheck) nodes(tx *store.Tx, schema uint64, locked map[string]string, rules Rules) map[string]bool {
	present := map[string]bool{}
	nc := tx.Nodes().Cursor()
	for k, raw := nc.First(); k != nil; k, raw = nc.Next() {
		var n struct {
			ID        string        `json:"id"`
			Quest     string        `json:"quest"`
			Role      string        `json:"role"`
			Status    domain.Status `json:"status"`
			ClaimHash string        `json:"claim_hash"`
			Evidence  string        `json:"evidence"`
			LockSeq   uint64        `json:"lock_seq"`
		}
		if err := json.Unmarshal(raw, &n); err != nil {
			c.Rotten = append(c.Rotten, fmt.Sprintf("node record %s does not decode (%v): it was damaged (`questbox salvage` drops it and records the loss)", domain.NodeID(store.SeqOf(k)), err))
			present[domain.NodeID(store.SeqOf(k))] = true
			c.unread = true
			continue
		}
		present[n.ID] = true
		c.tally(tx, n.Quest, n.ID, n.Status)
		r, has := c.Last[n.ID]
		if !n.Status.Terminal() {
			if has && r.Status.Terminal() && !c.Unproven[n.ID] {
				c.Problem("node %s is %s, but ledger record %d locked it as %s", n.ID, n.Status, r.Seq, r.Status)
			}
			continue
		}
		c.locked++
		if n.LockSeq != 0 && rules.ShownEvidence(&domain.Node{Role: n.Role, Status: n.Status, Evidence: n.Evidence}) {
			c.shown[n.ID] = evidenceEntry{quest: n.Quest, seq: n.LockSeq}
		}
		if c.Unproven[n.ID] {
			continue
		}
		switch {
		case !has:
			c.Problem("locked node %s (%s) has no ledger record", n.ID, n.Status)
		case r.Status != n.Status:
			c.Problem("locked node %s is %s but ledger record %d says %s", n.ID, n.Status, r.Seq, r.Status)
			c.rewritten[n.ID] = true
		case r.ClaimHash != n.ClaimHash:
			c.Problem("locked node %s: claim hash differs from ledger record %d", n.ID, r.Seq)
			c.rewritten[n.ID] = true
		case schema >= 2 && r.NodeHash == "":
			c.Problem("locked node %s: ledger record %d carries no hash of the node", n.ID, r.Seq)
		case r.NodeHash != "" && r.NodeHash != ledger.NodeHash(raw):
			c.Problem("locked node %s was rewritten after it locked: its stored record does not match the hash in ledger record %d", n.ID, r.Seq)
			c.rewritten[n.ID] = true
		}
		if _, ok := locked[n.ID]; !ok && !c.rewritten[n.ID] {
			c.Index = append(c.Index, fmt.Sprintf("locked node %s is missing from its quest's locked index", n.ID))
		}
	}
	return present
}

// tally counts node id of quest with status as the engine reads it: a
// pending record with a running entry is running (Rules.OverlayDispatch).
func (c *LedgerCheck) tally(tx *store.Tx, quest, id string, status domain.Status) {
	if status == domain.Pending {
		rb := tx.Running()
		if rb.Get(store.RunningKey(quest, id)) != nil || rb.Get([]byte(id)) != nil {
			status = domain.Running
		}
	}
	m := c.statuses[quest]
	if m == nil {
		m = map[domain.Status]int{}
		c.statuses[quest] = m
	}
	m[status]++
}

// counts checks every quest's counts, as the engine reads them (its
// running entries laid over its record, Rules.OverlayDispatch), against its
// nodes. The tick decides by the counts alone whether a quest has work
// left, deferred nodes to bring back or proposals for its owner: counts
// out of step with the nodes (a quest page of another commit) would
// finish a quest with work pending, or leave deferred nodes deferred for
// ever. Salvage counts them again from the nodes.
//
// They are compared only when nothing else was found: a node that does
// not decode, an index entry of a missing node, a locked node rewritten
// each put the counts out of step too, and the first finding says what
// happened (a rewrite the ledger proves is not index damage).
func (c *LedgerCheck) counts(tx *store.Tx, rules Rules) {
	if c.unread || len(c.Rotten)+len(c.Index)+len(c.Problems) > 0 {
		return
	}
	running := tx.Running().Cursor()
	_ = tx.Quests().ForEach(func(k, raw []byte) error {
		id := string(k)
		var q domain.Quest
		if err := records.DecodeQuest(raw, &q); err != nil {
			c.Rotten = append(c.Rotten, fmt.Sprintf("quest record %s does not decode (%v)", id, err))
			return nil
		}
		rules.OverlayDispatch(running, &q)
		want := c.statuses[id]
		for _, st := range slices.Sorted(maps.Keys(union(q.Counts, want))) {
			if q.Counts.Get(st) != want[st] {
				c.Index = append(c.Index, fmt.Sprintf("quest %s counts %d %s nodes, but %d of its nodes are %s", id, q.Counts.Get(st), st, want[st], st))
			}
		}
		return nil
	})
}

// union is the set of the statuses a counts and the keys of b.
func union(a domain.StatusCounts, b map[domain.Status]int) map[domain.Status]bool {
	u := make(map[domain.Status]bool, len(domain.Statuses)+len(b))
	for _, k := range domain.Statuses {
		if a.Get(k) != 0 {
			u[k] = true
		}
	}
	for k := range b {
		u[k] = true
	}
	return u
}

// SealLedger is the migration to schema 2: it binds every locked node into
// the ledger by the hash of its stored record. Records written before
// schema 2 carry no such hash, so it is added to each locked node's last
// record and the ledger is chained again from there.
//
// The migration trusts the store as it is at upgrade time: a node
// rewritten before the upgrade is sealed as rewritten. It first checks the
// ledger under the old rules (chain, status and claim hash of every locked
// node); if that finds a problem it seals nothing, so Verify keeps
// reporting the break instead of the upgrade hiding it.
func SealLedger(tx *store.Tx, rules Rules) error {
	c := CheckLedger(tx, 1, rules)
	if len(c.Problems) > 0 || len(c.Rotten) > 0 {
		return nil
	}
	return reseal(tx, c.Last)
}

// reseal sets NodeHash on the last record of every locked node that lacks
// it and chains the ledger again from the first record it changed.
func reseal(tx *store.Tx, last map[string]ledger.Last) error {
	lb, nodes := store.AppendOnly(tx.Ledger()), tx.Nodes()
	var keys [][]byte
	_ = lb.ForEach(func(k, _ []byte) error {
		keys = append(keys, slices.Clone(k))
		return nil
	})
	prev, changed := "", false
	for _, k := range keys {
		var r ledger.Record
		if _, err := store.GetJSON(lb, k, &r); err != nil {
			return err
		}
		if l, ok := last[r.Node]; ok && l.Seq == r.Seq && r.Status.Terminal() && r.NodeHash == "" {
			key, err := records.NodeKey(r.Node)
			if err != nil {
				return err
			}
			if raw := nodes.Get(key); raw != nil {
				r.NodeHash, changed = ledger.NodeHash(raw), true
			}
		}
		if changed {
			r.Prev = prev
			r.Hash = r.Digest()
			if err := store.PutJSON(lb, k, r); err != nil {
				return err
			}
		}
		prev = r.Hash
	}
	return tx.Meta().Put(store.KeyLedgerHead, []byte(prev))
}
