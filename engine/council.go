package engine

// Councils (docs/design.md, "Councils"): their rules are package
// engine/council's; here is how the tick reads a sitting council and
// dispatches its members. The owner in council_pending is
// Quest.Queued[queuedCouncil], and its members are found through the
// quest's hypothesis index, their hypotheses being a function of the
// owner, the sitting and the member's place (council.MemberHypothesis);
// between two saves of the quest, the tick takes the sitting from the
// engine's memory of it instead (tickSitting).

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	"github.com/questbox/questbox/engine/council"
	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
)

// sittingOwners is the engine's memory of the owners of the sitting
// councils (council.Sittings), each kept with the nodes above its members
// as their prompts show them; sittingOwner is one of its entries.
type (
	sittingOwners = council.Sittings[[]PromptNode]
	sittingOwner  = council.SittingOwner[[]PromptNode]
)

// keysOf are the hypothesis keys of seats, in seat order.
func keysOf(seats []council.Seat) [][]byte {
	keys := make([][]byte, len(seats))
	for i, s := range seats {
		keys[i] = hypKey(s.Hyp)
	}
	return keys
}

// sitting returns the owner of q's sitting council, as its entry, and its
// members. The entry is the engine's (sittingOwners): the caller reads it
// and never changes it nor saves its owner.
func (t *txn) sitting(q *Quest) (*sittingOwner, []*Node, error) {
	so, err := t.sittingOwner(q)
	if err != nil {
		return nil, nil, err
	}
	ms, err := t.sittingMembers(q, so, true)
	if err != nil {
		return nil, nil, err
	}
	return so, ms, nil
}

// sittingMembers is council.Members for the seats of so, a sitting owner: each
// seat's member is found by the id so remembers for it when the node of
// that id is the seat's member (of q, a child of the owner, in the seat's
// role, with the seat's hypothesis), else through the quest's hypothesis
// index, as council.Members finds it (and so's entry then learns the ids).
//
// Why a remembered id gives the node the index names: the index maps a
// seat's hypothesis (normalised) to the one node of the quest that has it
// (newNode never creates a second one; a hypothesis index entry is never
// changed or removed), and the node read by the id has that very
// hypothesis. An id remembered from a transaction that was rolled back
// names no node, or another one: it fails the check and the index is
// read.
//
// A sitting's members were created one after the other (the first
// sitting's right after their owner), so their records follow each other
// in the nodes bucket: a member is read with a step of the node cursor
// (nextNodeHead) when it is the record after the one read before it, the
// owner's when afterOwner says that the caller has just read the owner's
// record (sittingOwner) with no write since.
func (t *txn) sittingMembers(q *Quest, so *sittingOwner, afterOwner bool) ([]*Node, error) {
	out := make([]*Node, 0, len(so.Seats))
	var hb *store.Bucket
	var learnt []string
	for i := range so.Seats {
		if i < len(so.IDs) && so.IDs[i] != "" {
			// No write comes between the reads of this loop.
			next := (i == 0 && afterOwner) || (i > 0 && len(out) == i)
			m, err := t.rememberedMember(q, so, i, next)
			if err != nil {
				return nil, err
			}
			if m != nil {
				out = append(out, m)
				continue
			}
		}
		if hb == nil {
			if hb = subRO(t.tx, bHyps, q.ID); hb == nil {
				return nil, nil
			}
		}
		if learnt == nil {
			learnt = make([]string, len(so.Seats))
			for j, m := range out {
				learnt[j] = m.ID
			}
		}
		id := hb.Get(so.Keys[i])
		if id == nil {
			continue
		}
		m, err := t.NodeHead(string(id))
		if err != nil {
			return nil, err
		}
		learnt[i] = m.ID
		out = append(out, m)
	}
	if learnt != nil && so.Raw != nil {
		// Entries are never changed once kept: a copy learns the ids.
		e := *so
		e.IDs = learnt
		t.e.sittings.Put(q.ID, &e)
	}
	return out, nil
}

// rememberedMember is the member of seat i by the id so remembers, or nil
// when that id names no node, or one that is not the seat's member any
// more. next says that the member's record is the one after the record
// read last (see sittingMembers).
func (t *txn) rememberedMember(q *Quest, so *sittingOwner, i int, next bool) (*Node, error) {
	seat := so.Seats[i]
	// What the seat says of its member: strings the head takes instead
	// of copies of the record's bytes when they match.
	like := records.NodeHead{ID: so.IDs[i], Quest: q.ID, Parent: so.Owner.ID, Role: seat.Role, Hypothesis: seat.Hyp, Provider: seat.Provider}
	m, ok, err := (*Node)(nil), false, error(nil)
	if next {
		m, ok, err = t.NextNodeHead(so.IDs[i], &like)
	}
	if !ok && err == nil {
		var raw []byte
		if raw, err = t.NodeRecord(so.IDs[i]); err == nil {
			m, err = t.HeadOf(so.IDs[i], raw, &like)
		}
	}
	switch {
	case err == nil && m.Quest == q.ID && m.Parent == so.Owner.ID && m.Role == seat.Role && m.Hypothesis == seat.Hyp:
		return m, nil
	case err != nil && !errors.Is(err, ErrNotFound):
		return nil, err
	}
	return nil, nil
}

// sittingOwner is the owner of q's sitting council (read whole, as
// readNode reads it) with its seats' keys, from the engine's memory when
// the owner's record is the one it decoded (sittingOwners).
func (t *txn) sittingOwner(q *Quest) (*sittingOwner, error) {
	id := q.Queued[queuedCouncil]
	raw, err := t.NodeRecord(id)
	if err != nil {
		return nil, err
	}
	r, j := len(q.CouncilReviewers), len(q.CouncilJudges)
	if e := t.e.sittings.Get(q.ID, raw, r, j); e != nil {
		return e, nil
	}
	owner, err := t.Node(id)
	if err != nil {
		return nil, err
	}
	seats := council.Seats(q, owner, council.Sitting(owner))
	e := &sittingOwner{Owner: owner, Reviewers: r, Judges: j, Seats: seats, Keys: keysOf(seats)}
	if owner.Parent == "" {
		var d PromptData
		if _, err := readAncestorsFrom(t.tx, owner.ID, owner, &d); err != nil {
			return nil, err
		}
		e.Ancestors = slices.Clip(d.Ancestors)
	}
	if owner.Status != Pending {
		// A pending record is overlaid with the running index
		// (readNode): it is more than its bytes, and not kept. A
		// sitting owner is council_pending.
		e.Raw = bytes.Clone(raw)
		t.e.sittings.Put(q.ID, e)
	}
	return e, nil
}

// tickSitting is sitting for the tick's turn of q: the owner's entry
// and its members' heads. When this transaction has changed nothing of q
// (pristine) and the engine knows the sitting at q's revision (council.SittingAt:
// handed over by the write that saved q at it, or kept by an earlier
// tick), the heads are the entry's, with the running index laid over them
// as headOf does, and no record is read; otherwise they are read
// (sitting) and, from a pristine q, kept for the next tick.
//
// Why a revision gives the records: every write of a node record
// (saveNode, newNode) saves its quest, which raises Quest.Rev, and a
// dispatch writes the running index only (overlayRunning); so one
// revision of a quest that committed is one state of its nodes' records.
// A write hands its sitting over only once it committed
// (engineWrite.committed), and a tick is a transaction of its own
// (update, never grouped with other writes): what it reads of a quest it
// has not changed is committed. A transaction that was rolled back never
// reaches the memory. The tickmem.PendingView rests on the same.
func (t *txn) tickSitting(q *Quest) (*sittingOwner, []*Node, error) {
	pristine := t.Pristine(q)
	if pristine {
		if e := t.e.sittings.AtRev(q.ID, q.Rev, len(q.CouncilReviewers), len(q.CouncilJudges)); e != nil {
			ms := make([]*Node, len(e.At.Heads))
			for i := range e.At.Heads {
				m := t.AllocHead()
				*m = e.At.Heads[i]
				t.overlayHead(m)
				ms[i] = m
			}
			return e, ms, nil
		}
	}
	so, ms, err := t.sitting(q)
	if err != nil {
		return nil, nil, err
	}
	if pristine {
		if e := so.WithAt(q, ms); e != nil {
			t.e.sittings.PutAt(q.ID, e)
		}
	}
	return so.WithoutAt(), ms, nil
}

// sittingOf works out, for a quest this transaction saves with revision
// q.Rev, its sitting council as the commit will leave it, for the view's
// update (viewOf): the next tick then reads none of its records
// (tickSitting). Nil when no council sits or a record cannot be read
// (the tick then reads them and meets the damage).
func (t *txn) sittingOf(q *Quest) *sittingOwner {
	if q.Queued[queuedCouncil] == "" {
		return nil
	}
	so, ms, err := t.sitting(q)
	if err != nil {
		return nil
	}
	return so.WithAt(q, ms)
}

// overlayHead lays the running index over a member's head taken from a
// sitting's entry, as headOf lays it over a head read from its record.
func (t *txn) overlayHead(n *Node) {
	if n.Status != Pending {
		return
	}
	key := t.Claim(store.AppendRunningKey(t.Spare(len(n.Quest)+1+len(n.ID)), n.Quest, n.ID))
	if run := get(&t.curRunning, t.tx.Running(), key); run != nil {
		records.SetRunning(n, run)
	}
}

// council is a quest's turn while its council sits: its pending members
// dispatch (each takes a slot: they run concurrently), nothing else does;
// once every member is terminal, the council decides.
func (r *tickRound) council(q *Quest) error {
	t := r.t
	so, ms, err := t.tickSitting(q)
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
// as the tick reads them (sitting).
func (t *txn) SittingMembers(q *Quest) ([]*Node, error) {
	_, ms, err := t.sitting(q)
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
