package council

import (
	"iter"
	"time"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/gates"
)

// Txn is what the council's rules ask of one engine transaction. Nodes
// it returns are the transaction's: a rule changes one and saves it
// (SaveNode, Move) within the same transaction.
type Txn interface {
	// Now is the transaction's time.
	Now() time.Time
	// Node reads a node whole; NodeHead reads it for its status and
	// request only (no attempts, no answer).
	Node(id string) (*domain.Node, error)
	NodeHead(id string) (*domain.Node, error)
	// HypNode is the id of q's node whose hypothesis is hyp (as the
	// hypothesis index normalises it), or "" when none has it.
	HypNode(quest, hyp string) string
	// FirstPending is the id of quest's oldest pending node, or "";
	// PendingNodes are the ids of its pending nodes, oldest first;
	// LockedNodes the ids of its terminal nodes, newest first.
	FirstPending(quest string) string
	PendingNodes(quest string) iter.Seq[string]
	LockedNodes(quest string) iter.Seq[string]
	// SittingMembers are the members of q's sitting council, in seat
	// order, read for their status (with their running entries).
	SittingMembers(q *domain.Quest) ([]*domain.Node, error)
	// OpenNodes are the ids of q's nodes that are not terminal: pending,
	// proposed, deferred, running and awaiting consent.
	OpenNodes(q *domain.Quest) ([]string, error)
	// NewNode creates a node of role under parent, or returns the
	// quest's node of that hypothesis with dup set.
	NewNode(q *domain.Quest, parent *domain.Node, role, hyp string, st domain.Status, rel string) (n *domain.Node, dup bool, err error)
	SaveNode(n *domain.Node) error
	// Move moves n to status to under the ratchet, saving it.
	Move(q *domain.Quest, n *domain.Node, to domain.Status, why string) error
	Edge(q *domain.Quest, from, to, rel string) error
	Emit(ev domain.Event) error
	// Track registers a changed quest to be saved at commit.
	Track(q *domain.Quest)
	Ledger(n *domain.Node, outcome string, facts []gates.Fact) error
	// Pass locks n with an answer; FailTry sends it back to pending
	// using a try (or ends it when none is left).
	Pass(q *domain.Quest, n *domain.Node, a *gates.Answer, o *gates.OwnerAnswer, outcome string) error
	FailTry(q *domain.Quest, n *domain.Node, outcome string) error
	// Feedback renders facts as the engine feeds them back to an agent
	// and shows them to humans.
	Feedback(facts []gates.Fact) string
}

// Round is what a phase gate asks of the tick's turn of a quest.
type Round interface {
	// Seatless reports whether the quest's budgets cannot seat a
	// council, ending the quest when so.
	Seatless(q *domain.Quest) (bool, error)
	// Council is the quest's turn while its council sits: it dispatches
	// the pending members and decides once every member is terminal.
	Council(q *domain.Quest) error
}
