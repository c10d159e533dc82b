package prompt

import (
	"fmt"
	"slices"
	"strings"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/store"
)

// Material is what a quest's owner decides on, as its prompt and
// its council members' prompts show it: the proposals (oldest first, at
// most 50) and the locked nodes with their evidence (newest first, within
// the evidence cap).
type Material struct {
	rev uint64 // the quest's revision it was read at
	cap int    // the evidence cap it was read with

	proposals     []agent.Proposal
	proposalNodes []Node
	locked        []Node
	// The prompt's parts: d.Parts.Proposals and d.Parts.Locked.
	proposalsPart, lockedPart string
}

// The proposals part of the owner's prompt: its heading, and the whole
// part when there are none.
const (
	proposalsHeading = "\nProposals waiting for your decision (oldest first):\n"
	noProposalsPart  = proposalsHeading + "(none: spawn new work or finish the quest)\n"
)

// ReadMaterial reads q's owner's material in tx, the locked nodes'
// evidence within evidenceCap bytes (> 0).
func ReadMaterial(r Records, tx *store.Tx, q *domain.Quest, evidenceCap int) (*Material, error) {
	m := &Material{rev: q.Rev, cap: evidenceCap}
	if err := m.readProposals(r, tx, q); err != nil {
		return nil, err
	}
	m.proposalsPart = proposalsPart(m.proposals)
	more, err := m.readLocked(r, tx, q, evidenceCap)
	if err != nil {
		return nil, err
	}
	m.lockedPart = lockedPart(m.locked, evidenceCap, more)
	return m, nil
}

// readProposals reads the quest's proposals, oldest first, at most 50.
func (m *Material) readProposals(r Records, tx *store.Tx, q *domain.Quest) error {
	// The quest's counts say whether it has proposals (as the tick's
	// undefer trusts them for deferred nodes): most owner turns and
	// councils of a long quest have none, and the index is not opened.
	if q.Counts.Get(domain.Proposed) == 0 {
		return nil
	}
	pb := store.SubRO(tx, store.Proposed, q.ID)
	if pb == nil {
		return nil
	}
	c := pb.Cursor()
	for k, v := c.First(); k != nil && len(m.proposals) < 50; k, v = c.Next() {
		p, err := r.Node(tx, string(v))
		if err != nil {
			return err
		}
		m.proposals = append(m.proposals, agent.Proposal{Node: p.ID, Hypothesis: p.Hypothesis})
		m.proposalNodes = append(m.proposalNodes, Node{ID: p.ID, Role: p.Role, Status: string(p.Status), Hypothesis: p.Hypothesis, Depth: p.Depth})
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
func (m *Material) readLocked(r Records, tx *store.Tx, q *domain.Quest, evidenceCap int) (more bool, _ error) {
	left := evidenceCap
	// The evidence index (schema 7) names exactly the locked nodes the
	// prompt may show; a read-only open of an older store has none and
	// walks the locked index, passing over the nodes without evidence.
	idx, indexed := store.Locked, tx.Evidence() != nil
	if indexed {
		idx = store.Evidence
	}
	lb := store.SubRO(tx, idx, q.ID)
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
		if !indexed && r.WithoutEvidence(tx, string(v)) {
			continue
		}
		l, err := r.Node(tx, string(v))
		if err != nil {
			return false, err
		}
		if !r.ShownEvidence(l) {
			continue // a member's evidence is its vote, merged into its owner's
		}
		ev := cutEvidence(l.Evidence, min(left, max(evidenceCap/4, 1)))
		left -= len(ev)
		last = k
		m.locked = append(m.locked, Node{ID: l.ID, Role: l.Role, Status: string(l.Status), Hypothesis: l.Hypothesis,
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

// lockedPart is the locked nodes' part of the owner's prompt ("" when
// none shows evidence).
func lockedPart(locked []Node, evidenceCap int, more bool) string {
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
	lb := store.SubRO(tx, store.Locked, quest)
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

// Cap is the evidence cap m was read with.
func (m *Material) Cap() int { return m.cap }

// LockedPart is the locked nodes' part of the owner's prompt
// (Data.Parts.Locked) as m shows it.
func (m *Material) LockedPart() string { return m.lockedPart }

// Apply sets the material in req and d. The slices are copies, so that
// no two requests share one (a provider owns its request).
func (m *Material) Apply(req *agent.Request, d *Data) {
	req.Proposals = append(req.Proposals, m.proposals...)
	d.Proposals = append(d.Proposals, m.proposalNodes...)
	d.Locked = append(d.Locked, m.locked...)
	d.Parts.Proposals = m.proposalsPart
	d.Parts.Locked = m.lockedPart
}

// Memo is a write transaction's memory of the owner's material of the
// quests whose prompts it built (a field of the engine's transaction), and of the nodes above the
// nodes it built them for, so that the members of a council dispatched in one
// tick read them once between them instead of once each (docs/design.md,
// "Memory on a small box"). It lives and dies with its transaction: one
// that is rolled back, or a group commit's function that runs again, starts
// with an empty one, and nothing of it reaches another transaction. An entry
// is used only for the quest's revision it was read at (Quest.Rev) and with
// the same evidence cap, and it is forgotten as soon as the transaction
// changes one of the quest's nodes (Forget), which is the only way the
// proposals, the locked nodes and their records change. The zero value is
// empty; a nil *Memo holds nothing and keeps nothing.
type Memo struct {
	byQuest map[string]*Material
	// chains are the nodes above a node (readAncestors), by quest and
	// the node's parent: the members of a council share their owner's.
	chains map[string]map[string]*Ancestry
}

// Ancestry is what readAncestors read above a node with a given parent,
// at a quest's revision Rev: the parent's record and the nodes, nearest
// first (the parent first). Nothing in it is changed once read.
type Ancestry struct {
	Rev    uint64
	Parent *domain.Node
	Nodes  []Node
}

// KnowParent keeps, for q's revision, the nodes above a child of parent
// (parent and the nodes above it), starting from parent as the caller
// read it whole in this transaction (Records.Node), so that its children's
// prompts do not read it again: a council's owner, read for its sitting.
func (mm *Memo) KnowParent(r Records, tx *store.Tx, q *domain.Quest, parent *domain.Node) error {
	if mm == nil {
		return nil
	}
	if a := mm.chains[q.ID][parent.ID]; a != nil && a.Rev == q.Rev {
		return nil
	}
	var d Data
	p, err := ReadAncestorsFrom(r, tx, parent.ID, parent, &d)
	if err != nil {
		return err
	}
	mm.keepAncestry(q, parent.ID, &Ancestry{Rev: q.Rev, Parent: p, Nodes: d.Ancestors})
	return nil
}

// keepAncestry keeps a as the nodes above the children of parent in q.
func (mm *Memo) keepAncestry(q *domain.Quest, parent string, a *Ancestry) {
	if mm.chains == nil {
		mm.chains = map[string]map[string]*Ancestry{}
	}
	if mm.chains[q.ID] == nil {
		mm.chains[q.ID] = map[string]*Ancestry{}
	}
	mm.chains[q.ID][parent] = a
}

// readAncestors is readAncestors (prompt.go) through the memo: the nodes
// above n read once per parent and quest revision in the transaction.
// The parent is shared between the requests that use it, read only.
func (mm *Memo) readAncestors(r Records, tx *store.Tx, q *domain.Quest, n *domain.Node, d *Data) (*domain.Node, error) {
	if mm == nil || n.Parent == "" {
		return readAncestors(r, tx, n, d)
	}
	if a := mm.chains[q.ID][n.Parent]; a != nil && a.Rev == q.Rev {
		d.Ancestors = append(d.Ancestors, a.Nodes...)
		return a.Parent, nil
	}
	parent, err := readAncestors(r, tx, n, d)
	if err != nil {
		return nil, err
	}
	mm.keepAncestry(q, n.Parent, &Ancestry{Rev: q.Rev, Parent: parent, Nodes: slices.Clone(d.Ancestors)})
	return parent, nil
}

// Material returns q's material at q's revision read with evidenceCap,
// nil if the memo has none.
func (mm *Memo) Material(q *domain.Quest, evidenceCap int) *Material {
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
func (mm *Memo) put(q *domain.Quest, m *Material) {
	if mm == nil {
		return
	}
	if mm.byQuest == nil {
		mm.byQuest = map[string]*Material{}
	}
	mm.byQuest[q.ID] = m
}

// Held is what mm holds of quest, whatever its revision and cap: the
// material (nil for none) and the ancestries by parent. The engine's
// tests look into a transaction's memo through it.
func (mm *Memo) Held(quest string) (*Material, map[string]*Ancestry) {
	if mm == nil {
		return nil, nil
	}
	return mm.byQuest[quest], mm.chains[quest]
}

// Forget drops quest's material: one of its nodes changed.
func (mm *Memo) Forget(quest string) {
	if mm != nil {
		delete(mm.byQuest, quest)
		delete(mm.chains, quest)
	}
}
