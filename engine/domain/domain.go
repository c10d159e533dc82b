package domain

import (
	"slices"
	"strconv"
	"time"

	"github.com/questbox/questbox/engine/store"
	"github.com/questbox/questbox/gates"
)

// Status is a node's place in the ratchet (docs/design.md, "The ratchet").
type Status string

// Node statuses. The terminal ones are Explored, Growing, Aborted, Exhausted.
const (
	Proposed        Status = "proposed"
	Pending         Status = "pending"
	Running         Status = "running"
	Deferred        Status = "deferred"
	AwaitingConsent Status = "awaiting_consent"
	Passed          Status = "passed"
	Explored        Status = "explored"
	Growing         Status = "growing"
	Aborted         Status = "aborted"
	Exhausted       Status = "exhausted"
	// CouncilPending is an owner in its design phase, waiting for its
	// council's members (docs/design.md, "Councils and Teams").
	CouncilPending Status = "council_pending"
	// Revising is a Team whose accepter rejected its deliverable, while
	// the revision runs.
	Revising Status = "revising"
	// TeamBlocked is a Team rejected once more than its max_revisions
	// allow: terminal, and its owner is told.
	TeamBlocked Status = "team_blocked"
)

// Statuses lists every node status in display order.
var Statuses = []Status{Proposed, Pending, Running, Deferred, AwaitingConsent, Passed, Explored, Growing, Aborted, Exhausted,
	CouncilPending, Revising, TeamBlocked}

// Terminal reports whether s is a locked status that never changes again.
func (s Status) Terminal() bool {
	switch s {
	case Explored, Growing, Aborted, Exhausted, TeamBlocked:
		return true
	}
	return false
}

// Valid reports whether s is a known status.
func (s Status) Valid() bool {
	for _, k := range Statuses {
		if s == k {
			return true
		}
	}
	return false
}

// moves is the whole status machine of the ratchet (docs/design.md, "The
// ratchet"). Aborting from any non-terminal status is handled in CanMove.
var moves = map[Status][]Status{
	Proposed:        {Pending},
	Pending:         {Running, CouncilPending, Revising},
	Running:         {Pending, Deferred, AwaitingConsent, Passed, Exhausted},
	Deferred:        {Pending},
	AwaitingConsent: {Passed, Pending, Exhausted},
	Passed:          {Explored, Growing, Aborted},
	// An owner's design phase (docs/design.md, "Councils and Teams"): its
	// council decides (passed, then explored by the merged actions), or
	// decides nothing (every judge abstained) and the owner's turn comes
	// again, using a try. A phase gate's pass at a checkpoint waits for the
	// button.
	CouncilPending: {Passed, Pending, Exhausted, AwaitingConsent},
	// A Team's own rows (package engine/team; team.MoveOK keeps them to Teams).
	Revising: {Passed, TeamBlocked},
}

// CanMove reports whether the ratchet allows a move from s to to.
func (s Status) CanMove(to Status) bool {
	if s.Terminal() || !to.Valid() {
		return false
	}
	if to == Aborted {
		return true
	}
	for _, m := range moves[s] {
		if m == to {
			return true
		}
	}
	return false
}

// QuestStatus is a quest's lifecycle state.
type QuestStatus string

// Quest statuses.
const (
	QuestActive     QuestStatus = "active"
	QuestStopped    QuestStatus = "stopped"
	QuestDone       QuestStatus = "done"
	QuestTerminated QuestStatus = "terminated"
)

// Modes of a quest (docs/design.md, "Solo and team modes").
const (
	ModeTeam = "team"
	ModeSolo = "solo"
)

// Roles a node can have. The set is extensible: a quest lists its roles.
const (
	RoleScout      = "scout"
	RolePOC        = "poc"
	RoleStrategist = "strategist"
	RoleOwner      = "owner"
	// Council members (docs/design.md, "Councils").
	RoleReviewer = "reviewer"
	RoleJudge    = "judge"
	// A Team's stages (v3.2); the Team node itself has the role of its
	// team_kind.
	RolePlanner  = "planner"
	RoleExecuter = "executer"
	RoleAccepter = "accepter"
)

// Accept modes of a Teams quest (Quest.AcceptMode).
const (
	AcceptJudge = "judge"
	AcceptHuman = "human"
)

// Stages of a Team (Node.Stage).
const (
	StagePlan   = "plan"
	StageExec   = "exec"
	StageAccept = "accept"
)

// Phases (Node.Phase): an owner's design (its council deliberates) and run
// (the merged actions apply); a phase gate names the phase it closes
// ("scout", "poc").
const (
	PhaseDesign = "design"
	PhaseRun    = "run"
)

// Edge relations (docs/design.md, "Quests, nodes and edges").
const (
	EdgeSpawned      = "spawned"
	EdgeGrewTo       = "grew_to"
	EdgeAbortedTo    = "aborted_to"
	EdgeProposedFrom = "proposed_from"
	EdgePromoted     = "promoted"
	// Councils (v3/v3.1): owner -> member, member -> owner.
	EdgeCouncilOf    = "council_of"
	EdgeCouncilReply = "council_reply"
	// Teams (v3.2).
	EdgeStagesInto = "stages_into" // Team -> its planner
	EdgeMakesPlan  = "makes_plan"  // planner -> executer
	EdgeExecutes   = "executes"    // executer -> accepter
	EdgeRejectsTo  = "rejects_to"  // accepter -> the revision's stage node
	EdgeAcceptsTo  = "accepts_to"  // accepter -> Team
)

// Limits are a quest's loop control (docs/design.md, "Loop control") and
// retry policy. A zero budget means "no runs allowed": the quest is
// terminated at its first tick.
type Limits struct {
	MaxTries     int           `json:"max_tries"`
	MaxAgentRuns int           `json:"max_agent_runs"`
	WallClock    time.Duration `json:"wall_clock"`
	TokenBudget  int           `json:"token_budget"`
	MaxStalled   int           `json:"max_stalled"`
	// OwnerEvery is, in team mode, how many proposals make the owner run.
	OwnerEvery int `json:"owner_every"`
}

// DefaultLimits are the limits used when the config says nothing.
func DefaultLimits() Limits {
	return Limits{MaxTries: 3, MaxAgentRuns: 50, WallClock: 24 * time.Hour, TokenBudget: 1_000_000, MaxStalled: 3, OwnerEvery: 3}
}

// Counters are what a quest has used so far. They survive restarts.
type Counters struct {
	AgentRuns int `json:"agent_runs"`
	Tokens    int `json:"tokens"`
	// WallUsed is the time the quest has spent active under a running
	// daemon (Engine.Serve). Time the daemon is down or the quest is
	// stopped does not count. The stored value may lag by up to an hour
	// (see engine/budget/wallclock.go); Engine.Quest and Engine.Quests report it current.
	WallUsed time.Duration `json:"wall_used"`
}

// Quest explores a direction as a growing graph of nodes (docs/design.md,
// "Quests, nodes and edges").
type Quest struct {
	ID          string      `json:"id"`
	Name        string      `json:"name"`
	Direction   string      `json:"direction"`
	Status      QuestStatus `json:"status"`
	Reason      string      `json:"reason,omitempty"`
	Mode        string      `json:"mode"`
	Roles       []string    `json:"roles"`
	Provider    string      `json:"provider"`
	Gate        string      `json:"gate"`
	Checkpoints []string    `json:"checkpoints,omitempty"`
	Limits      Limits      `json:"limits"`
	Counters    Counters    `json:"counters"`
	// Counts is the number of nodes per status, kept in step with every move
	// so that status reports never scan nodes.
	Counts StatusCounts `json:"counts"`
	// Running is the node currently running, "" if none.
	Running string `json:"running,omitempty"`
	// Queued maps a role that may have at most one pending node per quest
	// (owner, strategist) to that node, kept in step by every move so that
	// the tick never scans pending nodes.
	Queued map[string]string `json:"queued,omitempty"`
	// Stall tracks no_progress (docs/design.md, "Loop control").
	StallSig   string `json:"stall_sig,omitempty"`
	StallCount int    `json:"stall_count,omitempty"`
	// WallSession and WallMark say up to when Counters.WallUsed is counted:
	// up to WallMark on the clock of the serving session WallSession. An
	// active quest whose session is not the running one counts from that
	// session's start (see engine/budget/wallclock.go).
	WallSession uint64    `json:"wall_session,omitempty"`
	WallMark    time.Time `json:"wall_mark,omitzero"`
	// DispatchSeq is the sequence of the quest's latest run (at creation,
	// the latest run of any quest): the tick serves quests in ascending
	// order, so the one that waited longest goes first. A sequence, not a
	// time, so that a clock step cannot reorder the queue.
	DispatchSeq uint64 `json:"dispatch_seq,omitempty"`
	// Replays are pending nodes whose kept answer waits to be judged again
	// (see Claim.Replay), oldest first.
	Replays []string  `json:"replays,omitempty"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	// Fields added after schema 4 follow, in the order of questCodec's
	// table (a record written before one was added reads it as zero).

	// RoleProviders names, per role, the provider that runs that role's
	// nodes instead of Provider (docs/design.md, "Roles").
	RoleProviders map[string]string `json:"role_providers,omitempty"`
	// Egress lists the vendors the quest may send its material to
	// (docs/design.md, "Privacy egress").
	Egress []string `json:"egress,omitempty"`
	// Council lists the providers of the council's members, one entry per
	// member (`--council reviewer:R,judge:J`); both empty: no council (v2).
	CouncilReviewers []string `json:"council_reviewers,omitempty"`
	CouncilJudges    []string `json:"council_judges,omitempty"`
	// PhaseGates are the phases closed by a council gate (`--gates
	// scout,poc`, v3.1).
	PhaseGates []string `json:"phase_gates,omitempty"`
	// Teams: the owner dispatches Teams (v3.2), each revised at most
	// MaxRevisions times (the next rejection blocks it); AcceptMode is
	// "judge" or "human" (the accept is a button consent); TeamAccept is
	// each team_kind's accept criteria, copied from the config at
	// creation.
	Teams        bool              `json:"teams,omitempty"`
	MaxRevisions int               `json:"max_revisions,omitempty"`
	AcceptMode   string            `json:"accept_mode,omitempty"`
	TeamAccept   map[string]string `json:"team_accept,omitempty"`
	// Project is the directory its command agents run in ("" for the
	// provider's own); NewQuest checks the daemon can use it.
	Project string `json:"project,omitempty"`
	// StallSigs and StallCounts track the no_progress signals besides
	// StallSig (docs/design.md, "Loop control"; see txn.stallSignal): per
	// signal, its latest signature and how many times in a row it came.
	StallSigs   map[string]string `json:"stall_sigs,omitempty"`
	StallCounts map[string]int    `json:"stall_counts,omitempty"`
	// EgressConsent is the node of the quest's egress consent while no human
	// has given it (docs/design.md, "Privacy egress"; package engine/humangate):
	// until then nothing of the quest leaves the box. "" when none was asked,
	// and once it was given.
	EgressConsent string `json:"egress_consent,omitempty"`
	// Rev counts the saves of the quest's record (schema 6): the tick's
	// memory of each quest's first pending node is valid for the record
	// of one revision (see tickmem.PendingView).
	Rev uint64 `json:"-"`

	// ReservedTokens is the tokens the quest's runs in flight reserve against
	// its token_budget: the sum of its running entries' Run.Reserved,
	// laid over the record with them (overlayDispatch) and kept in step
	// by the dispatches and ends of the transaction (engine/budget.go). The
	// running index is its one source: it is never stored, so a restart
	// neither forgets nor counts twice a reservation.
	ReservedTokens int `json:"-" record:"-"`
}

// Source is where a person's command to a quest came from. The quest's
// reason and its event record it ("stopped via mqtt"), so that a pause is
// traced to the face that asked for it.
type Source string

// The sources of a command.
const (
	SourceCLI       Source = "cli"       // the questbox CLI: the control socket or in-process
	SourceDashboard Source = "dashboard" // the dashboard, behind its login
	SourceMQTT      Source = "mqtt"      // an MQTT command topic
)

// Sources are every Source, in documentation order.
var Sources = []Source{SourceCLI, SourceDashboard, SourceMQTT}

// Valid reports whether s is one of Sources.
func (s Source) Valid() bool { return slices.Contains(Sources, s) }

// StoppedReason is the reason of a quest a person paused from src
// (`quest stop`, a dashboard button, an MQTT command).
func StoppedReason(src Source) string { return "stopped via " + string(src) }

// ResumedReason is the reason of a quest a person resumed from src.
func ResumedReason(src Source) string { return "resumed via " + string(src) }

// ReasonStoppedByOwner is the reason a stop by a person recorded before
// stops named their source; such quests still read as paused on purpose.
const ReasonStoppedByOwner = "stopped by owner"

// StoppedByPerson reports whether reason is that of a stop a person asked
// for.
func StoppedByPerson(reason string) bool {
	if reason == ReasonStoppedByOwner {
		return true
	}
	return slices.ContainsFunc(Sources, func(s Source) bool { return reason == StoppedReason(s) })
}

// NeedsAttention reports whether the quest stopped without a person asking:
// terminated by a budget, or stopped for no progress or a broken provider.
func (q *Quest) NeedsAttention() bool {
	return q.Status == QuestTerminated || (q.Status == QuestStopped && !StoppedByPerson(q.Reason))
}

// IsCheckpoint reports whether nodes of role need human consent.
func (q *Quest) IsCheckpoint(role string) bool {
	for _, c := range q.Checkpoints {
		if c == role {
			return true
		}
	}
	return false
}

// Attempt is one entry of a node's attempt log.
type Attempt struct {
	At        time.Time    `json:"at"`
	Run       string       `json:"run,omitempty"`
	Outcome   string       `json:"outcome"` // PASS, FAIL, REVIEW, interrupted, deferred, rejected, granted, expired, error
	Facts     []gates.Fact `json:"facts,omitempty"`
	Feedback  string       `json:"feedback,omitempty"`
	ClaimHash string       `json:"claim_hash,omitempty"`
	// TryUsed says whether this attempt consumed one of max_tries.
	TryUsed bool `json:"try_used"`
	// Repeats counts further identical attempts merged into this one
	// (a provider that stays unreachable must not grow the log each tick).
	Repeats int `json:"repeats,omitempty"`
}

// AddAttempt adds a to the log, merging it into the last entry when both
// are the same kind of attempt that used no try. From schema 9 the node's
// record holds its last attempt only (LastAttempt), the one an attempt may
// still merge into; a new attempt that does not merge sends the last one
// to the attempts bucket, which saveNode appends (engine/records/attemptlog.go). So the
// log is never read to add to it: the result of a run writes the node's
// record, a few hundred bytes, and one record at the attempts bucket's
// right edge.
func (n *Node) AddAttempt(a Attempt) {
	n.ChainForm()
	if last := n.LastAttempt; last != nil && !a.TryUsed && !last.TryUsed && last.Outcome == a.Outcome &&
		last.Feedback == a.Feedback && last.ClaimHash == a.ClaimHash && len(a.Facts) == 0 {
		last.Repeats++
		last.At, last.Run = a.At, a.Run
		if n.Logged {
			n.Attempts[len(n.Attempts)-1] = *last
		}
		return
	}
	if n.LastAttempt != nil {
		n.Spill = append(n.Spill, *n.LastAttempt)
	}
	n.LastAttempt = &a
	n.AttemptCount++
	if a.DecidesSitting() {
		n.Sittings++
	}
	if n.Logged {
		n.Attempts = append(n.Attempts, a)
	}
}

// ChainForm turns a node whose record held its whole log (before schema
// 9, or planted with one) into the form of schema 9: every attempt but
// the last waits in spill for saveNode to append it to the attempts
// bucket, and Attempts stays the whole log.
func (n *Node) ChainForm() {
	if n.AttemptCount > 0 || len(n.Attempts) == 0 {
		return
	}
	k := len(n.Attempts)
	n.Spill = append(n.Spill, n.Attempts[:k-1]...)
	last := n.Attempts[k-1]
	n.LastAttempt, n.AttemptCount, n.Sittings, n.Logged = &last, k, SittingsIn(n.Attempts), true
}

// SittingsIn counts the attempts a council sitting left (see sitting).
func SittingsIn(log []Attempt) int {
	c := 0
	for i := range log {
		if log[i].DecidesSitting() {
			c++
		}
	}
	return c
}

// DecidesSitting reports whether a is a council sitting's decision: a
// PASS or a FAIL of no run (consent attempts do not count; see sitting).
func (a *Attempt) DecidesSitting() bool {
	return a.Run == "" && (a.Outcome == "PASS" || a.Outcome == "FAIL")
}

// Claim is a submission held while a human decides on it.
type Claim struct {
	Hash  string       `json:"hash"`
	Raw   string       `json:"raw"`
	Since time.Time    `json:"since"`
	Facts []gates.Fact `json:"facts,omitempty"`
	Why   string       `json:"why"`
	// Reasons are why a human is asked (ConsentRequest.Reasons), as the
	// gate said it when the claim was kept; nil in a claim kept before
	// they were recorded, and in a deferred one.
	Reasons []ConsentReason    `json:"reasons,omitempty"`
	Answ    *gates.Answer      `json:"answer,omitempty"`
	Owner   *gates.OwnerAnswer `json:"owner,omitempty"`
	// Replay marks an answer kept while its network stage could not run:
	// when the network is back it is judged again without asking the agent.
	Replay bool `json:"replay,omitempty"`
}

// Node is one unit of work under the ratchet (docs/design.md, "The ratchet").
type Node struct {
	ID         string `json:"id"`
	Quest      string `json:"quest"`
	Parent     string `json:"parent,omitempty"`
	Role       string `json:"role"`
	Hypothesis string `json:"hypothesis"`
	Status     Status `json:"status"`
	Depth      int    `json:"depth"`
	// Order is the node's creation sequence; older nodes dispatch first.
	Order uint64 `json:"order"`
	Tries int    `json:"tries"`
	// Attempts is the node's whole attempt log, oldest first, where a
	// reader that shows the log filled it (ReadNodeLog, engine/records/attemptlog.go);
	// nil on a node read for a write. Before schema 9 the record held it,
	// as a locked node's record still does when a migration found it
	// locked (the ledger binds its bytes).
	Attempts []Attempt `json:"attempts,omitempty"`
	// From schema 9 the record holds the log's length (AttemptCount), its
	// last attempt (LastAttempt, which a new attempt may merge into), and
	// the sequence (AttemptSeq, 0 for none) and running hash (AttemptSum)
	// of the last of the others, which the attempts bucket holds, each
	// naming the one before it. Sittings counts the attempts a council
	// sitting left (see sitting), so that a council does not read the log.
	AttemptCount int      `json:"attempt_count,omitempty"`
	AttemptSeq   uint64   `json:"attempt_seq,omitempty"`
	AttemptSum   string   `json:"attempt_sum,omitempty"`
	LastAttempt  *Attempt `json:"last_attempt,omitempty"`
	Sittings     int      `json:"sittings,omitempty"`
	// LastAsNode, in a record, says that LastAttempt's facts, feedback
	// and claim hash are the node's own (Facts, Feedback, ClaimHash),
	// which the record holds once (putNode); false on a decoded node.
	LastAsNode bool `json:"last_as_node,omitempty"`
	// What the agent claimed, set when the node passed.
	Verdict       string           `json:"verdict,omitempty"`
	Evidence      string           `json:"evidence,omitempty"`
	Citations     []gates.Citation `json:"citations,omitempty"`
	NewDirections []string         `json:"new_directions,omitempty"`
	// Summary is an owner's closing statement: the summary of the finish
	// action that finished its quest, whole (the quest's reason holds its
	// first 200 bytes).
	Summary string `json:"summary,omitempty"`
	// Gate result of the last submission.
	Outcome   string       `json:"outcome,omitempty"`
	Facts     []gates.Fact `json:"facts,omitempty"`
	Feedback  string       `json:"feedback,omitempty"`
	ClaimHash string       `json:"claim_hash,omitempty"`
	Claim     *Claim       `json:"claim,omitempty"`
	Reason    string       `json:"reason,omitempty"`
	Runs      []string     `json:"runs,omitempty"`
	// Provider, when set, is the provider of this node alone (a council
	// member's own model); see Quest.ProviderFor.
	Provider string `json:"provider,omitempty"`
	// Councils and Teams (docs/design.md, "Councils and Teams"). Phase: an
	// owner's design or run, or the phase a gate closes. TeamKind: a Team
	// node's kind (scout, poc, strategist, custom). Team: the Team a stage
	// node belongs to; Stage: plan, exec or accept. RevisionCount: how many
	// times the Team (or the stage's Team) has been rejected so far;
	// MaxRevisions: the revisions it may make (the rejection after them
	// blocks it).
	Phase         string `json:"phase,omitempty"`
	TeamKind      string `json:"team_kind,omitempty"`
	Team          string `json:"team,omitempty"`
	Stage         string `json:"stage,omitempty"`
	RevisionCount int    `json:"revision_count,omitempty"`
	MaxRevisions  int    `json:"max_revisions,omitempty"`
	// Deferrals counts deferrals in a row; see maxDeferrals.
	Deferrals int `json:"deferrals,omitempty"`
	// LockSeq orders terminal nodes within their quest, for export.
	LockSeq uint64    `json:"lock_seq,omitempty"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`

	// HeadOnly marks a node read for its dispatch only (readNodeHead): it
	// lacks its attempt log and its answer, and must never be saved.
	HeadOnly bool `json:"-" record:"-"`
	// HeadRuns is, on a head, how many runs its record lists (Runs is
	// not read).
	HeadRuns int `json:"-" record:"-"`
	// Spill are the attempts saveNode appends to the attempts bucket
	// (AddAttempt); logged says that Attempts is the whole log.
	Spill  []Attempt `json:"-" record:"-"`
	Logged bool      `json:"-" record:"-"`
}

// Edge links two nodes of a quest (docs/design.md, "Quests, nodes and
// edges").
type Edge struct {
	From     string `json:"from"`
	To       string `json:"to"`
	Relation string `json:"relation"`
}

// Run is one dispatch of a node to a provider (docs/design.md, "Runs and
// their logs"). ID (r<N>) is the store's key; Name is what people read:
// quest:<quest>:<node>:<k>, the node's k-th run. Name is filled by the
// readers (QuestRuns, FindRun) and is not stored.
type Run struct {
	ID       string    `json:"id"`
	Name     string    `json:"name,omitempty"`
	Quest    string    `json:"quest"`
	Node     string    `json:"node"`
	Role     string    `json:"role,omitempty"`
	Provider string    `json:"provider"`
	Attempt  int       `json:"attempt"`
	Started  time.Time `json:"started"`
	Ended    time.Time `json:"ended,omitzero"`
	// Outcome is what the engine made of the run: PASS, FAIL, REVIEW,
	// DEFERRED, INTERRUPTED, interrupted (found running at start-up),
	// aborted, discarded.
	Outcome string `json:"outcome,omitempty"`
	// Exit is how the agent's run ended (one of the Exit* constants);
	// ExitCode is a crashed command's exit status.
	Exit     string `json:"exit,omitempty"`
	ExitCode int    `json:"exit_code,omitempty"`
	// Tokens is what the run used (the provider's report, else an
	// estimate), or, for a run stopped before its answer came (aborted,
	// or in flight at a crash), the reservation charged for it until
	// its answer, if any, comes (engine/budget.go).
	Tokens int `json:"tokens,omitempty"`
	// Reserved is what the run reserved against its quest's token_budget
	// at its dispatch (engine/budget); 0 for a run that spends no provider's
	// tokens the box can reserve (a replay, an outside agent's answer).
	Reserved int `json:"reserved,omitempty"`
	// CostUSD is what the run cost in US dollars when its provider
	// reported it (an agent CLI's own figure); 0 when it did not.
	CostUSD float64 `json:"cost_usd,omitempty"`
	// BytesIn is the prompt's size; BytesOut the answer's and the
	// stderr's, as the agent wrote them (before any log bound).
	BytesIn  int64  `json:"bytes_in,omitempty"`
	BytesOut int64  `json:"bytes_out,omitempty"`
	Error    string `json:"error,omitempty"`
	// Redacted says that [privacy] redact patterns masked part of the
	// prompt before it left for the provider's (non-local) vendor.
	Redacted bool `json:"redacted,omitempty"`

	// Nth, when not 0, is this run's number among its node's runs, as the
	// dispatch that made it knew (newRun): its Name without a read.
	Nth int `json:"-" record:"-"`
}

// How an agent's run ended (Run.Exit).
const (
	ExitAnswered    = "answered"    // the agent gave an answer (whatever its verdict)
	ExitTimeout     = "timeout"     // it ran past its provider's timeout and was killed
	ExitKilled      = "killed"      // aborted, or killed by a signal
	ExitCrashed     = "crashed"     // it exited non-zero (Run.ExitCode) or failed
	ExitDeferred    = "deferred"    // its provider could not be reached
	ExitInterrupted = "interrupted" // the daemon stopped or restarted under it
)

// RunName is the user-facing name of a node's k-th run.
func RunName(quest, node string, k int) string {
	return "quest:" + quest + ":" + node + ":" + strconv.Itoa(k)
}

func QuestID(n uint64) string { return seqID('q', n) }
func NodeID(n uint64) string  { return seqID('n', n) }
func RunID(n uint64) string   { return store.RunID(n) }

// seqID is prefix followed by n in decimal, in one allocation.
func seqID(prefix byte, n uint64) string {
	var b [24]byte
	return string(strconv.AppendUint(append(b[:0], prefix), n, 10))
}
