package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/humangate"
	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
	"github.com/questbox/questbox/engine/team"
	"github.com/questbox/questbox/engine/verdict"
	"github.com/questbox/questbox/gates"
	"github.com/questbox/questbox/gates/judge"
)

// resultKind is what judging one answer came to (verdict.Kind).
type resultKind = verdict.Kind

const (
	resInterrupted = verdict.Interrupted // cancelled: back to pending, no try
	resDeferred    = verdict.Deferred    // network stage could not run: no try
	resStopQuest   = verdict.StopQuest   // provider misconfigured: quest stopped, no try
	resFail        = verdict.Failed
	resReview      = verdict.Reviewed
	resPass        = verdict.Passed
)

// result is what judging one answer produced, computed outside any
// transaction (it may wait on the network) and applied inside one.
type result struct {
	kind     resultKind
	facts    []gates.Fact
	feedback string
	// root is the rule id of the gate's root cause (gates.Feedback); ""
	// when the engine found the failure itself (see rootCause).
	root string
	why  string
	// reasons are why a REVIEW asks a human (ConsentReason), kept with
	// the claim.
	reasons []ConsentReason
	raw     []byte
	claim   string
	answer  *gates.Answer
	owner   *gates.OwnerAnswer
	member  *gates.MemberAnswer // a council member's answer
	tokens  int
	cost    float64 // US dollars, as the provider reported them
	replay  bool    // a kept answer judged again: no agent ran
	// How the agent's run ended and what it moved (Run.Exit, ExitCode,
	// BytesIn, BytesOut).
	exit              string
	exitCode          int
	bytesIn, bytesOut int64
	// redacted: the prompt was masked before it left (redact.go).
	redacted bool
	// stage is what a Team stage's answer produced (package engine/team).
	stage *team.Stage
}

// outcome is the outcome of r as the run, the attempt and the verdict
// event name it (verdict.OutcomeOf).
func (r result) outcome() string {
	l1 := ""
	if r.stage != nil {
		l1 = r.stage.L1
	}
	return verdict.OutcomeOf(r.kind, l1)
}

// judged is r as the verdict's rules apply it to n.
func (r *result) judged(n *Node) verdict.Judged {
	j := verdict.Judged{Kind: r.kind, Facts: r.facts, Feedback: r.feedback, Root: r.root, Why: r.why, Reasons: r.reasons,
		Raw: r.raw, Claim: r.claim, Answer: r.answer, Owner: r.owner, Member: r.member,
		// Members who agree are no stall (see council.go), nor is a Team
		// stage that delivered (stallNeutral).
		NoStall: domain.IsMember(n.Role) || stallNeutral(n, *r)}
	if r.stage != nil {
		j.L1 = r.stage.L1
	}
	return j
}

// Feedback renders facts as the text fed back into the agent's next prompt
// and shown to humans, byte-identical in both places.
func Feedback(facts []gates.Fact) string { return domain.Feedback(facts) }

// judge turns a provider's reply into a result: L1 rules first; only L1 can
// pass; a checkpoint role always asks a human.
func (e *Engine) judge(ctx context.Context, o *Options, q *Quest, n *Node, reply agent.Reply, err error) result {
	res := result{raw: reply.Output, claim: gates.ClaimHash(reply.Output), tokens: reply.Tokens, cost: reply.CostUSD}
	if res.tokens == 0 && err == nil && !reply.TokensReported {
		res.tokens = agent.EstimateTokens("", reply.Output)
	}
	switch {
	case err != nil:
		return judgeRunError(ctx, err, res)
	case domain.IsMember(n.Role):
		return judgeMember(n, reply, res)
	case n.Stage == StagePlan || n.Stage == StageAccept:
		return e.judgeStage(q, n, reply, res)
	}
	v, g, ok := e.judgeGates(ctx, o, q, n, reply, &res)
	if !ok {
		return res
	}
	if n.Stage == StageExec {
		// The deliverable's L1 outcome is the accept's to use (package engine/team).
		a, facts := gates.ParseAnswer(reply.Output)
		if len(facts) > 0 {
			return res.failParse(facts)
		}
		return judgeExec(a, v, res)
	}
	switch v.Outcome {
	case gates.OutcomeFail:
		res.kind = resFail
		return res
	case gates.OutcomeReview:
		res.kind, res.why, res.reasons = resReview, "the gate asks for review", domain.RuleReasons(v.Facts)
	case gates.OutcomePass:
		res.kind = resPass
	default:
		panic(fmt.Sprintf("BUG: gate returned outcome %v", v.Outcome))
	}
	res = e.judgeAnswer(ctx, o, q, n, reply, g, v, res)
	if (res.kind == resPass || res.kind == resReview) && q.IsCheckpoint(n.Role) {
		// A REVIEW at a checkpoint keeps the gate's word as its why; the
		// human reads both reasons.
		if res.kind == resPass {
			res.kind, res.why = resReview, fmt.Sprintf("role %s is a human checkpoint", n.Role)
		}
		res.reasons = append(res.reasons, domain.CheckpointReason(n.Role))
	}
	return res
}

// judgeRunError classifies a run that returned no reply: cancelled runs are
// interrupted, an unavailable provider defers, a missing one stops the
// quest, and timeouts and other errors fail the node with a fact.
func judgeRunError(ctx context.Context, err error, res result) result {
	switch {
	case ctx.Err() != nil:
		res.kind, res.why = resInterrupted, "run cancelled: "+context.Cause(ctx).Error()
	case errors.Is(err, agent.ErrUnavailable):
		res.kind, res.why = resDeferred, err.Error()
	case errors.Is(err, agent.ErrNotFound):
		res.kind, res.why = resStopQuest, err.Error()
	case errors.Is(err, agent.ErrTimeout):
		res.kind = resFail
		res.facts = []gates.Fact{{Rule: "agent-timeout", Level: gates.Fail, Where: "run", Expected: "an answer before the provider's timeout", Actual: err.Error()}}
	case errors.Is(err, agent.ErrAgentReported):
		res.kind = resFail
		res.facts = []gates.Fact{{Rule: "agent-error", Level: gates.Fail, Where: "run", Expected: "the agent CLI reports success", Actual: err.Error()}}
	default:
		res.kind = resFail
		res.facts = []gates.Fact{{Rule: "agent-error", Level: gates.Fail, Where: "run", Expected: "the agent exits with status 0", Actual: err.Error()}}
	}
	res.feedback = Feedback(res.facts)
	return res
}

// judgeMember reads a council member's answer by its own contract; the
// judge discipline needs the prompt (disciplineMember).
func judgeMember(n *Node, reply agent.Reply, res result) result {
	m, facts := gates.ParseMemberAnswer(n.Role, reply.Output)
	if len(facts) > 0 {
		res.kind, res.facts, res.feedback = resFail, facts, Feedback(facts)
		return res
	}
	res.kind, res.member = resPass, &m
	return res
}

// judgeGates runs the quest's gate catalog over the reply and records the
// verdict's facts and feedback in res. It returns false, with res already
// decided, when the catalog or the ancestors cannot be read or the network
// stage could not run; g is the grounder the evaluation used.
func (e *Engine) judgeGates(ctx context.Context, o *Options, q *Quest, n *Node, reply agent.Reply, res *result) (gates.Verdict, gates.Grounder, bool) {
	cat, cerr := o.Catalog(q)
	if cerr != nil {
		res.kind = resStopQuest
		res.why = "gate catalog: " + cerr.Error()
		return gates.Verdict{}, nil, false
	}
	anc, aerr := e.ancestors(n)
	if aerr != nil {
		res.kind, res.why = resInterrupted, aerr.Error()
		return gates.Verdict{}, nil, false
	}
	in := gates.Input{Raw: reply.Output, Truncated: reply.Truncated, Cap: reply.Cap, Role: n.Role,
		Direction: q.Direction, Hypothesis: n.Hypothesis, Ancestors: anc,
		Today: e.clock.Now().Format("2006-01-02"), Sources: e.opt.Sources}
	var g gates.Grounder
	if e.opt.Ground != nil {
		g = e.opt.Ground()
	}
	st := cat.EvaluateStaged(ctx, in, g)
	if st.Deferred {
		res.kind, res.why = resDeferred, "network stage could not run: "+st.Reason
		return gates.Verdict{}, nil, false
	}
	v := st.Verdict
	res.facts = v.Facts
	res.feedback = st.Feedback.String()
	res.root = st.Feedback.RootCause.Rule
	if res.feedback == "" {
		res.feedback = Feedback(v.Facts)
	}
	return v, g, true
}

// judgeAnswer parses the answer of a node L1 did not fail: the owner's by
// its contract, any other role's as an answer, which the L2 judge then
// reads when L1 passed it with citations.
func (e *Engine) judgeAnswer(ctx context.Context, o *Options, q *Quest, n *Node, reply agent.Reply, g gates.Grounder, v gates.Verdict, res result) result {
	if n.Role == RoleOwner {
		oa, facts := gates.ParseOwnerAnswer(reply.Output)
		if len(facts) > 0 {
			return res.failParse(facts)
		}
		res.owner = &oa
		return res
	}
	a, facts := gates.ParseAnswer(reply.Output)
	if len(facts) > 0 {
		return res.failParse(facts)
	}
	res.answer = &a
	if res.kind == resPass && o.Judge != nil && len(a.Citations) > 0 {
		e.judgeL2(ctx, o, q, n, a, g, v, &res)
	}
	return res
}

// failParse fails res with the facts of an answer that did not parse, added
// to the gate's own; the engine found this failure, so it has no root rule.
func (res result) failParse(facts []gates.Fact) result {
	all := append(res.facts, facts...)
	res.kind, res.facts, res.feedback, res.root = resFail, all, Feedback(all), ""
	return res
}

// observer is what the judge needs of a grounder: a fetched body, read from
// the evaluation's snapshot without fetching again.
type observer interface {
	Observe(ctx context.Context, r gates.Request) (gates.Observation, error)
}

// judgeL2 asks the L2 judge about a claim L1 passed. The judge can only
// lower the verdict to REVIEW (judge.Combine); a judge that cannot be
// reached defers the node like any network stage. The judge is never
// asked when q's egress does not allow a tier's vendor (the configuration
// changed since q was created), nor while q waits for its egress consent
// (q does not run then, so only an answer already on its way meets it):
// nothing is sent, and the quest stops saying why.
func (e *Engine) judgeL2(ctx context.Context, o *Options, q *Quest, n *Node, a gates.Answer, g gates.Grounder, l1 gates.Verdict, res *result) {
	if why := e.judgeNotAllowed(q); why != "" {
		res.kind, res.why = resStopQuest, why+"; nothing was sent to the judge"
		return
	}
	if why := humangate.EgressHeld(q); why != "" {
		res.kind, res.why = resStopQuest, "the L2 judge was not asked: "+why
		return
	}
	sources := map[string]string{}
	for k, v := range e.opt.Sources {
		sources[k] = v
	}
	if ob, ok := g.(observer); ok {
		for _, c := range a.Citations {
			if strings.HasPrefix(c.Source, "http://") || strings.HasPrefix(c.Source, "https://") {
				if obs, err := ob.Observe(ctx, gates.Request{Kind: gates.ReqFetchURL, Target: c.Source}); err == nil && obs.Transport == "" {
					sources[c.Source] = obs.Body
				}
			}
		}
	}
	seed := binary.BigEndian.Uint64([]byte(res.claim[:16] + "00000000")[:8])
	b, err := o.Judge.Batch(ctx, judge.ItemsFromAnswer(n.ID, a, sources), seed)
	if err != nil {
		if ctx.Err() != nil {
			res.kind, res.why = resInterrupted, "run cancelled during judging"
		} else {
			res.kind, res.why = resDeferred, "L2 judge unavailable: "+err.Error()
		}
		return
	}
	v := judge.Combine(l1, b.Results...)
	if v.Outcome == gates.OutcomePass {
		return
	}
	res.kind, res.facts, res.feedback = resReview, v.Facts, Feedback(v.Facts)
	res.why = "the L2 judge raised doubt"
	res.reasons = doubtReasons(a, b)
	if h, ok := b.Human(); ok {
		res.why = "escalated to a human: " + h.Reason
		res.reasons = append(res.reasons, ConsentReason{Kind: ReasonJudge, Text: res.why})
	}
}

// doubtReasons are the reasons of a judge's doubts: each result that is
// not clear, with the citation it judged (the batch's items are a's
// citations, in order: judge.ItemsFromAnswer).
func doubtReasons(a gates.Answer, b judge.Batch) []ConsentReason {
	var out []ConsentReason
	for i, r := range b.Results {
		if r.Cleared() {
			continue
		}
		f := r.Fact()
		rs := ConsentReason{Kind: ReasonJudge, Text: f.String(), Fact: &f}
		if i < len(a.Citations) {
			rs.Source, rs.Quote = a.Citations[i].Source, a.Citations[i].Quote
		}
		out = append(out, rs)
	}
	return out
}

// ancestors returns the hypotheses of n's ancestors, nearest first.
func (e *Engine) ancestors(n *Node) ([]string, error) {
	var out []string
	err := e.store.view(func(tx *store.Tx) error {
		for p := n.Parent; p != "" && len(out) < 64; {
			a, err := records.ReadNode(tx, p)
			if err != nil {
				return err
			}
			out = append(out, a.Hypothesis)
			p = a.Parent
		}
		return nil
	})
	return out, err
}

// complete records the result of a spawned run in one transaction, shared
// with the results committed at the same time (group commit). A node that
// is no longer running this run (aborted meanwhile) keeps its status; the
// run is recorded as discarded. tk is the write's announcement, or nil.
func (e *Engine) complete(nodeID, runID string, res result, tk *ticket) error {
	return e.batch(e.completion(nodeID, runID, res), tk)
}

// completion is complete's write, for the group commit (complete, and
// record, which queues it without waiting).
func (e *Engine) completion(nodeID, runID string, res result) func(t *txn) error {
	e.mu.Lock()
	closing := e.closing
	e.mu.Unlock()
	return func(t *txn) error {
		n, err := t.Node(nodeID)
		if err != nil {
			return err
		}
		if res.redacted {
			if err := t.NoteRedacted(n, runID); err != nil {
				return err
			}
		}
		if n.Status != Running || len(n.Runs) == 0 || n.Runs[len(n.Runs)-1] != runID {
			// The answer is dropped, but the provider spent it: it
			// counts against token_budget, in place of what the abort
			// charged (endRun). The quest is saved only if that changes.
			q, err := t.Peek(n.Quest)
			if err != nil {
				return err
			}
			return t.EndRun(q, n, runID, runEnd{outcome: "discarded", tokens: res.tokens, cost: res.cost, msg: fmt.Sprintf("node is %s; the answer was dropped", n.Status),
				bytesIn: res.bytesIn, bytesOut: res.bytesOut})
		}
		q, err := t.Quest(n.Quest)
		if err != nil {
			return err
		}
		if res.kind == resInterrupted && closing {
			res.why = "the daemon is shutting down; no try consumed"
		}
		if err := t.apply(q, n, runID, res); err != nil {
			return err
		}
		if q.Queued[queuedCouncil] != "" || len(q.PhaseGates) > 0 {
			// A member answered (the next may dispatch, or the
			// merge is due), or a phase's work may be done: the
			// quest's council or gates follow up (chain.go).
			t.FollowUp(q, "")
		}
		return t.StillRunning(q)
	}
}

// apply moves a running node according to its result (package verdict's
// rules); a Team stage's PASS is the Team's (StagePassed).
func (t *txn) apply(q *Quest, n *Node, runID string, res result) error {
	if err := t.settleRun(q, n, runID, res); err != nil {
		return err
	}
	j := res.judged(n)
	if done, err := verdict.ApplyUnjudged(t, q, n, runID, &j); done {
		return err
	}
	if err := verdict.Record(t, q, n, &j); err != nil {
		return err
	}
	if j.Kind == resPass && res.stage != nil {
		return t.StagePassed(q, n, runID, res)
	}
	return verdict.ApplyVerdict(t, q, n, runID, &j)
}

// settleRun ends the run and its accounting: tokens (in place of its
// reservation, endRun), the agent-run count (a run the agent never
// answered does not count) and the node's deferral streak and kept
// claim.
func (t *txn) settleRun(q *Quest, n *Node, runID string, res result) error {
	if err := t.EndRun(q, n, runID, runEnd{outcome: res.outcome(), tokens: res.tokens, cost: res.cost, msg: res.why,
		exit: res.exit, exitCode: res.exitCode, bytesIn: res.bytesIn, bytesOut: res.bytesOut}); err != nil {
		return err
	}
	if res.kind <= resStopQuest && len(res.raw) == 0 && !res.replay && q.Counters.AgentRuns > 0 {
		// The agent never answered: the run does not count against
		// max_agent_runs (an unreachable provider retried every tick
		// must not terminate the quest).
		q.Counters.AgentRuns--
	}
	if res.kind != resDeferred {
		n.Deferrals = 0
	}
	if res.kind != resInterrupted && res.kind != resStopQuest {
		n.Claim = nil // a new answer replaces any kept one
	}
	return nil
}

// FailTry consumes a try: back to pending, or exhausted at max_tries
// (verdict.FailTry).
func (t *txn) FailTry(q *Quest, n *Node, outcome string) error {
	return verdict.FailTry(t, q, n, outcome)
}

// Pass moves n to passed and on to its terminal status per the agent's
// verdict, applying the quest mode's consequences (verdict.Pass).
func (t *txn) Pass(q *Quest, n *Node, a *gates.Answer, o *gates.OwnerAnswer, outcome string) error {
	return verdict.Pass(t, q, n, a, o, outcome)
}

// The no_progress signals besides the answer's (verdict.StallFacts, ...).
const (
	StallFacts      = verdict.StallFacts
	StallEvidence   = verdict.StallEvidence
	StallTeamReject = verdict.StallTeamReject
)

// ownStallMaps gives q stall maps that it alone holds, to change: new
// ones when it has none, and copies when t may have read q from the
// tickmem.QuestCache (fromCache), whose quest's they may be (the shared maps, tickmem.QuestCache), once
// (a verdict counts two signals in a row). A transaction that decoded
// its quests changes them in place.
func (t *txn) ownStallMaps(q *Quest) {
	if t.fromCache && t.ownStall != q || q.StallSigs == nil || q.StallCounts == nil {
		t.ownStall = q
		sigs := make(map[string]string, len(q.StallSigs)+1)
		counts := make(map[string]int, len(q.StallCounts)+1)
		maps.Copy(sigs, q.StallSigs)
		maps.Copy(counts, q.StallCounts)
		q.StallSigs, q.StallCounts = sigs, counts
	}
}
