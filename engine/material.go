package engine

import (
	"fmt"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/questbox/questbox/engine/agent"
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

// readOwnerMaterial reads q's owner's material in tx, the locked nodes'
// evidence within evidenceCap bytes (> 0).
func readOwnerMaterial(tx *bolt.Tx, q *Quest, evidenceCap int) (*ownerMaterial, error) {
	m := &ownerMaterial{rev: q.Rev, cap: evidenceCap}
	if pb := subRO(tx, bProposed, q.ID); pb != nil {
		c := pb.Cursor()
		for k, v := c.First(); k != nil && len(m.proposals) < 50; k, v = c.Next() {
			p, err := readNode(tx, string(v))
			if err != nil {
				return nil, err
			}
			m.proposals = append(m.proposals, agent.Proposal{Node: p.ID, Hypothesis: p.Hypothesis})
			m.proposalNodes = append(m.proposalNodes, PromptNode{ID: p.ID, Role: p.Role, Status: string(p.Status), Hypothesis: p.Hypothesis, Depth: p.Depth})
		}
	}
	var b strings.Builder
	b.WriteString("\nProposals waiting for your decision (oldest first):\n")
	if len(m.proposals) == 0 {
		b.WriteString("(none: spawn new work or finish the quest)\n")
	}
	for _, p := range m.proposals {
		fmt.Fprintf(&b, "- %s: %s\n", p.Node, p.Hypothesis)
	}
	m.proposalsPart = b.String()
	b.Reset()

	left, more := evidenceCap, false
	if lb := subRO(tx, bLocked, q.ID); lb != nil {
		c := lb.Cursor()
		for k, v := c.Last(); k != nil; k, v = c.Prev() {
			if left <= 0 {
				more = true
				break
			}
			if key, err := nodeKey(string(v)); err == nil {
				// Most locked nodes of a long quest are dead ends with
				// no evidence: passed over without decoding them.
				if role, has, ok := scanEvidence(tx.Bucket(bNodes).Get(key)); ok && (!has || isMember(role)) {
					continue
				}
			}
			l, err := readNode(tx, string(v))
			if err != nil {
				return nil, err
			}
			if l.Evidence == "" || isMember(l.Role) {
				continue // a member's evidence is its vote, merged into its owner's
			}
			ev := cutEvidence(l.Evidence, min(left, max(evidenceCap/4, 1)))
			left -= len(ev)
			m.locked = append(m.locked, PromptNode{ID: l.ID, Role: l.Role, Status: string(l.Status), Hypothesis: l.Hypothesis,
				Verdict: l.Verdict, Evidence: ev, Depth: l.Depth})
		}
	}
	if len(m.locked) > 0 {
		fmt.Fprintf(&b, "\nWhat the quest's locked nodes established (newest first, evidence capped at %d bytes):\n", evidenceCap)
		for _, l := range m.locked {
			verdict := l.Status
			if l.Verdict != "" {
				verdict += ", " + l.Verdict
			}
			fmt.Fprintf(&b, "- %s (%s, %s): %s\n  evidence: %s\n", l.ID, l.Role, verdict, l.Hypothesis, l.Evidence)
		}
		if more {
			b.WriteString("(older locked nodes left out: the evidence cap is reached)\n")
		}
	}
	m.lockedPart = b.String()
	return m, nil
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

// materialMemo is a write transaction's memory of the owner's material
// of the quests whose prompts it built (a field of txn), so that the
// members of a council dispatched in one tick read it once between them
// instead of once each (issue 23). It lives and dies with its txn: a
// transaction that is rolled back, or a group commit's function that
// runs again, starts with an empty one, and nothing of it reaches another
// transaction. An entry is used only for the quest's revision it was read
// at (Quest.Rev) and with the same evidence cap, and it is forgotten as
// soon as the transaction changes one of the quest's nodes (txn.touch),
// which is the only way the proposals, the locked nodes and their
// records change. The zero value is empty; a nil *materialMemo holds
// nothing and keeps nothing.
type materialMemo struct {
	byQuest map[string]*ownerMaterial
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
	}
}
