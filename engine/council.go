package engine

// Councils (docs/design.md, "Councils"): an owner turn of a quest with a
// council is two phases. In its design phase the owner does not run an
// agent: it moves pending -> council_pending and spawns its members (one
// node per reviewer and judge, relation council_of, each with its own
// provider), which run concurrently, each under the ratchet. When every
// member is terminal the engine (not a model) merges their answers by
// rule (gates.MergeCouncil) and the merged actions are the owner's run
// phase, validated and applied exactly like a v2 owner's (ownerActions).
//
// How the tick finds a sitting council without scanning: the owner in
// council_pending is Quest.Queued[queuedCouncil], and its members are
// found through the quest's hypothesis index, their hypotheses being a
// function of the owner, the sitting and the member's place
// (memberHypothesis); between two saves of the quest, the tick takes the
// sitting from the engine's memory of it instead (tickSitting). A
// council sits again (a new sitting, new members)
// when every judge abstained; each such sitting uses one of the owner's
// tries.

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/store"
	"github.com/questbox/questbox/gates"
)

// queuedCouncil is the key of Quest.Queued naming the quest's owner in
// council_pending, if any.
const queuedCouncil = "council"

// Rule ids of the facts a council leaves on its owner.
// RuleCouncilDissent is the rule of the fact that keeps a council
// member's dissent on its owner: its Where is the member's id, its Actual
// the dissent. The faces read a member's dissent from it.
const RuleCouncilDissent = "council-dissent"

const (
	ruleCouncil       = "council"        // how the council decided
	ruleCouncilAdvice = "council-advice" // an action proposed but not applied
)

// isMember reports whether role is a council member's.
func isMember(role string) bool { return role == RoleReviewer || role == RoleJudge }

// memberHypothesis is the hypothesis of member i (0-based) of role of the
// council of owner at its sitting (1-based).
func memberHypothesis(owner *Node, role string, i, of, sitting int) string {
	what := "review the owner's decision"
	if isGateRole(owner.Role) {
		what = fmt.Sprintf("judge whether the %s phase's work may pass", owner.Phase)
	}
	return fmt.Sprintf("%s %d of %d on the council of %s %s, sitting %d: %s", role, i+1, of, owner.Role, owner.ID, sitting, what)
}

// councilSeat is one member of a sitting council.
type councilSeat struct {
	role, provider, hyp string
}

// seats lists the members of the council of owner at its sitting:
// reviewers first, then judges.
func seats(q *Quest, owner *Node, sitting int) []councilSeat {
	var out []councilSeat
	for i, p := range q.CouncilReviewers {
		out = append(out, councilSeat{RoleReviewer, p, memberHypothesis(owner, RoleReviewer, i, len(q.CouncilReviewers), sitting)})
	}
	for i, p := range q.CouncilJudges {
		out = append(out, councilSeat{RoleJudge, p, memberHypothesis(owner, RoleJudge, i, len(q.CouncilJudges), sitting)})
	}
	return out
}

// sitting is the council sitting an owner (or a phase gate) is in: one
// more than the sittings that decided (each leaves a PASS or a FAIL
// attempt; consent attempts do not count): its record counts them
// (Node.Sittings), and a record that holds its whole log (before schema
// 9) has them in it.
func sitting(owner *Node) int {
	if owner.AttemptCount == 0 {
		return 1 + domain.SittingsIn(owner.Attempts)
	}
	return 1 + owner.Sittings
}

// openCouncil starts owner's design phase: pending -> council_pending,
// and one pending member node per seat.
func (t *txn) openCouncil(q *Quest, owner *Node) error {
	if owner.Role == RoleOwner {
		owner.Phase = PhaseDesign // a gate keeps the phase it closes
	}
	if err := t.Move(q, owner, CouncilPending, fmt.Sprintf("design phase: a council of %d reviewer(s) and %d judge(s) sits", len(q.CouncilReviewers), len(q.CouncilJudges))); err != nil {
		return err
	}
	for _, s := range seats(q, owner, sitting(owner)) {
		m, dup, err := t.NewNode(q, owner, s.role, s.hyp, Pending, EdgeCouncilOf)
		if err != nil {
			return err
		}
		if dup {
			return fmt.Errorf("BUG: council member %q of owner %s exists already as %s", s.hyp, owner.ID, m.ID)
		}
		m.Provider, m.Phase = s.provider, PhaseDesign
		if err := t.SaveNode(m); err != nil {
			return err
		}
	}
	return nil
}

// members returns the member nodes of the sitting council of owner, read
// for their status only (nodeHead), in seat order. A seat whose node is
// missing (a salvaged store) is skipped.
func (t *txn) members(q *Quest, owner *Node) ([]*Node, error) {
	return t.membersAt(q, seatKeys(q, owner))
}

// seatKeys are the hypothesis keys of the seats of owner's council at
// its sitting, in seat order.
func seatKeys(q *Quest, owner *Node) [][]byte {
	return keysOf(seats(q, owner, sitting(owner)))
}

// keysOf are the hypothesis keys of seats, in seat order.
func keysOf(seats []councilSeat) [][]byte {
	keys := make([][]byte, len(seats))
	for i, s := range seats {
		keys[i] = hypKey(s.hyp)
	}
	return keys
}

// membersAt is members, the seats given by their hypothesis keys.
func (t *txn) membersAt(q *Quest, keys [][]byte) ([]*Node, error) {
	hb := subRO(t.tx, bHyps, q.ID)
	if hb == nil {
		return nil, nil
	}
	out := make([]*Node, 0, len(keys))
	for _, k := range keys {
		id := hb.Get(k)
		if id == nil {
			continue
		}
		m, err := t.NodeHead(string(id))
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
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

// sittingMembers is membersAt for the seats of so, a sitting owner: each
// seat's member is found by the id so remembers for it when the node of
// that id is the seat's member (of q, a child of the owner, in the seat's
// role, with the seat's hypothesis), else through the quest's hypothesis
// index, as membersAt finds it (and so's entry then learns the ids).
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
	out := make([]*Node, 0, len(so.seats))
	var hb *store.Bucket
	var learnt []string
	for i := range so.seats {
		if i < len(so.ids) && so.ids[i] != "" {
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
			learnt = make([]string, len(so.seats))
			for j, m := range out {
				learnt[j] = m.ID
			}
		}
		id := hb.Get(so.keys[i])
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
	if learnt != nil && so.raw != nil {
		// Entries are never changed once kept: a copy learns the ids.
		e := *so
		e.ids = learnt
		t.e.sittings.put(q.ID, &e)
	}
	return out, nil
}

// rememberedMember is the member of seat i by the id so remembers, or nil
// when that id names no node, or one that is not the seat's member any
// more. next says that the member's record is the one after the record
// read last (see sittingMembers).
func (t *txn) rememberedMember(q *Quest, so *sittingOwner, i int, next bool) (*Node, error) {
	seat := so.seats[i]
	// What the seat says of its member: strings the head takes instead
	// of copies of the record's bytes when they match.
	like := nodeHead{ID: so.ids[i], Quest: q.ID, Parent: so.owner.ID, Role: seat.role, Hypothesis: seat.hyp, Provider: seat.provider}
	m, ok, err := (*Node)(nil), false, error(nil)
	if next {
		m, ok, err = t.NextNodeHead(so.ids[i], &like)
	}
	if !ok && err == nil {
		var raw []byte
		if raw, err = t.NodeRecord(so.ids[i]); err == nil {
			m, err = t.HeadOf(so.ids[i], raw, &like)
		}
	}
	switch {
	case err == nil && m.Quest == q.ID && m.Parent == so.owner.ID && m.Role == seat.role && m.Hypothesis == seat.hyp:
		return m, nil
	case err != nil && !errors.Is(err, ErrNotFound):
		return nil, err
	}
	return nil, nil
}

// sittingOwners is the engine's memory of the owners of the sitting
// councils, by quest (a quest has at most one council sitting), so that
// the tick does not decode each owner's whole record (its attempts give
// its sitting) and work out its seats' hypothesis keys once a tick for
// every council: a sitting owner's record does not change while its
// members run.
//
// What it holds is correct by construction: an entry keeps the owner's
// record, byte for byte, with what was derived from those bytes alone
// (the decoded node, the seats' keys for the council's make-up), and it
// is used only when the record in the store is the same bytes and the
// quest's council the same make-up. Any change of the owner (a new
// sitting's attempt, a decision) changes its record, and the entry is
// read again. So a transaction rolled back, or an entry left from an
// older state, can cost a read, never a wrong answer; nothing needs to be
// handed over at commit. It is trimmed to the active quests (trim), as
// the pendingView is.
type sittingOwners struct {
	mu sync.Mutex // guards m
	m  map[string]*sittingOwner
}

// sittingOwner is a sitting council's owner as decoded from raw, with the
// hypothesis keys of its seats at its sitting for a council of reviewers
// and judges. Once in sittingOwners, nothing of it changes.
type sittingOwner struct {
	raw               []byte
	owner             *Node
	reviewers, judges int
	seats             []councilSeat
	keys              [][]byte
	// ids are the members' node ids by seat ("" where the hypothesis
	// index named none), as the index named them when this entry was
	// read (nil until then): sittingMembers checks each before using it.
	ids []string
	// ancestors are the nodes above the owner's members, as their
	// prompts show them (the owner, then the nodes above it), when the
	// owner has no parent: then they are the owner's record's alone.
	// Nil when it has one (the prompt reads them, materialMemo).
	ancestors []PromptNode
	// at is the whole sitting as the committed store holds it at one
	// revision of its quest, handed over by the write that saved that
	// revision (sittingOf) or kept by a tick that read it (tickSitting);
	// nil when neither did.
	at *sittingAt
}

// sittingAt is a sitting as its quest's records stood at revision rev of
// the quest: the members' heads in seat order (as sittingMembers reads
// them), with their records' own statuses (no running entry laid over
// them).
type sittingAt struct {
	rev   uint64
	heads []Node
}

// get returns quest's entry when it was made from raw and the council of
// reviewers and judges, else nil.
func (so *sittingOwners) get(quest string, raw []byte, reviewers, judges int) *sittingOwner {
	so.mu.Lock()
	e := so.m[quest]
	so.mu.Unlock()
	if e == nil || e.reviewers != reviewers || e.judges != judges || !bytes.Equal(e.raw, raw) {
		return nil
	}
	return e
}

// atRev returns quest's entry when it holds the sitting at revision rev
// of the quest (sittingAt), for a council of reviewers and judges, else
// nil.
func (so *sittingOwners) atRev(quest string, rev uint64, reviewers, judges int) *sittingOwner {
	so.mu.Lock()
	e := so.m[quest]
	so.mu.Unlock()
	if e == nil || e.at == nil || e.at.rev != rev || e.reviewers != reviewers || e.judges != judges {
		return nil
	}
	return e
}

// withAt is a copy of e, quest q's entry, that keeps the members ms of
// its sitting as read at q's revision (sittingAt), or nil when they
// cannot be kept. A member's running entry is taken off its head (headOf
// laid it over a pending record: a running status with the entry's run
// as its only run); a head whose record says running keeps nothing.
func (e *sittingOwner) withAt(q *Quest, ms []*Node) *sittingOwner {
	if e.raw == nil {
		return nil // not an entry kept by its record's bytes
	}
	heads := make([]Node, len(ms))
	for i, m := range ms {
		heads[i] = *m
		if m.Status == Running {
			if len(m.Runs) != 1 {
				return nil
			}
			heads[i].Status, heads[i].Runs = Pending, nil
		}
	}
	c := *e
	c.at = &sittingAt{rev: q.Rev, heads: heads}
	return &c
}

// putAt keeps e, made by withAt, as quest's entry unless the entry holds
// a sitting of a later revision; the ids of its members an entry of the
// same record learnt since (sittingMembers) are kept.
func (so *sittingOwners) putAt(quest string, e *sittingOwner) {
	so.mu.Lock()
	defer so.mu.Unlock()
	cur := so.m[quest]
	if cur != nil && cur.at != nil && cur.at.rev > e.at.rev {
		return
	}
	if cur != nil && cur.ids != nil && e.ids == nil && cur.reviewers == e.reviewers && cur.judges == e.judges && bytes.Equal(cur.raw, e.raw) {
		c := *e
		c.ids = cur.ids
		e = &c
	}
	if so.m == nil {
		so.m = map[string]*sittingOwner{}
	}
	so.m[quest] = e
}

// put keeps e as quest's entry.
func (so *sittingOwners) put(quest string, e *sittingOwner) {
	so.mu.Lock()
	defer so.mu.Unlock()
	if so.m == nil {
		so.m = map[string]*sittingOwner{}
	}
	so.m[quest] = e
}

// trim drops the quests that are not active, once it holds more quests
// than are active.
func (so *sittingOwners) trim(active []*Quest) {
	so.mu.Lock()
	defer so.mu.Unlock()
	trimToActive(so.m, active)
}

// trimToActive drops from m, a memory by quest, the quests that are not
// active, once it holds more quests than are active.
func trimToActive[V any](m map[string]V, active []*Quest) {
	if len(m) <= len(active) {
		return
	}
	keep := make(map[string]bool, len(active))
	for _, q := range active {
		keep[q.ID] = true
	}
	for id := range m {
		if !keep[id] {
			delete(m, id)
		}
	}
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
	if e := t.e.sittings.get(q.ID, raw, r, j); e != nil {
		return e, nil
	}
	owner, err := t.Node(id)
	if err != nil {
		return nil, err
	}
	seats := seats(q, owner, sitting(owner))
	e := &sittingOwner{owner: owner, reviewers: r, judges: j, seats: seats, keys: keysOf(seats)}
	if owner.Parent == "" {
		var d PromptData
		if _, err := readAncestorsFrom(t.tx, owner.ID, owner, &d); err != nil {
			return nil, err
		}
		e.ancestors = slices.Clip(d.Ancestors)
	}
	if owner.Status != Pending {
		// A pending record is overlaid with the running index
		// (readNode): it is more than its bytes, and not kept. A
		// sitting owner is council_pending.
		e.raw = bytes.Clone(raw)
		t.e.sittings.put(q.ID, e)
	}
	return e, nil
}

// tickSitting is sitting for the tick's turn of q: the owner's entry
// and its members' heads. When this transaction has changed nothing of q
// (pristine) and the engine knows the sitting at q's revision (sittingAt:
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
// reaches the memory. The pendingView rests on the same (pendingview.go).
func (t *txn) tickSitting(q *Quest) (*sittingOwner, []*Node, error) {
	pristine := t.Pristine(q)
	if pristine {
		if e := t.e.sittings.atRev(q.ID, q.Rev, len(q.CouncilReviewers), len(q.CouncilJudges)); e != nil {
			ms := make([]*Node, len(e.at.heads))
			for i := range e.at.heads {
				m := t.AllocHead()
				*m = e.at.heads[i]
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
		if e := so.withAt(q, ms); e != nil {
			t.e.sittings.putAt(q.ID, e)
		}
	}
	return so.withoutAt(), ms, nil
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
	return so.withAt(q, ms)
}

// withoutAt is so without its sitting's heads (so.at), which were read at
// another revision of the quest.
func (so *sittingOwner) withoutAt() *sittingOwner {
	if so.at == nil {
		return so
	}
	c := *so
	c.at = nil
	return &c
}

// overlayHead lays the running index over a member's head taken from a
// sitting's entry, as headOf lays it over a head read from its record.
func (t *txn) overlayHead(n *Node) {
	if n.Status != Pending {
		return
	}
	key := t.Claim(store.AppendRunningKey(t.Spare(len(n.Quest)+1+len(n.ID)), n.Quest, n.ID))
	if run := get(&t.curRunning, t.tx.Running(), key); run != nil {
		setRunning(n, run)
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
	owner := so.owner
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
		// marks m running. A head of the entry (so.at) is that already,
		// and never changes.
		if so.at != nil {
			prompts[i].node = &so.at.heads[i]
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
	return t.decide(q, full)
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
// again (so.ancestors, or materialMemo.KnowParent for an owner with a
// parent).
func (r *tickRound) dispatchMember(q *Quest, so *sittingOwner, m *Node, mp *memberPrompt) error {
	t, owner := r.t, so.owner
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
	if m.Parent == owner.ID && so.ancestors != nil {
		// The nodes above the member are its owner's entry's (shared by
		// the sitting's members, read only).
		if err := r.e.memberSource(t.opt, t.tx, &t.material, q, owner, so.ancestors, &mp.src); err != nil {
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

// decide merges the answers of owner's council, every member being
// terminal. When nobody who decides answered, the owner goes back to
// pending (its turn comes again, with a new sitting) using a try;
// otherwise the merged actions are its run phase and it locks.
func (t *txn) decide(q *Quest, owner *Node) error {
	ms, err := t.members(q, owner)
	if err != nil {
		return err
	}
	var votes []gates.Vote
	var facts []gates.Fact
	for _, head := range ms {
		m, err := t.Node(head.ID)
		if err != nil {
			return err
		}
		v := gates.Vote{Role: m.Role, Member: m.ID}
		if m.Status == Explored && m.Evidence != "" {
			a, f := gates.ParseMemberAnswer(m.Role, []byte(m.Evidence))
			if len(f) == 0 {
				v.Answer = &a
				if d := strings.TrimSpace(a.Dissent); d != "" {
					facts = append(facts, gates.Fact{Rule: RuleCouncilDissent, Level: gates.Review, Where: m.ID,
						Expected: fmt.Sprintf("the council's decision (%s %s on %s dissents)", m.Role, m.ID, q.ProviderFor(m)), Actual: truncate(d, 500)})
				}
			}
		}
		if v.Answer == nil {
			facts = append(facts, gates.Fact{Rule: ruleCouncil, Level: gates.Review, Where: fmt.Sprintf("%s %s", m.Role, m.ID),
				Expected: "a vote", Actual: fmt.Sprintf("abstained (%s)", m.Status)})
		}
		votes = append(votes, v)
	}
	d := gates.MergeCouncil(votes)
	for _, a := range d.Advisory {
		facts = append(facts, gates.Fact{Rule: ruleCouncilAdvice, Level: gates.Review, Where: fmt.Sprintf("%s %s", a.Action, strings.TrimSpace(a.Node+" "+a.Hypothesis)),
			Expected: "advice, shown and not applied", Actual: describeAction(a)})
	}
	facts = append(facts, gates.Fact{Rule: ruleCouncil, Level: gates.Review, Where: "merge", Expected: "a decision by rule", Actual: d.Why})
	owner.Facts = facts
	owner.Feedback = Feedback(facts)
	if !d.Decided {
		owner.Outcome = "FAIL"
		owner.AddAttempt(Attempt{At: t.now, Outcome: "FAIL", Facts: facts, Feedback: d.Why, TryUsed: true})
		if err := t.Emit(Event{Kind: KindVerdict, Quest: q.ID, Node: owner.ID, Role: owner.Role, Outcome: "FAIL", Facts: facts, Feedback: owner.Feedback, RootCause: ruleCouncil, Reason: d.Why}); err != nil {
			return err
		}
		return t.FailTry(q, owner, "FAIL")
	}
	if isGateRole(owner.Role) {
		return t.gateDecided(q, owner, d, facts)
	}
	o := &gates.OwnerAnswer{Evidence: councilEvidence(d), Actions: d.Actions}
	owner.Phase = PhaseRun
	owner.Outcome = "PASS"
	owner.ClaimHash = gates.ClaimHash([]byte(o.Evidence))
	owner.AddAttempt(Attempt{At: t.now, Outcome: "PASS", Facts: facts, ClaimHash: owner.ClaimHash})
	if err := t.Emit(Event{Kind: KindVerdict, Quest: q.ID, Node: owner.ID, Role: owner.Role, Outcome: "PASS", Facts: facts, ClaimHash: owner.ClaimHash, Reason: d.Why}); err != nil {
		return err
	}
	return t.Pass(q, owner, nil, o, "PASS")
}

// councilEvidence is the owner's evidence after a council: how it
// decided and what it applies.
func councilEvidence(d gates.Decision) string {
	var b strings.Builder
	fmt.Fprintf(&b, "council: %s.", d.Why)
	if d.Verdict != "" {
		fmt.Fprintf(&b, " verdict: %s.", d.Verdict)
	}
	if len(d.Actions) == 0 {
		b.WriteString(" No action applies.")
	}
	for _, a := range d.Actions {
		b.WriteString(" Applies: " + describeAction(a) + ".")
	}
	return b.String()
}

// describeAction is an action in one line.
func describeAction(a gates.Action) string {
	s := a.Action
	for _, f := range []string{a.Node, a.Role, a.Hypothesis, a.Summary, a.Reason} {
		if f != "" {
			s += " " + truncate(f, 200)
		}
	}
	return s
}

// MemberPass locks a council member that answered: its answer, encoded
// as its role answers (gates.MemberAnswer.Encode), is its evidence, its
// verdict source (or "advice" for a reviewer) its verdict; the reply
// goes to the owner (council_reply).
func (t *txn) MemberPass(q *Quest, n *Node, m *gates.MemberAnswer) error {
	n.Claim = nil
	if err := t.Move(q, n, Passed, "gate PASS"); err != nil {
		return err
	}
	n.Evidence = string(m.Encode(n.Role))
	n.Verdict = m.VerdictSource
	if n.Verdict == "" {
		n.Verdict = "advice"
	}
	if err := t.Move(q, n, Explored, "council member answered"); err != nil {
		return err
	}
	if err := t.Ledger(n, "PASS", n.Facts); err != nil {
		return err
	}
	if n.Parent != "" {
		return t.Edge(q, n.ID, n.Parent, EdgeCouncilReply)
	}
	return nil
}

// StillRunning keeps Quest.Running naming a running node while a council
// sits: when the member it named ends, another running member takes its
// place (members run concurrently; Running names one of them).
func (t *txn) StillRunning(q *Quest) error {
	if q.Running != "" || q.Queued[queuedCouncil] == "" {
		return nil
	}
	_, ms, err := t.sitting(q)
	if err != nil {
		return err
	}
	for _, m := range ms {
		if m.Status == Running {
			q.Running = m.ID
			t.Track(q)
			return nil
		}
	}
	return nil
}

// memberContractPart is the contract part of a council member's prompt
// (d.Parts.Contract, before a gate's note): the end of the material, then
// the member's output contract. A reviewer's and a judge's are made once
// (memberContracts), not once for each member's prompt.
func memberContractPart(role string) string {
	if c, ok := memberContracts[role]; ok {
		return c
	}
	return councilMaterialEnd + memberContract(role)
}

// memberContracts are memberContractPart of a reviewer and of a judge,
// never changed.
var memberContracts = map[string]string{
	RoleReviewer: councilMaterialEnd + memberContract(RoleReviewer),
	RoleJudge:    councilMaterialEnd + memberContract(RoleJudge),
}

// memberContract is the output contract of a council member of role.
func memberContract(role string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "You are a %s on the owner's council. You propose; the engine merges the council's answers by rule. Finish your answer with exactly one fenced ```json block:\n```json\n", role)
	b.WriteString(`{"confidence": 0.8,` + "\n")
	b.WriteString(` "actions": [{"action": "promote", "node": "n4"},` + "\n")
	b.WriteString(`             {"action": "abort", "node": "n5", "reason": "duplicate of n4"},` + "\n")
	b.WriteString(`             {"action": "spawn", "hypothesis": "a new hypothesis", "role": "poc"},` + "\n")
	b.WriteString(`             {"action": "finish", "summary": "the quest's answer"}],` + "\n")
	if role == RoleJudge {
		b.WriteString(` "dissent": "what you disagree with, or an empty string",` + "\n")
		b.WriteString(` "verdict_source": "pass" | "revise",` + "\n")
		b.WriteString(` "citations": [{"source": "evidence", "quote": "exact words of the material above"}]}` + "\n```\n")
		b.WriteString("An action applies when a strict majority of the judges proposes it; a finish counts only with pass.\n")
		b.WriteString("A pass must quote the material above word for word; a pass without such a quote counts as revise.\n")
	} else {
		b.WriteString(` "dissent": "what you disagree with, or an empty string",` + "\n")
		b.WriteString(` "notes": "what the judges should weigh"}` + "\n```\n")
		b.WriteString("With judges on the council, your actions are advice; without, only what every reviewer proposes applies, never a finish.\n")
	}
	b.WriteString("Unknown fields, missing fields or anything else is a FAIL.\n")
	return b.String()
}

// councilMaterialEnd ends the material of a member's prompt: what comes
// before it is the evidence a judge's quotes must occur in.
const councilMaterialEnd = "\n---\n"

// councilEvidenceOf is the evidence a member was given: its prompt up to
// the end of the material.
func councilEvidenceOf(prompt string) string {
	before, _, _ := strings.Cut(prompt, councilMaterialEnd)
	return before
}

// memberAllowed says why a council member may not use provider name, or
// "": every member runs an agent of its own, so never external.
func memberAllowed(name string) string {
	if name == ProviderExternal {
		return "a council member needs a provider that runs (not external)"
	}
	return ""
}

// CouncilProviders assigns providers to a council of r reviewers and j
// judges: member i of a kind takes the i-th provider of its list
// (reviewers, judges), cycling; an empty list gives every member of that
// kind fallback (the quest's provider).
func CouncilProviders(r, j int, reviewers, judges []string, fallback string) (rs, js []string) {
	pick := func(n int, list []string) []string {
		out := make([]string, 0, n)
		for i := range n {
			if len(list) == 0 {
				out = append(out, fallback)
			} else {
				out = append(out, list[i%len(list)])
			}
		}
		return out
	}
	return pick(r, reviewers), pick(j, judges)
}

// checkCouncil says what is wrong with the council of s, if anything.
func (e *Engine) checkCouncil(s *QuestSpec, add func(format string, args ...any)) {
	if len(s.CouncilReviewers)+len(s.CouncilJudges) == 0 {
		if len(s.PhaseGates) > 0 {
			add("phase gates (%s) need a council", strings.Join(s.PhaseGates, ","))
		}
		return
	}
	if s.Mode == ModeSolo {
		add("a council decides the owner's turns, and mode solo has no owner: use mode team")
	}
	if len(s.CouncilReviewers) > maxCouncil || len(s.CouncilJudges) > maxCouncil {
		add("a council has at most %d reviewers and %d judges", maxCouncil, maxCouncil)
	}
	seen := map[string]bool{}
	for _, p := range slices.Concat(s.CouncilReviewers, s.CouncilJudges) {
		if seen[p] {
			continue
		}
		seen[p] = true
		switch {
		case memberAllowed(p) != "":
			add("council provider %q: %s", p, memberAllowed(p))
		case !e.HasProvider(p):
			add("council provider %q is not configured", p)
		}
	}
	for _, g := range s.PhaseGates {
		if !slices.Contains(s.Roles, g) || g == RoleOwner {
			add("phase gate %q is not a worker role of the quest (%s)", g, strings.Join(s.Roles, ","))
		}
	}
}

// maxCouncil bounds each kind of member of a council.
const maxCouncil = 9

// disciplineMember applies the judge discipline (docs/design.md, "Judge
// discipline") to a member's answer with the prompt it was given: a judge's
// pass whose quotes are not in the material counts as revise, the facts say
// why.
func disciplineMember(res *result, prompt string) {
	m, facts := res.member.Discipline(councilEvidenceOf(prompt))
	res.member = &m
	res.facts = append(res.facts, facts...)
	if len(facts) > 0 {
		res.feedback = Feedback(res.facts)
	}
}

// CouncilConfig names the providers of council members (the config's
// [council]): see CouncilProviders.
type CouncilConfig struct {
	Reviewers []string
	Judges    []string
}

// ParseCouncil reads a council's make-up, "reviewer:R,judge:J" (either
// part may be left out, in any order; "" is no council).
func ParseCouncil(s string) (reviewers, judges int, err error) {
	seen := map[string]bool{}
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		kind, num, ok := strings.Cut(part, ":")
		n, cerr := strconv.Atoi(strings.TrimSpace(num))
		kind = strings.TrimSpace(kind)
		switch {
		case !ok || cerr != nil || n < 0 || n > maxCouncil:
			return 0, 0, fmt.Errorf("council %q: %q is not KIND:N with N from 0 to %d (e.g. reviewer:2,judge:1): %w", s, part, maxCouncil, ErrInvalid)
		case kind != RoleReviewer && kind != RoleJudge:
			return 0, 0, fmt.Errorf("council %q: %q is not reviewer or judge: %w", s, kind, ErrInvalid)
		case seen[kind]:
			return 0, 0, fmt.Errorf("council %q: %s is given twice: %w", s, kind, ErrInvalid)
		}
		seen[kind] = true
		if kind == RoleReviewer {
			reviewers = n
		} else {
			judges = n
		}
	}
	return reviewers, judges, nil
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
	s.CouncilReviewers, s.CouncilJudges = CouncilProviders(reviewers, judges, rl, jl, s.Provider)
}
