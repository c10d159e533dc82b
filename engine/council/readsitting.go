package council

// How the tick reads a sitting council: the owner in council_pending is
// Quest.Queued[Queued], and its members are found through the quest's
// hypothesis index, their hypotheses being a function of the owner, the
// sitting and the member's place (MemberHypothesis); between two saves of
// the quest, the tick takes the sitting from the engine's memory of it
// instead (TickSitting).

import (
	"bytes"
	"errors"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/records"
)

// SittingReader is what reading a sitting council asks of one engine
// transaction: the records as the tick reads them and the engine's memory
// of the sittings (Sittings), whose entries keep A with an owner. Heads it
// returns are the transaction's, read only.
type SittingReader[A any] interface {
	// NodeRecord is node id's stored record, read through the
	// transaction's node cursor (valid until the transaction writes the
	// nodes bucket).
	NodeRecord(id string) ([]byte, error)
	// Node reads a node whole; NodeHead reads it for its status and
	// request only (no attempts, no answer).
	Node(id string) (*domain.Node, error)
	NodeHead(id string) (*domain.Node, error)
	// NextHeadLike is the engine's NextNodeHead, and HeadOfLike its
	// HeadOf, with like, what the caller expects the head to hold,
	// passed by value: a pointer passed through an interface escapes to
	// the heap, and a tick reads a council's members by the hundred.
	NextHeadLike(id string, like records.NodeHead) (n *domain.Node, ok bool, err error)
	HeadOfLike(id string, raw []byte, like records.NodeHead) (*domain.Node, error)
	// AllocHead returns a zero Node carved from the transaction's slabs.
	AllocHead() *domain.Node
	// OverlayHead lays the running index over a member's head taken from
	// a sitting's entry, as HeadOf lays it over a head read from its
	// record.
	OverlayHead(n *domain.Node)
	// Pristine reports whether the transaction has changed nothing of q.
	Pristine(q *domain.Quest) bool
	// HypKey is the key of hyp in the hypothesis index (normalised);
	// HypIndex is quest's index, nil when it has none.
	HypKey(hyp string) []byte
	HypIndex(quest string) HypIndex
	// Sittings is the engine's memory of the sittings.
	Sittings() *Sittings[A]
	// SittingAncestors are the nodes above the members of owner, which
	// has no parent, as their prompts show them (the owner, then the
	// nodes above it).
	SittingAncestors(owner *domain.Node) (A, error)
}

// HypIndex is a quest's hypothesis index: Get is the id of the node whose
// hypothesis has key (SittingReader.HypKey), nil when none has it. One
// read of a sitting looks the index up once for all its seats.
type HypIndex interface {
	Get(key []byte) []byte
}

// KeysOf are the hypothesis keys of seats, in seat order.
func KeysOf[A any](t SittingReader[A], seats []Seat) [][]byte {
	keys := make([][]byte, len(seats))
	for i, s := range seats {
		keys[i] = t.HypKey(s.Hyp)
	}
	return keys
}

// ReadSitting returns the owner of q's sitting council, as its entry, and
// its members. The entry is the engine's (Sittings): the caller reads it
// and never changes it nor saves its owner.
func ReadSitting[A any](t SittingReader[A], q *domain.Quest) (*SittingOwner[A], []*domain.Node, error) {
	so, err := ReadSittingOwner(t, q)
	if err != nil {
		return nil, nil, err
	}
	ms, err := SittingMembers(t, q, so, true)
	if err != nil {
		return nil, nil, err
	}
	return so, ms, nil
}

// SittingMembers is Members for the seats of so, a sitting owner: each
// seat's member is found by the id so remembers for it when the node of
// that id is the seat's member (of q, a child of the owner, in the seat's
// role, with the seat's hypothesis), else through the quest's hypothesis
// index, as Members finds it (and so's entry then learns the ids).
//
// Why a remembered id gives the node the index names: the index maps a
// seat's hypothesis (normalised) to the one node of the quest that has it
// (the engine's NewNode never creates a second one; a hypothesis index
// entry is never changed or removed), and the node read by the id has
// that very hypothesis. An id remembered from a transaction that was
// rolled back names no node, or another one: it fails the check and the
// index is read.
//
// A sitting's members were created one after the other (the first
// sitting's right after their owner), so their records follow each other
// in the nodes bucket: a member is read with a step of the node cursor
// (NextHeadLike) when it is the record after the one read before it, the
// owner's when afterOwner says that the caller has just read the owner's
// record (ReadSittingOwner) with no write since.
func SittingMembers[A any](t SittingReader[A], q *domain.Quest, so *SittingOwner[A], afterOwner bool) ([]*domain.Node, error) {
	out := make([]*domain.Node, 0, len(so.Seats))
	var hb HypIndex
	var learnt []string
	for i := range so.Seats {
		if i < len(so.IDs) && so.IDs[i] != "" {
			// No write comes between the reads of this loop.
			next := (i == 0 && afterOwner) || (i > 0 && len(out) == i)
			m, err := rememberedMember(t, q, so, i, next)
			if err != nil {
				return nil, err
			}
			if m != nil {
				out = append(out, m)
				continue
			}
		}
		if hb == nil {
			if hb = t.HypIndex(q.ID); hb == nil {
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
		t.Sittings().Put(q.ID, &e)
	}
	return out, nil
}

// rememberedMember is the member of seat i by the id so remembers, or nil
// when that id names no node, or one that is not the seat's member any
// more. next says that the member's record is the one after the record
// read last (see SittingMembers).
func rememberedMember[A any](t SittingReader[A], q *domain.Quest, so *SittingOwner[A], i int, next bool) (*domain.Node, error) {
	seat := so.Seats[i]
	// What the seat says of its member: strings the head takes instead
	// of copies of the record's bytes when they match.
	like := records.NodeHead{ID: so.IDs[i], Quest: q.ID, Parent: so.Owner.ID, Role: seat.Role, Hypothesis: seat.Hyp, Provider: seat.Provider}
	m, ok, err := (*domain.Node)(nil), false, error(nil)
	if next {
		m, ok, err = t.NextHeadLike(so.IDs[i], like)
	}
	if !ok && err == nil {
		var raw []byte
		if raw, err = t.NodeRecord(so.IDs[i]); err == nil {
			m, err = t.HeadOfLike(so.IDs[i], raw, like)
		}
	}
	switch {
	case err == nil && m.Quest == q.ID && m.Parent == so.Owner.ID && m.Role == seat.Role && m.Hypothesis == seat.Hyp:
		return m, nil
	case err != nil && !errors.Is(err, domain.ErrNotFound):
		return nil, err
	}
	return nil, nil
}

// ReadSittingOwner is the owner of q's sitting council (read whole, as
// records.ReadNode reads it) with its seats' keys, from the engine's
// memory when the owner's record is the one it decoded (Sittings).
func ReadSittingOwner[A any](t SittingReader[A], q *domain.Quest) (*SittingOwner[A], error) {
	id := q.Queued[Queued]
	raw, err := t.NodeRecord(id)
	if err != nil {
		return nil, err
	}
	r, j := len(q.CouncilReviewers), len(q.CouncilJudges)
	if e := t.Sittings().Get(q.ID, raw, r, j); e != nil {
		return e, nil
	}
	owner, err := t.Node(id)
	if err != nil {
		return nil, err
	}
	seats := Seats(q, owner, Sitting(owner))
	e := &SittingOwner[A]{Owner: owner, Reviewers: r, Judges: j, Seats: seats, Keys: KeysOf(t, seats)}
	if owner.Parent == "" {
		if e.Ancestors, err = t.SittingAncestors(owner); err != nil {
			return nil, err
		}
	}
	if owner.Status != domain.Pending {
		// A pending record is overlaid with the running index
		// (records.ReadNode): it is more than its bytes, and not kept. A
		// sitting owner is council_pending.
		e.Raw = bytes.Clone(raw)
		t.Sittings().Put(q.ID, e)
	}
	return e, nil
}

// TickSitting is ReadSitting for the tick's turn of q: the owner's entry
// and its members' heads. When this transaction has changed nothing of q
// (pristine) and the engine knows the sitting at q's revision (SittingAt:
// handed over by the write that saved q at it, or kept by an earlier
// tick), the heads are the entry's, with the running index laid over them
// as HeadOf does (OverlayHead), and no record is read; otherwise they are
// read (ReadSitting) and, from a pristine q, kept for the next tick.
//
// Why a revision gives the records: every write of a node record (the
// engine's SaveNode, NewNode) saves its quest, which raises Quest.Rev, and
// a dispatch writes the running index only (records.OverlayRunning); so
// one revision of a quest that committed is one state of its nodes'
// records. A write hands its sitting over only once it committed
// (SittingOf, the engine's engineWrite.committed), and a tick is a
// transaction of its own (the engine's update, never grouped with other
// writes): what it reads of a quest it has not changed is committed. A
// transaction that was rolled back never reaches the memory. The engine's
// tickmem.PendingView rests on the same.
func TickSitting[A any](t SittingReader[A], q *domain.Quest) (*SittingOwner[A], []*domain.Node, error) {
	pristine := t.Pristine(q)
	if pristine {
		if e := t.Sittings().AtRev(q.ID, q.Rev, len(q.CouncilReviewers), len(q.CouncilJudges)); e != nil {
			ms := make([]*domain.Node, len(e.At.Heads))
			for i := range e.At.Heads {
				m := t.AllocHead()
				*m = e.At.Heads[i]
				t.OverlayHead(m)
				ms[i] = m
			}
			return e, ms, nil
		}
	}
	so, ms, err := ReadSitting(t, q)
	if err != nil {
		return nil, nil, err
	}
	if pristine {
		if e := so.WithAt(q, ms); e != nil {
			t.Sittings().PutAt(q.ID, e)
		}
	}
	return so.WithoutAt(), ms, nil
}

// SittingOf works out, for a quest the transaction saves with revision
// q.Rev, its sitting council as the commit will leave it, for the
// engine's view update: the next tick then reads none of its records
// (TickSitting). Nil when no council sits or a record cannot be read
// (the tick then reads them and meets the damage).
func SittingOf[A any](t SittingReader[A], q *domain.Quest) *SittingOwner[A] {
	if q.Queued[Queued] == "" {
		return nil
	}
	so, ms, err := ReadSitting(t, q)
	if err != nil {
		return nil
	}
	return so.WithAt(q, ms)
}
