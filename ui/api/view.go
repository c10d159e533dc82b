package api

import (
	"strings"
	"time"

	"github.com/questbox/questbox/device"
	"github.com/questbox/questbox/device/box"
	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/gates"
)

// The view types: what crosses the socket, the network and MQTT. Field
// names are the documented JSON of the API; durations are given twice,
// as whole seconds for programs and as Go duration text for people.

// Quest is a quest as clients see it.
type Quest struct {
	ID          string         `json:"id"`
	Name        string         `json:"name"`
	Direction   string         `json:"direction"`
	Status      QuestStatus    `json:"status"`
	Reason      string         `json:"reason,omitempty"`
	Attention   bool           `json:"needs_attention"` // terminated, or stopped other than by its owner
	Mode        string         `json:"mode"`
	Roles       []string       `json:"roles"`
	Provider    string         `json:"provider"`
	Gate        string         `json:"gate"`
	Checkpoints []string       `json:"checkpoints"`
	Limits      Limits         `json:"limits"`
	Used        Used           `json:"used"`
	Remaining   Remaining      `json:"remaining"`
	Counts      map[string]int `json:"counts"` // every node status, zeros included
	Nodes       int            `json:"nodes"`
	Running     string         `json:"running,omitempty"` // the node running now
	Project     string         `json:"project,omitempty"` // where its command agents run
	Created     time.Time      `json:"created"`
	Updated     time.Time      `json:"updated"`
	// Level is the quest's level (docs/design.md, "Councils and Teams": "v3
	// council", "v3.1 council", "v3.2 teams") for a quest with a council or
	// Teams; a v1 or v2 quest's view reads as it always did (its mode says
	// which).
	Level string `json:"level,omitempty"`
	// RoleProviders and Egress: the provider of each role that has its
	// own, and the vendors the quest may send its material to.
	RoleProviders map[string]string `json:"role_providers,omitempty"`
	Egress        []string          `json:"egress,omitempty"`
	// EgressConsent is the node of the quest's egress consent while no
	// human has given it: until then nothing of the quest leaves the box.
	EgressConsent string `json:"egress_consent,omitempty"`
	// Council is the providers of the council's members.
	Council    *Council `json:"council,omitempty"`
	PhaseGates []string `json:"phase_gates,omitempty"`
	// Teams: the owner dispatches Teams, each revised at most
	// MaxRevisions times; AcceptMode is judge or human.
	Teams        bool   `json:"teams,omitempty"`
	MaxRevisions int    `json:"max_revisions,omitempty"`
	AcceptMode   string `json:"accept_mode,omitempty"`
}

// Council is a quest's council: one provider per member.
type Council struct {
	Reviewers []string `json:"reviewers"`
	Judges    []string `json:"judges"`
}

// Limits are a quest's budgets and retry policy.
type Limits struct {
	MaxTries         int    `json:"max_tries"`
	MaxAgentRuns     int    `json:"max_agent_runs"`
	WallClockSeconds int64  `json:"wall_clock_seconds"`
	WallClock        string `json:"wall_clock"`
	TokenBudget      int    `json:"token_budget"`
	MaxStalled       int    `json:"max_stalled"`
	OwnerEvery       int    `json:"owner_every"`
}

// Used is what a quest has spent.
type Used struct {
	AgentRuns        int    `json:"agent_runs"`
	Tokens           int    `json:"tokens"`
	WallClockSeconds int64  `json:"wall_clock_seconds"`
	WallClock        string `json:"wall_clock"`
}

// Remaining is what is left of each budget (never negative).
type Remaining struct {
	AgentRuns        int    `json:"agent_runs"`
	Tokens           int    `json:"tokens"`
	WallClockSeconds int64  `json:"wall_clock_seconds"`
	WallClock        string `json:"wall_clock"`
}

// QuestDetail is a quest with its whole graph.
type QuestDetail struct {
	Quest Quest  `json:"quest"`
	Nodes []Node `json:"nodes"`
	Edges []Edge `json:"edges"`
	// Teams and Councils fold the quest's Teams with their stage strips
	// and its owners' councils with their votes (fold.go); absent for a
	// quest without them.
	Teams    []Team         `json:"teams,omitempty"`
	Councils []OwnerCouncil `json:"councils,omitempty"`
}

// Node is one node: its claim, its verdict and its history.
type Node struct {
	ID            string     `json:"id"`
	Quest         string     `json:"quest"`
	Parent        string     `json:"parent,omitempty"`
	Role          string     `json:"role"`
	Hypothesis    string     `json:"hypothesis"`
	Status        NodeStatus `json:"status"`
	Terminal      bool       `json:"terminal"`
	Depth         int        `json:"depth"`
	Tries         int        `json:"tries"`
	Verdict       string     `json:"verdict,omitempty"` // promising, dead, conclusion (once passed)
	Evidence      string     `json:"evidence,omitempty"`
	Citations     []Citation `json:"citations"`
	NewDirections []string   `json:"new_directions"`
	Outcome       Outcome    `json:"outcome,omitempty"` // the gate's word on the last submission
	Facts         []Fact     `json:"facts"`
	// Feedback is the canonical feedback, byte for byte what the agent's
	// next prompt carries.
	Feedback string `json:"feedback,omitempty"`
	// FeedbackAdds is true when Feedback says more than the facts listed
	// (a root cause, what to change): clients then show it after them.
	FeedbackAdds bool      `json:"feedback_adds"`
	ClaimHash    string    `json:"claim_hash,omitempty"`
	Reason       string    `json:"reason,omitempty"`
	Waiting      string    `json:"waiting,omitempty"` // deferred: why it waits for the network
	Attempts     []Attempt `json:"attempts"`
	Runs         []string  `json:"runs"`
	Created      time.Time `json:"created"`
	Updated      time.Time `json:"updated"`
	// Provider is the node's own provider (a council member's model).
	Provider string `json:"provider,omitempty"`
	// Councils and Teams (docs/design.md, "Councils and Teams"): an owner's
	// phase (design, run) or the phase a gate closes; a Team node's kind; a
	// stage node's Team and stage (plan, exec, accept); the rejections so far
	// and the cap.
	Phase         string `json:"phase,omitempty"`
	TeamKind      string `json:"team_kind,omitempty"`
	Team          string `json:"team,omitempty"`
	Stage         string `json:"stage,omitempty"`
	RevisionCount int    `json:"revision_count,omitempty"`
	MaxRevisions  int    `json:"max_revisions,omitempty"`
	// Summary is an owner's closing statement: the summary of the
	// finish action that finished its quest.
	Summary string `json:"summary,omitempty"`
}

// Attempt is one entry of a node's attempt log.
type Attempt struct {
	At        time.Time `json:"at"`
	Run       string    `json:"run,omitempty"`
	Outcome   string    `json:"outcome"`
	Facts     []Fact    `json:"facts"`
	Feedback  string    `json:"feedback,omitempty"`
	ClaimHash string    `json:"claim_hash,omitempty"`
	TryUsed   bool      `json:"try_used"`
	Repeats   int       `json:"repeats,omitempty"`
}

// Fact is what a rule that fired found. Text is the fact as one line, the
// way the agent's feedback and the CLI print it.
type Fact struct {
	Rule     string `json:"rule"`
	Level    string `json:"level"` // fail, review
	Where    string `json:"where"`
	Expected string `json:"expected"`
	Actual   string `json:"actual"`
	Text     string `json:"text"`
}

// Citation is a source and the words quoted from it.
type Citation struct {
	Source string `json:"source"`
	Quote  string `json:"quote"`
}

// Edge links two nodes.
type Edge struct {
	From     string   `json:"from"`
	To       string   `json:"to"`
	Relation Relation `json:"relation"`
}

// Status is `questbox status`: counts per status and what is left.
type Status struct {
	Quest     string         `json:"quest"`
	Name      string         `json:"name"`
	Status    QuestStatus    `json:"status"`
	Reason    string         `json:"reason,omitempty"`
	Counts    map[string]int `json:"counts"`
	Total     int            `json:"total"`
	Running   string         `json:"running,omitempty"`
	Used      Used           `json:"used"`
	Limits    Limits         `json:"limits"`
	Remaining Remaining      `json:"remaining"`
	// Findings counts a finished quest's findings: its counts by status
	// read as work still going on (a growing node is a finding kept,
	// explored counts owners' turns and Teams' stages); absent while the
	// quest may go on.
	Findings *FindingCounts `json:"findings,omitempty"`
}

// Next is the prompt of the node an external agent should work on. Node is
// "" when nothing is pending (the JSON then has "node": null).
type Next struct {
	Node       *string `json:"node"`
	Quest      string  `json:"quest"`
	Role       string  `json:"role,omitempty"`
	Hypothesis string  `json:"hypothesis,omitempty"`
	Attempt    int     `json:"attempt,omitempty"`
	Prompt     string  `json:"prompt,omitempty"`
}

// Scan is what `scan` did with each hypothesis.
type Scan struct {
	Added   []string `json:"added"`   // new node ids
	Skipped []string `json:"skipped"` // hypotheses the quest already had
}

// Verdict is the gate's answer to one submission. Outcome is PASS, FAIL,
// REVIEW or DEFERRED.
type Verdict struct {
	Node         string     `json:"node"`
	Outcome      Outcome    `json:"outcome"`
	Status       NodeStatus `json:"status"` // the node's status afterwards
	Verdict      string     `json:"verdict,omitempty"`
	Tries        int        `json:"tries"`
	MaxTries     int        `json:"max_tries"`
	Facts        []Fact     `json:"facts"`
	Feedback     string     `json:"feedback,omitempty"`
	FeedbackAdds bool       `json:"feedback_adds"`
	ClaimHash    string     `json:"claim_hash"`
	Children     []string   `json:"children"`
	Reason       string     `json:"reason,omitempty"` // why it was deferred or sent to a human
}

// Rules is a gate's catalog: the audit list of what it blocks. Kinds is
// present only when neither a quest nor a gate was asked for.
type Rules struct {
	Kinds []Kind `json:"kinds,omitempty"`
	Quest string `json:"quest,omitempty"`
	Gate  string `json:"gate"`
	Rules []Rule `json:"rules"`
}

// Kind is a built-in rule kind.
type Kind struct {
	Kind        string `json:"kind"`
	Stage       string `json:"stage"`
	Description string `json:"description"`
	Params      string `json:"params"`
}

// Rule is one rule of a gate profile.
type Rule struct {
	ID          string   `json:"id"`
	Level       string   `json:"level"`
	Stage       string   `json:"stage"`
	Kind        string   `json:"kind"`
	Description string   `json:"description"`
	Attacks     []string `json:"attacks"`
	Supersedes  []string `json:"supersedes"`
	Weight      float64  `json:"weight"`
}

// Verify is a store and ledger check that passed (one that fails is an
// error with code store_corrupt).
type Verify struct {
	OK          bool     `json:"ok"`
	Store       string   `json:"store"`
	Schema      int      `json:"schema"`
	Pages       int      `json:"pages"`
	Records     int      `json:"records"`
	LockedNodes int      `json:"locked_nodes"`
	Notes       []string `json:"notes"` // what is worth knowing but not wrong (a store not sealed yet, a recorded salvage)
	// Signature is the ledger head's signature. A check that passed
	// finds it "signed" (by this box's key, named) or, on a store from
	// before ledger signing that the daemon has not opened yet,
	// "unsigned"; the other states fail the check.
	Signature LedgerSignature `json:"signature"`
}

// LedgerSignature is what verify found of the ledger head's signature.
type LedgerSignature struct {
	// State is "signed", "unsigned", "signed by another key" or
	// "signature does not match the head".
	State string `json:"state"`
	// Key is the fingerprint of the key that signed, BoxKey the box's
	// ("SHA256:…").
	Key    string `json:"key,omitempty"`
	BoxKey string `json:"box_key,omitempty"`
	// Seq is the ledger record the signature covers; Head the last one.
	Seq    uint64 `json:"seq,omitempty"`
	Head   uint64 `json:"head"`
	Detail string `json:"detail"`
}

// SignatureUnsigned is LedgerSignature.State when the ledger's head
// carries no signature: `questbox verify` warns instead of saying ok.
const SignatureUnsigned = string(engine.SealUnsigned)

// Event is one state change (docs/design.md, "Events and the outbox").
type Event struct {
	Seq       uint64    `json:"seq"`
	Time      time.Time `json:"time"`
	Kind      EventKind `json:"kind"`
	Quest     string    `json:"quest,omitempty"`
	Node      string    `json:"node,omitempty"`
	Role      string    `json:"role,omitempty"`
	Team      string    `json:"team,omitempty"`  // kind node: the stage node's Team
	Stage     string    `json:"stage,omitempty"` // kind node: plan, exec, accept
	Phase     string    `json:"phase,omitempty"` // kind node: an owner's design or run
	From      string    `json:"from,omitempty"`
	To        string    `json:"to,omitempty"`
	Outcome   string    `json:"outcome,omitempty"`
	Facts     []Fact    `json:"facts,omitempty"`
	Feedback  string    `json:"feedback,omitempty"`
	RootCause string    `json:"root_cause,omitempty"`
	ClaimHash string    `json:"claim_hash,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	Used      *Used     `json:"used,omitempty"`
	Detail    string    `json:"detail,omitempty"`
	// Device is what a device event says (kind device).
	Device *DeviceEvent `json:"device,omitempty"`
	// Consent is the request a consent event of outcome requested made,
	// as it waits when the event is read from the outbox (MQTT's consent
	// event); absent once the human answered or it expired.
	Consent *Consent `json:"consent,omitempty"`
	// ConsentsChanged says that the consent queue (GET /api/consents) may
	// have changed with this event: a consent event, or a node entering or
	// leaving awaiting_consent. The faces read the queue again on it
	// instead of each deciding from the event's kind and statuses.
	ConsentsChanged bool `json:"consents_changed,omitempty"`
}

// Events is a page of the event outbox. Next is the seq to ask for next
// (the last one returned, or since when none).
type Events struct {
	Events []Event `json:"events"`
	Next   uint64  `json:"next"`
}

// Tick is what one tick did, with the events it produced.
type Tick struct {
	Dispatched []string `json:"dispatched"`
	Resumed    []string `json:"resumed"`
	Finished   []string `json:"finished"`
	Terminated []string `json:"terminated"`
	Events     []Event  `json:"events"`
}

// Health is /healthz.
type Health struct {
	Status  string `json:"status"` // ok, waiting (the store is refused)
	Version string `json:"version"`
	Reason  string `json:"reason,omitempty"`
	// Config is the daemon's configuration in force; absent when no
	// daemon answers.
	Config *ConfigState `json:"config,omitempty"`
}

// ConfigState says which configuration a daemon runs on: its
// generation (1 at start-up, one more for each reload that applied a
// file), when that generation was loaded, and from which file ("" for
// the built-in defaults).
type ConfigState struct {
	Generation uint64    `json:"generation"`
	Loaded     time.Time `json:"loaded"`
	File       string    `json:"file"`
}

// Export is one batch of an export: the terminal nodes not exported yet,
// one JSON object per line, and the token that acknowledges them.
type Export struct {
	Quest string `json:"quest"`
	// Token acknowledges this batch (POST .../export/ack); "" when empty.
	Token string `json:"token"`
	// Lines are the JSONL lines, each ending in "\n".
	Lines []string `json:"lines"`
	// TruncateTo, for a file export, is the size the file must be cut to
	// before the lines are appended: an earlier batch to it was never
	// acknowledged and is being sent again.
	TruncateTo *int64 `json:"truncate_to,omitempty"`
	// Seal is the line written after Lines: the batch's signature
	// (ExportSealLine), "" when Lines is empty.
	Seal string `json:"seal,omitempty"`
}

// ExportAck is the answer to an acknowledgement.
type ExportAck struct {
	Quest    string `json:"quest"`
	Exported int    `json:"exported"`
}

// ExportRecord is one line of an export: a terminal node with its quest;
// a Team's lists its stage nodes, oldest first (its revision count is the
// node's).
type ExportRecord struct {
	Quest string `json:"quest"`
	Node
	Stages []Stage `json:"stages,omitempty"`
}

// Stage is one stage node of a Team, as the Team's export lists it.
type Stage struct {
	ID            string     `json:"id"`
	Stage         string     `json:"stage"`
	Role          string     `json:"role"`
	Status        NodeStatus `json:"status"`
	Outcome       Outcome    `json:"outcome,omitempty"`
	Verdict       string     `json:"verdict,omitempty"`
	RevisionCount int        `json:"revision_count,omitempty"`
}

// StagesView is the view of a Team's stage nodes.
func StagesView(ns []*engine.Node) []Stage {
	if len(ns) == 0 {
		return nil
	}
	out := make([]Stage, len(ns))
	for i, n := range ns {
		out[i] = Stage{ID: n.ID, Stage: n.Stage, Role: n.Role, Status: NodeStatus(n.Status), Outcome: Outcome(n.Outcome),
			Verdict: n.Verdict, RevisionCount: n.RevisionCount}
	}
	return out
}

func facts(fs []gates.Fact) []Fact {
	out := make([]Fact, len(fs))
	for i, f := range fs {
		out[i] = Fact{Rule: f.Rule, Level: f.Level.String(), Where: f.Where, Expected: f.Expected, Actual: f.Actual, Text: f.String()}
	}
	return out
}

// feedbackAdds reports whether feedback says more than the facts do.
func feedbackAdds(fs []gates.Fact, feedback string) bool {
	f := strings.TrimSpace(feedback)
	return f != "" && f != strings.TrimSpace(engine.Feedback(fs))
}

// The one rule for durations in views: whole seconds, truncated, for the
// number and the text alike; a remainder is computed from truncated
// values, so that used + remaining is the limit to the second.
func whole(d time.Duration) time.Duration { return max(0, d).Truncate(time.Second) }

func seconds(d time.Duration) int64 { return int64(whole(d) / time.Second) }

// durText renders a duration in whole seconds (see whole).
func durText(d time.Duration) string { return whole(d).String() }

func limitsView(l engine.Limits) Limits {
	return Limits{MaxTries: l.MaxTries, MaxAgentRuns: l.MaxAgentRuns, WallClockSeconds: seconds(l.WallClock),
		WallClock: durText(l.WallClock), TokenBudget: l.TokenBudget, MaxStalled: l.MaxStalled, OwnerEvery: l.OwnerEvery}
}

func usedView(c engine.Counters) Used {
	return Used{AgentRuns: c.AgentRuns, Tokens: c.Tokens, WallClockSeconds: seconds(c.WallUsed), WallClock: durText(c.WallUsed)}
}

func remainingView(l engine.Limits, u engine.Counters) Remaining {
	wall := max(0, whole(l.WallClock)-whole(u.WallUsed))
	return Remaining{AgentRuns: max(0, l.MaxAgentRuns-u.AgentRuns), Tokens: max(0, l.TokenBudget-u.Tokens),
		WallClockSeconds: seconds(wall), WallClock: durText(wall)}
}

// countsView counts q's nodes per status. The statuses of councils and
// Teams (council_pending, revising, team_blocked) are listed only for a
// quest that has a council or Teams, or has such a node: a v1 or v2
// quest's counts read as they always did.
func countsView(q *engine.Quest) (map[string]int, int) {
	out := make(map[string]int, len(engine.Statuses))
	total := 0
	v3 := q.Teams || len(q.CouncilReviewers)+len(q.CouncilJudges) > 0
	for _, s := range engine.Statuses {
		switch s {
		case engine.CouncilPending, engine.Revising, engine.TeamBlocked:
			if !v3 && q.Counts.Get(s) == 0 {
				continue
			}
		}
		out[string(s)] = q.Counts.Get(s)
		total += q.Counts.Get(s)
	}
	return out, total
}

// QuestView is the view of q.
func QuestView(q *engine.Quest) Quest {
	counts, total := countsView(q)
	gate := q.Gate
	if gate == "" {
		gate = engine.DefaultGate
	}
	v := Quest{ID: q.ID, Name: q.Name, Direction: q.Direction, Status: QuestStatus(q.Status), Reason: q.Reason,
		Attention: q.NeedsAttention(), Mode: q.Mode, Roles: nonNil(q.Roles), Provider: q.Provider, Gate: gate,
		Checkpoints: nonNil(q.Checkpoints), Limits: limitsView(q.Limits), Used: usedView(q.Counters),
		Remaining: remainingView(q.Limits, q.Counters), Counts: counts, Nodes: total, Running: q.Running,
		Project: q.Project, Created: q.Created, Updated: q.Updated,
		RoleProviders: q.RoleProviders, Egress: q.Egress, EgressConsent: q.EgressConsent, PhaseGates: q.PhaseGates,
		Teams: q.Teams, MaxRevisions: q.MaxRevisions, AcceptMode: q.AcceptMode}
	if q.AboveV2() {
		v.Level = q.Level()
	}
	if q.HasCouncil() {
		v.Council = &Council{Reviewers: nonNil(q.CouncilReviewers), Judges: nonNil(q.CouncilJudges)}
	}
	return v
}

// NodeView is the view of n.
func NodeView(n *engine.Node) Node {
	v := Node{ID: n.ID, Quest: n.Quest, Parent: n.Parent, Role: n.Role, Hypothesis: n.Hypothesis, Status: NodeStatus(n.Status),
		Terminal: n.Status.Terminal(), Depth: n.Depth, Tries: n.Tries, Verdict: n.Verdict, Evidence: n.Evidence,
		Citations: make([]Citation, len(n.Citations)), NewDirections: nonNil(n.NewDirections), Outcome: Outcome(n.Outcome),
		Facts: facts(n.Facts), Feedback: n.Feedback, FeedbackAdds: feedbackAdds(n.Facts, n.Feedback),
		ClaimHash: n.ClaimHash, Reason: n.Reason, Attempts: make([]Attempt, len(n.Attempts)), Runs: nonNil(n.Runs),
		Created: n.Created, Updated: n.Updated, Provider: n.Provider, Phase: n.Phase, TeamKind: n.TeamKind, Team: n.Team,
		Stage: n.Stage, RevisionCount: n.RevisionCount, MaxRevisions: n.MaxRevisions, Summary: n.Summary}
	for i, c := range n.Citations {
		v.Citations[i] = Citation{Source: c.Source, Quote: c.Quote}
	}
	for i, a := range n.Attempts {
		v.Attempts[i] = Attempt{At: a.At, Run: a.Run, Outcome: a.Outcome, Facts: facts(a.Facts), Feedback: a.Feedback,
			ClaimHash: a.ClaimHash, TryUsed: a.TryUsed, Repeats: a.Repeats}
	}
	if n.Status == engine.Deferred {
		switch {
		case n.Claim != nil && n.Claim.Why != "":
			v.Waiting = n.Claim.Why
		case len(n.Attempts) > 0:
			v.Waiting = n.Attempts[len(n.Attempts)-1].Feedback
		default:
			v.Waiting = n.Reason
		}
	}
	return v
}

func edgesView(es []engine.Edge) []Edge {
	out := make([]Edge, len(es))
	for i, e := range es {
		out[i] = Edge{From: e.From, To: e.To, Relation: Relation(e.Relation)}
	}
	return out
}

// StatusView is the status of q.
func StatusView(q *engine.Quest) Status {
	counts, total := countsView(q)
	return Status{Quest: q.ID, Name: q.Name, Status: QuestStatus(q.Status), Reason: q.Reason, Counts: counts, Total: total,
		Running: q.Running, Used: usedView(q.Counters), Limits: limitsView(q.Limits), Remaining: remainingView(q.Limits, q.Counters)}
}

// VerdictView is the view of a submission's result.
func VerdictView(r engine.SubmitResult) Verdict {
	return Verdict{Node: r.Node, Outcome: Outcome(r.Outcome), Status: NodeStatus(r.Status), Verdict: r.Verdict, Tries: r.Tries,
		MaxTries: r.MaxTries, Facts: facts(r.Facts), Feedback: r.Feedback, FeedbackAdds: feedbackAdds(r.Facts, r.Feedback),
		ClaimHash: r.ClaimHash, Children: nonNil(r.Children), Reason: r.Reason}
}

// EventView is the view of ev.
func EventView(ev engine.Event) Event {
	v := Event{Seq: ev.Seq, Time: ev.Time, Kind: EventKind(ev.Kind), Quest: ev.Quest, Node: ev.Node, Role: ev.Role,
		Team: ev.Team, Stage: ev.Stage, Phase: ev.Phase, From: ev.From,
		To: ev.To, Outcome: ev.Outcome, Feedback: ev.Feedback, RootCause: ev.RootCause, ClaimHash: ev.ClaimHash,
		Reason: ev.Reason, Detail: ev.Detail}
	v.ConsentsChanged = changesConsents(v)
	if len(ev.Facts) > 0 {
		v.Facts = facts(ev.Facts)
	}
	if ev.Counters != nil {
		u := usedView(*ev.Counters)
		v.Used = &u
	}
	if ev.Device != nil {
		d := deviceEventView(*ev.Device)
		v.Device = &d
	}
	return v
}

// changesConsents is the one rule of Event.ConsentsChanged.
func changesConsents(v Event) bool {
	aw := string(NodeAwaitingConsent)
	return v.Kind == KindConsent || v.Kind == KindNode && (v.From == aw || v.To == aw)
}

// EventViews is the view of evs (never nil).
func EventViews(evs []engine.Event) []Event {
	out := make([]Event, len(evs))
	for i, ev := range evs {
		out[i] = EventView(ev)
	}
	return out
}

func rulesView(rs []gates.RuleInfo) []Rule {
	out := make([]Rule, len(rs))
	for i, r := range rs {
		out[i] = Rule{ID: r.ID, Level: r.Level.String(), Stage: r.Stage.String(), Kind: r.Kind, Description: r.Description,
			Attacks: nonNil(r.Attacks), Supersedes: nonNil(r.Supersedes), Weight: r.Weight}
	}
	return out
}

func kindsView(ks []gates.KindInfo) []Kind {
	out := make([]Kind, len(ks))
	for i, k := range ks {
		out[i] = Kind{Kind: k.Name, Stage: k.Stage.String(), Description: k.Description, Params: k.Params}
	}
	return out
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Device is the box as `device status` and the dashboard show it.
type Device struct {
	Backend string  `json:"backend"` // periph, sim
	Green   LED     `json:"green"`
	Amber   LED     `json:"amber"`
	Red     LED     `json:"red"`
	Button  Button  `json:"button"`
	ACT     *ACT    `json:"act_led,omitempty"`
	State   State   `json:"state"`
	Network Network `json:"network"`
	Broker  Broker  `json:"broker"`
	// Halted is why the daemon runs no command: its store is refused and
	// it waits for `questbox salvage`.
	Halted   string    `json:"halted,omitempty"`
	Consents []Consent `json:"consents"` // oldest first
}

// LED is one LED: its pin, its pattern and whether it is lit now.
type LED struct {
	Pin     int    `json:"pin"` // BCM; negative when not fitted
	Pattern string `json:"pattern"`
	On      bool   `json:"on"`
}

// Button is the consent button.
type Button struct {
	Pin       int  `json:"pin"` // BCM; negative when not fitted
	Simulated bool `json:"simulated"`
}

// ACT is the Pi's own LED when it mirrors the worst state.
type ACT struct {
	Path    string `json:"path"`
	Pattern string `json:"pattern"`
}

// State is what the LEDs report.
type State struct {
	Starting        bool   `json:"starting"`
	Halted          bool   `json:"halted"`
	AgentsRunning   int    `json:"agents_running"`
	ConsentsPending int    `json:"consents_pending"`
	Offline         bool   `json:"offline"`
	QuestsAttention int    `json:"quests_needing_attention"` // terminated, or stopped other than by the owner
	TeamsBlocked    int    `json:"teams_blocked,omitempty"`  // unfinished quests with a team_blocked Team (red, like an exhausted quest)
	Fault           string `json:"fault,omitempty"`
}

// Network is the box's network as the probe sees it.
type Network struct {
	Online bool `json:"online"`
}

// Broker is the MQTT connection.
type Broker struct {
	Configured bool   `json:"configured"`
	Connected  bool   `json:"connected"`
	Error      string `json:"error,omitempty"`
	Fault      bool   `json:"fault"` // an error a person must fix (auth, TLS, config)
}

// Press is one press of the simulated button and what it did.
type Press struct {
	Press   string `json:"press"` // "long (2s)"
	Kind    string `json:"kind"`  // short, long, triple
	Outcome string `json:"outcome"`
}

// DeviceView is the view of the box's status, with the consent queue
// (consentViews at st.Now) beside it.
func DeviceView(st box.Status, consents []Consent) Device {
	led := func(l device.LEDView) LED { return LED{Pin: l.Pin, Pattern: l.Pattern, On: l.On} }
	s := st.State
	v := Device{Backend: st.Snapshot.Backend, Green: led(st.Snapshot.Green), Amber: led(st.Snapshot.Amber), Red: led(st.Snapshot.Red),
		Button: Button{Pin: st.ButtonPin, Simulated: st.Simulated},
		State: State{Starting: s.Starting, Halted: s.Halted, AgentsRunning: s.AgentsRunning, ConsentsPending: s.ConsentsPending,
			Offline: s.Offline, QuestsAttention: s.QuestsTerminated, TeamsBlocked: s.TeamsBlocked, Fault: s.Fault},
		Network:  Network{Online: st.Online},
		Broker:   Broker{Configured: st.Broker.Configured, Connected: st.Broker.Connected, Error: st.Broker.Error, Fault: st.Broker.Fault},
		Consents: nonNil(consents)}
	if st.ACTPath != "" {
		v.ACT = &ACT{Path: st.ACTPath, Pattern: st.ACT}
	}
	if st.Halted != nil {
		v.Halted = st.Halted.Error()
	}
	return v
}
