package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/store"
)

// ownerMaterial is what a quest's owner decides on, as its prompt and
// its council members' prompts show it: the proposals (oldest first, at
// most 50) and the locked nodes with their evidence (newest first, within
// the evidence cap).
type ownerMaterial struct {
	rev uint64 // the quest's revision it was read at
	cap int    // the evidence cap it was read with

	proposals     []agent.Proposal
	proposalNodes []PromptNode
	locked        []PromptNode
	// The prompt's parts: d.Parts.Proposals and d.Parts.Locked.
	proposalsPart, lockedPart string
}

// The proposals part of the owner's prompt: its heading, and the whole
// part when there are none.
const (
	proposalsHeading = "\nProposals waiting for your decision (oldest first):\n"
	noProposalsPart  = proposalsHeading + "(none: spawn new work or finish the quest)\n"
)

// readOwnerMaterial reads q's owner's material in tx, the locked nodes'
// evidence within evidenceCap bytes (> 0).
func readOwnerMaterial(tx *store.Tx, q *Quest, evidenceCap int) (*ownerMaterial, error) {
	m := &ownerMaterial{rev: q.Rev, cap: evidenceCap}
	if err := m.readProposals(tx, q); err != nil {
		return nil, err
	}
	m.proposalsPart = proposalsPart(m.proposals)
	more, err := m.readLocked(tx, q, evidenceCap)
	if err != nil {
		return nil, err
	}
	m.lockedPart = lockedPart(m.locked, evidenceCap, more)
	return m, nil
}

// readProposals reads the quest's proposals, oldest first, at most 50.
func (m *ownerMaterial) readProposals(tx *store.Tx, q *Quest) error {
	// The quest's counts say whether it has proposals (as the tick's
	// undefer trusts them for deferred nodes): most owner turns and
	// councils of a long quest have none, and the index is not opened.
	if q.Counts.Get(Proposed) == 0 {
		return nil
	}
	pb := subRO(tx, bProposed, q.ID)
	if pb == nil {
		return nil
	}
	c := pb.Cursor()
	for k, v := c.First(); k != nil && len(m.proposals) < 50; k, v = c.Next() {
		p, err := readNode(tx, string(v))
		if err != nil {
			return err
		}
		m.proposals = append(m.proposals, agent.Proposal{Node: p.ID, Hypothesis: p.Hypothesis})
		m.proposalNodes = append(m.proposalNodes, PromptNode{ID: p.ID, Role: p.Role, Status: string(p.Status), Hypothesis: p.Hypothesis, Depth: p.Depth})
	}
	return nil
}

// proposalsPart is the proposals part of the owner's prompt.
func proposalsPart(proposals []agent.Proposal) string {
	if len(proposals) == 0 {
		return noProposalsPart
	}
	var b strings.Builder
	b.WriteString(proposalsHeading)
	for _, p := range proposals {
		fmt.Fprintf(&b, "- %s: %s\n", p.Node, p.Hypothesis)
	}
	return b.String()
}

// readLocked reads the quest's locked nodes that show evidence, newest
// first, their evidence within evidenceCap bytes in all; more says that
// older ones were left out.
func (m *ownerMaterial) readLocked(tx *store.Tx, q *Quest, evidenceCap int) (more bool, _ error) {
	left := evidenceCap
	// The evidence index (schema 7) names exactly the locked nodes the
	// prompt may show; a read-only open of an older store has none and
	// walks the locked index, passing over the nodes without evidence.
	idx, indexed := bLocked, tx.Evidence() != nil
	if indexed {
		idx = bEvidence
	}
	lb := subRO(tx, idx, q.ID)
	if lb == nil {
		return false, nil
	}
	c := lb.Cursor()
	var last []byte // the key of the last node shown
	for k, v := c.Last(); k != nil; k, v = c.Prev() {
		if left <= 0 {
			more = true
			break
		}
		if !indexed && withoutEvidence(tx, string(v)) {
			continue
		}
		l, err := readNode(tx, string(v))
		if err != nil {
			return false, err
		}
		if !shownEvidence(l) {
			continue // a member's evidence is its vote, merged into its owner's
		}
		ev := cutEvidence(l.Evidence, min(left, max(evidenceCap/4, 1)))
		left -= len(ev)
		last = k
		m.locked = append(m.locked, PromptNode{ID: l.ID, Role: l.Role, Status: string(l.Status), Hypothesis: l.Hypothesis,
			Verdict: l.Verdict, Evidence: ev, Depth: l.Depth})
	}
	if indexed && !more && left <= 0 {
		// The prompt says older nodes were left out when the locked
		// index has any below the last one shown, with or without
		// evidence, as the walk over the locked index said it.
		more = olderLocked(tx, q.ID, last)
	}
	return more, nil
}

// withoutEvidence reports, without decoding the node, that the locked node
// id shows no evidence: most locked nodes of a long quest are dead ends
// with none, passed over so on a store without the evidence index.
func withoutEvidence(tx *store.Tx, id string) bool {
	key, err := nodeKey(id)
	if err != nil {
		return false
	}
	role, has, ok := scanEvidence(tx.Nodes().Get(key))
	return ok && (!has || domain.IsMember(role))
}

// lockedPart is the locked nodes' part of the owner's prompt ("" when
// none shows evidence).
func lockedPart(locked []PromptNode, evidenceCap int, more bool) string {
	if len(locked) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nWhat the quest's locked nodes established (newest first, evidence capped at %d bytes):\n", evidenceCap)
	for _, l := range locked {
		verdict := l.Status
		if l.Verdict != "" {
			verdict += ", " + l.Verdict
		}
		fmt.Fprintf(&b, "- %s (%s, %s): %s\n  evidence: %s\n", l.ID, l.Role, verdict, l.Hypothesis, l.Evidence)
	}
	if more {
		b.WriteString("(older locked nodes left out: the evidence cap is reached)\n")
	}
	return b.String()
}

// olderLocked reports whether quest's locked index has a key below key.
func olderLocked(tx *store.Tx, quest string, key []byte) bool {
	lb := subRO(tx, bLocked, quest)
	if lb == nil || key == nil {
		return false
	}
	c := lb.Cursor()
	if k, _ := c.Seek(key); k == nil {
		k, _ = c.Last() // every key is below key
		return k != nil
	}
	k, _ := c.Prev()
	return k != nil
}

// shownEvidence reports whether n's evidence is shown in its quest's
// owner's prompt (and its council members'), and so has an entry in the
// evidence index: a locked node with evidence, not a council member's (a
// member's evidence is its vote, merged into its owner's).
func shownEvidence(n *Node) bool {
	return n.Status.Terminal() && n.Evidence != "" && !domain.IsMember(n.Role)
}

// indexEvidence keeps n's entry in the evidence index (schema 7) in step
// with its record, which is being saved: a locked node whose evidence
// the owner's prompt shows is under its lock sequence, as in the locked
// index. Every node write goes through saveNode, which calls it for the
// locked ones; a locked record never changes after its transaction (the
// ledger holds its hash), so this is the entry's only writer but
// migration and salvage, which derive the same from the records.
func (t *txn) indexEvidence(n *Node) error {
	if !n.Status.Terminal() || n.LockSeq == 0 {
		return nil
	}
	key := u64(n.LockSeq)
	has := subRO(t.tx, bEvidence, n.Quest)
	switch {
	case !shownEvidence(n):
		if has != nil && has.Get(key) != nil {
			return has.Delete(key)
		}
		return nil
	case has != nil && string(has.Get(key)) == n.ID:
		return nil // saved again after it locked, in the same transaction
	}
	b, err := sub(t.tx, bEvidence, n.Quest)
	if err != nil {
		return err
	}
	return b.Put(key, []byte(n.ID))
}

// buildEvidenceIndex is the migration to schema 7: it derives the
// evidence index from every quest's locked index and the locked nodes'
// records. A node the locked index names that is missing or does not
// decode is left out: Verify names it (store damage, which salvage
// repairs, rebuilding this index too), and the upgrade does not hide it.
func buildEvidenceIndex(tx *store.Tx) error {
	if _, err := tx.CreateBucketIfNotExists(bEvidence); err != nil {
		return err
	}
	locked := tx.Locked()
	return locked.ForEachBucket(func(q []byte) error {
		return locked.Bucket(q).ForEach(func(_, id []byte) error {
			n, err := readNodeRecord(tx, string(id))
			if err != nil || !shownEvidence(n) || n.LockSeq == 0 {
				return nil
			}
			b, err := sub(tx, bEvidence, string(q))
			if err != nil {
				return err
			}
			return b.Put(u64(n.LockSeq), id)
		})
	})
}

// apply sets the material in req and d. The slices are copies, so that
// no two requests share one (a provider owns its request).
func (m *ownerMaterial) apply(req *agent.Request, d *PromptData) {
	req.Proposals = append(req.Proposals, m.proposals...)
	d.Proposals = append(d.Proposals, m.proposalNodes...)
	d.Locked = append(d.Locked, m.locked...)
	d.Parts.Proposals = m.proposalsPart
	d.Parts.Locked = m.lockedPart
}

// materialMemo is a write transaction's memory of the owner's material of the
// quests whose prompts it built (a field of txn), and of the nodes above the
// nodes it built them for, so that the members of a council dispatched in one
// tick read them once between them instead of once each (docs/design.md,
// "Memory on a small box"). It lives and dies with its txn: a transaction
// that is rolled back, or a group commit's function that runs again, starts
// with an empty one, and nothing of it reaches another transaction. An entry
// is used only for the quest's revision it was read at (Quest.Rev) and with
// the same evidence cap, and it is forgotten as soon as the transaction
// changes one of the quest's nodes (txn.touch), which is the only way the
// proposals, the locked nodes and their records change. The zero value is
// empty; a nil *materialMemo holds nothing and keeps nothing.
type materialMemo struct {
	byQuest map[string]*ownerMaterial
	// chains are the nodes above a node (readAncestors), by quest and
	// the node's parent: the members of a council share their owner's.
	chains map[string]map[string]*ancestry
}

// ancestry is what readAncestors read above a node with a given parent,
// at a quest's revision.
type ancestry struct {
	rev    uint64
	parent *Node
	nodes  []PromptNode
}

// knowParent keeps, for q's revision, the nodes above a child of parent
// (parent and the nodes above it), starting from parent as the caller
// read it whole in this transaction (readNode), so that its children's
// prompts do not read it again: a council's owner, read for its sitting.
func (mm *materialMemo) knowParent(tx *store.Tx, q *Quest, parent *Node) error {
	if mm == nil {
		return nil
	}
	if a := mm.chains[q.ID][parent.ID]; a != nil && a.rev == q.Rev {
		return nil
	}
	var d PromptData
	p, err := readAncestorsFrom(tx, parent.ID, parent, &d)
	if err != nil {
		return err
	}
	mm.keepAncestry(q, parent.ID, &ancestry{rev: q.Rev, parent: p, nodes: d.Ancestors})
	return nil
}

// keepAncestry keeps a as the nodes above the children of parent in q.
func (mm *materialMemo) keepAncestry(q *Quest, parent string, a *ancestry) {
	if mm.chains == nil {
		mm.chains = map[string]map[string]*ancestry{}
	}
	if mm.chains[q.ID] == nil {
		mm.chains[q.ID] = map[string]*ancestry{}
	}
	mm.chains[q.ID][parent] = a
}

// readAncestors is readAncestors (prompt.go) through the memo: the nodes
// above n read once per parent and quest revision in the transaction.
// The parent is shared between the requests that use it, read only.
func (mm *materialMemo) readAncestors(tx *store.Tx, q *Quest, n *Node, d *PromptData) (*Node, error) {
	if mm == nil || n.Parent == "" {
		return readAncestors(tx, n, d)
	}
	if a := mm.chains[q.ID][n.Parent]; a != nil && a.rev == q.Rev {
		d.Ancestors = append(d.Ancestors, a.nodes...)
		return a.parent, nil
	}
	parent, err := readAncestors(tx, n, d)
	if err != nil {
		return nil, err
	}
	mm.keepAncestry(q, n.Parent, &ancestry{rev: q.Rev, parent: parent, nodes: slices.Clone(d.Ancestors)})
	return parent, nil
}

// get returns q's material at q's revision read with evidenceCap, nil if
// the memo has none.
func (mm *materialMemo) get(q *Quest, evidenceCap int) *ownerMaterial {
	if mm == nil {
		return nil
	}
	m := mm.byQuest[q.ID]
	if m == nil || m.rev != q.Rev || m.cap != evidenceCap {
		return nil
	}
	return m
}

// put keeps m as q's material.
func (mm *materialMemo) put(q *Quest, m *ownerMaterial) {
	if mm == nil {
		return
	}
	if mm.byQuest == nil {
		mm.byQuest = map[string]*ownerMaterial{}
	}
	mm.byQuest[q.ID] = m
}

// forget drops quest's material: one of its nodes changed.
func (mm *materialMemo) forget(quest string) {
	if mm != nil {
		delete(mm.byQuest, quest)
		delete(mm.chains, quest)
	}
}
