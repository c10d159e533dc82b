package engine

// Councils (docs/design.md, "Councils"): their rules are package
// engine/council's, and so is how the tick reads a sitting council
// (council.TickSitting); here is how the tick dispatches its members.

import (
	"fmt"

	"github.com/questbox/questbox/engine/council"
)

// sittingOwners is the engine's memory of the owners of the sitting
// councils (council.Sittings), each kept with the nodes above its members
// as their prompts show them; sittingOwner is one of its entries.
type (
	sittingOwners = council.Sittings[[]PromptNode]
	sittingOwner  = council.SittingOwner[[]PromptNode]
)

// council is a quest's turn while its council sits: its pending members
// dispatch (each takes a slot: they run concurrently), nothing else does;
// once every member is terminal, the council decides.
func (r *tickRound) council(q *Quest) error {
	t := r.t
	so, ms, err := council.TickSitting(t, q)
	if err != nil {
		return err
	}
	owner := so.Owner
	// The members' running entries are put later, in key order with the
	// plain quests' (flushRunning), when the turn reads no running entry
	// after its first dispatch: each member's prompt reads its owner's
	// material and the nodes above its parent, the owner, and the first
	// member's read keeps both in the transaction's memo (materialMemo,
	// at the quest's revision; a dispatch changes neither), where the
	// next members' find them. A member under another parent (a salvaged
	// store) reads the nodes above it, which may be one dispatched
	// before it: the entries kept so far are put, and its own at once.
	if childrenOf(owner, ms) {
		t.laterRunning = true
		defer func() { t.laterRunning = false }()
	} else if err := t.FlushRunning(); err != nil {
		return err
	}
	done := true
	var prompts []memberPrompt // one allocation for the council's dispatches
	over, looked := "", false
	for i, m := range ms {
		if m.Status.Terminal() {
			continue
		}
		done = false
		if m.Status != Pending {
			continue
		}
		if r.slots <= 0 {
			r.starved = true
			continue
		}
		if !looked {
			// A budget used up (the wall clock too) dispatches no
			// member; the council decides with the votes it has.
			over, looked = t.OverBudget(q), true
		}
		if over != "" {
			if err := r.refuse(q, m, over); err != nil {
				return err
			}
			continue
		}
		if prompts == nil {
			prompts = make([]memberPrompt, len(ms))
		}
		// The member as its prompt shows it, pending: the dispatch
		// marks m running. A head of the entry (so.At) is that already,
		// and never changes.
		if so.At != nil {
			prompts[i].node = &so.At.Heads[i]
		} else {
			prompts[i].node = t.AllocHead()
			*prompts[i].node = *m
		}
		if err := r.dispatchMember(q, so, m, &prompts[i]); err != nil || q.Status != QuestActive {
			return err
		}
	}
	if !done {
		return nil
	}
	// The sitting's owner is the engine's, read only: the decision
	// changes a copy read whole.
	full, err := t.Node(owner.ID)
	if err != nil {
		return err
	}
	return council.Decide(t, q, full)
}

// childrenOf reports whether every node of ms is a child of owner.
func childrenOf(owner *Node, ms []*Node) bool {
	for _, m := range ms {
		if m.Parent != owner.ID {
			return false
		}
	}
	return true
}

// dispatchMember dispatches council member m of q, with mp (its node
// set, the rest zero) for its prompt, reading what its prompt shows in
// the tick's transaction (the material it judges is the owner's, as it
// is now); its run renders the prompt from that (memberPrompt). so is m's owner, read whole for its sitting: the
// member's prompt shows it and the nodes above it without reading it
// again (so.Ancestors, or the material memo's KnowParent for an owner with a
// parent).
func (r *tickRound) dispatchMember(q *Quest, so *sittingOwner, m *Node, mp *memberPrompt) error {
	t, owner := r.t, so.Owner
	// m is a head (members), which carries the member's own provider:
	// its seat's.
	name := q.ProviderFor(m)
	if stopped, err := r.egressStop(q, name); stopped || err != nil {
		return err
	}
	prov := r.provider(name)
	if prov == nil {
		return t.SetQuestStatus(q, QuestStopped, fmt.Sprintf("provider %q of council member %s is not configured; fix the config and `quest resume %s`", name, m.ID, q.ID))
	}
	// What the prompt shows of the store is read here, in the tick's
	// transaction; its run renders it (memberPrompt).
	if m.Parent == owner.ID && so.Ancestors != nil {
		// The nodes above the member are its owner's entry's (shared by
		// the sitting's members, read only).
		if err := r.e.memberSource(t.opt, t.tx, &t.material, q, owner, so.Ancestors, &mp.src); err != nil {
			return err
		}
		return r.queue(q, m, name, prov, nil, mp)
	}
	if m.Parent == owner.ID {
		if err := t.material.KnowParent(promptRecords(), t.tx, q, owner); err != nil {
			return err
		}
	}
	src, err := r.e.readPromptSource(t.opt, t.tx, &t.material, q, m)
	if err != nil {
		return err
	}
	mp.src = src
	return r.queue(q, m, name, prov, nil, mp)
}

// StillRunning keeps Quest.Running naming a running node while a council
// sits (council.StillRunning).
func (t *txn) StillRunning(q *Quest) error { return council.StillRunning(t, q) }

// SittingMembers are the members of q's sitting council, in seat order,
// as the tick reads them (council.ReadSitting).
func (t *txn) SittingMembers(q *Quest) ([]*Node, error) {
	_, ms, err := council.ReadSitting(t, q)
	return ms, err
}

// disciplineMember applies the judge discipline (docs/design.md, "Judge
// discipline") to a member's answer with the prompt it was given: a judge's
// pass whose quotes are not in the material counts as revise, the facts say
// why.
func disciplineMember(res *result, prompt string) {
	m, facts := res.member.Discipline(council.EvidenceOf(prompt))
	res.member = &m
	res.facts = append(res.facts, facts...)
	if len(facts) > 0 {
		res.feedback = Feedback(res.facts)
	}
}

// SetCouncil gives s a council of reviewers and judges, their providers
// from the engine's Options.Council (cycling; the quest's provider when
// the list is empty) unless override names one for every member of a kind
// ("reviewer" or "judge" -> provider). Call it after s.Provider is final.
// NewQuest validates the result.
func (e *Engine) SetCouncil(s *QuestSpec, reviewers, judges int, override map[string]string) {
	c := e.conf().Council
	rl, jl := c.Reviewers, c.Judges
	if p := override[RoleReviewer]; p != "" {
		rl = []string{p}
	}
	if p := override[RoleJudge]; p != "" {
		jl = []string{p}
	}
	s.CouncilReviewers, s.CouncilJudges = council.Providers(reviewers, judges, rl, jl, s.Provider)
}
