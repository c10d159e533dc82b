package council

import (
	"bytes"
	"sync"

	"github.com/questbox/questbox/engine/domain"
)

// Sittings is the engine's memory of the owners of the sitting councils,
// by quest (a quest has at most one council sitting), so that the tick
// does not decode each owner's whole record (its attempts give its
// sitting) and work out its seats' hypothesis keys once a tick for every
// council: a sitting owner's record does not change while its members
// run. A is what the engine keeps with an owner for its members' prompts
// (SittingOwner.Ancestors); the council never reads it. The zero value is
// an empty memory, safe for concurrent use.
//
// What it holds is correct by construction: an entry keeps the owner's
// record, byte for byte, with what was derived from those bytes alone
// (the decoded node, the seats' keys for the council's make-up), and it
// is used only when the record in the store is the same bytes and the
// quest's council the same make-up. Any change of the owner (a new
// sitting's attempt, a decision) changes its record, and the entry is
// read again. So a transaction rolled back, or an entry left from an
// older state, can cost a read, never a wrong answer; nothing needs to be
// handed over at commit. It is trimmed to the active quests (Trim), as
// the engine's view of the pending nodes is.
type Sittings[A any] struct {
	mu sync.Mutex // guards m
	m  map[string]*SittingOwner[A]
}

// SittingOwner is a sitting council's owner as decoded from Raw, with the
// hypothesis keys of its seats at its sitting for a council of Reviewers
// and Judges. Once in Sittings, nothing of it changes.
type SittingOwner[A any] struct {
	Raw               []byte
	Owner             *domain.Node
	Reviewers, Judges int
	Seats             []Seat
	Keys              [][]byte
	// IDs are the members' node ids by seat ("" where the hypothesis
	// index named none), as the index named them when this entry was
	// read (nil until then): the engine checks each before using it.
	IDs []string
	// Ancestors are the nodes above the owner's members, as their
	// prompts show them (the owner, then the nodes above it), when the
	// owner has no parent: then they are the owner's record's alone.
	// Zero when it has one (the prompt reads them).
	Ancestors A
	// At is the whole sitting as the committed store holds it at one
	// revision of its quest, handed over by the write that saved that
	// revision or kept by a tick that read it; nil when neither did.
	At *SittingAt
}

// SittingAt is a sitting as its quest's records stood at revision Rev of
// the quest: the members' heads in seat order, with their records' own
// statuses (no running entry laid over them).
type SittingAt struct {
	Rev   uint64
	Heads []domain.Node
}

// Get returns quest's entry when it was made from raw and the council of
// reviewers and judges, else nil.
func (so *Sittings[A]) Get(quest string, raw []byte, reviewers, judges int) *SittingOwner[A] {
	so.mu.Lock()
	e := so.m[quest]
	so.mu.Unlock()
	if e == nil || e.Reviewers != reviewers || e.Judges != judges || !bytes.Equal(e.Raw, raw) {
		return nil
	}
	return e
}

// AtRev returns quest's entry when it holds the sitting at revision rev
// of the quest (SittingAt), for a council of reviewers and judges, else
// nil.
func (so *Sittings[A]) AtRev(quest string, rev uint64, reviewers, judges int) *SittingOwner[A] {
	so.mu.Lock()
	e := so.m[quest]
	so.mu.Unlock()
	if e == nil || e.At == nil || e.At.Rev != rev || e.Reviewers != reviewers || e.Judges != judges {
		return nil
	}
	return e
}

// Entry returns quest's entry, whatever it was made from, or nil.
func (so *Sittings[A]) Entry(quest string) *SittingOwner[A] {
	so.mu.Lock()
	defer so.mu.Unlock()
	return so.m[quest]
}

// WithAt is a copy of e, quest q's entry, that keeps the members ms of
// its sitting as read at q's revision (SittingAt), or nil when they
// cannot be kept. A member's running entry is taken off its head (the
// engine laid it over a pending record: a running status with the
// entry's run as its only run); a head whose record says running keeps
// nothing.
func (e *SittingOwner[A]) WithAt(q *domain.Quest, ms []*domain.Node) *SittingOwner[A] {
	if e.Raw == nil {
		return nil // not an entry kept by its record's bytes
	}
	heads := make([]domain.Node, len(ms))
	for i, m := range ms {
		heads[i] = *m
		if m.Status == domain.Running {
			if len(m.Runs) != 1 {
				return nil
			}
			heads[i].Status, heads[i].Runs = domain.Pending, nil
		}
	}
	c := *e
	c.At = &SittingAt{Rev: q.Rev, Heads: heads}
	return &c
}

// WithoutAt is e without its sitting's heads (e.At), which were read at
// another revision of the quest.
func (e *SittingOwner[A]) WithoutAt() *SittingOwner[A] {
	if e.At == nil {
		return e
	}
	c := *e
	c.At = nil
	return &c
}

// PutAt keeps e, made by WithAt, as quest's entry unless the entry holds
// a sitting of a later revision; the ids of its members an entry of the
// same record learnt since are kept.
func (so *Sittings[A]) PutAt(quest string, e *SittingOwner[A]) {
	so.mu.Lock()
	defer so.mu.Unlock()
	cur := so.m[quest]
	if cur != nil && cur.At != nil && cur.At.Rev > e.At.Rev {
		return
	}
	if cur != nil && cur.IDs != nil && e.IDs == nil && cur.Reviewers == e.Reviewers && cur.Judges == e.Judges && bytes.Equal(cur.Raw, e.Raw) {
		c := *e
		c.IDs = cur.IDs
		e = &c
	}
	if so.m == nil {
		so.m = map[string]*SittingOwner[A]{}
	}
	so.m[quest] = e
}

// Put keeps e as quest's entry.
func (so *Sittings[A]) Put(quest string, e *SittingOwner[A]) {
	so.mu.Lock()
	defer so.mu.Unlock()
	if so.m == nil {
		so.m = map[string]*SittingOwner[A]{}
	}
	so.m[quest] = e
}

// Trim drops the quests that are not active, once it holds more quests
// than are active.
func (so *Sittings[A]) Trim(active []*domain.Quest) {
	so.mu.Lock()
	defer so.mu.Unlock()
	if len(so.m) <= len(active) {
		return
	}
	keep := make(map[string]bool, len(active))
	for _, q := range active {
		keep[q.ID] = true
	}
	for id := range so.m {
		if !keep[id] {
			delete(so.m, id)
		}
	}
}
