package api

// The words the views use for statuses, outcomes and event kinds, typed so
// that a client decides on them with this package's constants instead of
// the engine's. Their JSON is the plain string; a test pins that every
// engine value has its word here and that the words agree.

// QuestStatus is a quest's status.
type QuestStatus string

// Quest statuses (docs/design.md, "Quests, nodes and edges").
const (
	QuestActive     QuestStatus = "active"
	QuestStopped    QuestStatus = "stopped"
	QuestDone       QuestStatus = "done"
	QuestTerminated QuestStatus = "terminated"
)

// NodeStatus is a node's place in the ratchet (docs/design.md, "The
// ratchet").
type NodeStatus string

// Node statuses; the terminal ones are explored, growing, aborted and
// exhausted.
const (
	NodeProposed        NodeStatus = "proposed"
	NodePending         NodeStatus = "pending"
	NodeRunning         NodeStatus = "running"
	NodeDeferred        NodeStatus = "deferred"
	NodeAwaitingConsent NodeStatus = "awaiting_consent"
	NodePassed          NodeStatus = "passed"
	NodeExplored        NodeStatus = "explored"
	NodeGrowing         NodeStatus = "growing"
	NodeAborted         NodeStatus = "aborted"
	NodeExhausted       NodeStatus = "exhausted"
	NodeCouncilPending  NodeStatus = "council_pending" // an owner waiting for its council
	NodeRevising        NodeStatus = "revising"        // a Team whose revision runs
	NodeTeamBlocked     NodeStatus = "team_blocked"    // a Team rejected past its max_revisions (terminal)
)

// NodeStatuses lists every node status in display order (the order of a
// quest's counts).
var NodeStatuses = []NodeStatus{NodeProposed, NodePending, NodeRunning, NodeDeferred, NodeAwaitingConsent,
	NodePassed, NodeExplored, NodeGrowing, NodeAborted, NodeExhausted, NodeCouncilPending, NodeRevising, NodeTeamBlocked}

// Outcome is the gate's word on a submission.
type Outcome string

// Outcomes of a submission (Verdict.Outcome, Node.Outcome, a verdict
// event's outcome).
const (
	OutcomePass     Outcome = "PASS"
	OutcomeFail     Outcome = "FAIL"
	OutcomeReview   Outcome = "REVIEW"
	OutcomeDeferred Outcome = "DEFERRED" // a network stage could not run; judged again when the network is back
)

// EventKind is what an event is about (docs/design.md, "Events and the
// outbox").
type EventKind string

// Event kinds.
const (
	KindNode    EventKind = "node"
	KindVerdict EventKind = "verdict"
	KindConsent EventKind = "consent"
	KindQuest   EventKind = "quest"
	KindDevice  EventKind = "device"
)

// Relation is what an edge says of its two nodes (docs/design.md, "Quests,
// nodes and edges", "Councils and Teams").
type Relation string

// Edge relations.
const (
	RelSpawned      Relation = "spawned"
	RelGrewTo       Relation = "grew_to"
	RelAbortedTo    Relation = "aborted_to"
	RelProposedFrom Relation = "proposed_from"
	RelPromoted     Relation = "promoted"
	RelCouncilOf    Relation = "council_of"    // owner -> council member
	RelCouncilReply Relation = "council_reply" // council member -> owner
	RelStagesInto   Relation = "stages_into"   // Team -> its planner
	RelMakesPlan    Relation = "makes_plan"    // planner -> executer
	RelExecutes     Relation = "executes"      // executer -> accepter
	RelRejectsTo    Relation = "rejects_to"    // accepter -> the revision's stage node
	RelAcceptsTo    Relation = "accepts_to"    // accepter -> Team
)

// Relations lists every edge relation.
var Relations = []Relation{RelSpawned, RelGrewTo, RelAbortedTo, RelProposedFrom, RelPromoted,
	RelCouncilOf, RelCouncilReply, RelStagesInto, RelMakesPlan, RelExecutes, RelRejectsTo, RelAcceptsTo}

// ProviderExternal is the provider that spawns nothing: an outside agent
// pulls work with `next` and answers with `submit` (docs/design.md,
// "Providers and the worker's answer").
const ProviderExternal = "external"
