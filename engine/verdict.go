package engine

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/humangate"
	"github.com/questbox/questbox/engine/store"
	"github.com/questbox/questbox/engine/team"
	"github.com/questbox/questbox/gates"
	"github.com/questbox/questbox/gates/judge"
)

// maxDeferrals is how many deferrals in a row a node takes while the box is
// online before the network stage's failure counts as a FAIL try.
const maxDeferrals = 30

type resultKind int

const (
	resInterrupted resultKind = iota // cancelled: back to pending, no try
	resDeferred                      // network stage could not run: no try
	resStopQuest                     // provider misconfigured: quest stopped, no try
	resFail
	resReview
	resPass
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

func (r result) outcome() string {
	if r.kind == resPass && r.stage != nil && r.stage.L1 != "" {
		return r.stage.L1 // an executer's deliverable: what L1 said of it
	}
	switch r.kind {
	case resFail:
		return "FAIL"
	case resReview:
		return "REVIEW"
	case resPass:
		return "PASS"
	case resDeferred:
		return "DEFERRED"
	}
	return "INTERRUPTED"
}

// rootCause is the rule id of a FAIL's or a REVIEW's root cause, as the
// verdict event carries it: the gate's, or, when the engine found the
// failure itself (a broken contract, a run that failed), its first failing
// fact's.
func (r result) rootCause() string {
	if r.kind != resFail && r.kind != resReview {
		return ""
	}
	if r.root != "" {
		return r.root
	}
	for _, f := range r.facts {
		if f.Level == gates.Fail {
			return f.Rule
		}
	}
	if len(r.facts) > 0 {
		return r.facts[0].Rule
	}
	return ""
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
	case isMember(n.Role):
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
			a, err := readNode(tx, p)
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

// apply moves a running node according to its result.
func (t *txn) apply(q *Quest, n *Node, runID string, res result) error {
	if err := t.settleRun(q, n, runID, res); err != nil {
		return err
	}
	if done, err := t.applyUnjudged(q, n, runID, &res); done {
		return err
	}
	if err := t.recordVerdict(q, n, res); err != nil {
		return err
	}
	return t.applyVerdict(q, n, runID, res)
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

// applyUnjudged applies the results that carry no verdict: an interrupted
// run, a deferral and a stopped quest. It reports done=false for a judged
// result, and for a deferral repeated maxDeferrals times, which it turns
// into a FAIL in res for applyVerdict.
func (t *txn) applyUnjudged(q *Quest, n *Node, runID string, res *result) (done bool, err error) {
	switch res.kind {
	case resInterrupted:
		n.AddAttempt(Attempt{At: t.now, Run: runID, Outcome: "interrupted", Feedback: res.why})
		return true, t.Move(q, n, Pending, "interrupted: "+res.why)
	case resDeferred:
		n.Deferrals++
		if n.Deferrals < maxDeferrals {
			n.AddAttempt(Attempt{At: t.now, Run: runID, Outcome: "deferred", Feedback: res.why})
			n.Claim = &Claim{Hash: res.claim, Raw: string(res.raw), Since: t.now, Why: res.why, Replay: len(res.raw) > 0}
			if n.Claim.Replay && !slices.Contains(q.Replays, n.ID) {
				q.Replays = append(q.Replays, n.ID)
			}
			return true, t.Move(q, n, Deferred, res.why)
		}
		// The network is up but this stage keeps failing (a site that
		// refuses every connection): stop deferring, count it as a FAIL.
		n.Deferrals = 0
		res.kind = resFail
		res.facts = []gates.Fact{{Rule: "ground", Level: gates.Fail, Where: "network stage",
			Expected: "the network stage to run", Actual: fmt.Sprintf("deferred %d times in a row; last: %s", maxDeferrals, res.why)}}
		res.feedback = Feedback(res.facts)
	case resStopQuest:
		n.AddAttempt(Attempt{At: t.now, Run: runID, Outcome: "error", Feedback: res.why})
		if err := t.Move(q, n, Pending, "no try consumed: "+res.why); err != nil {
			return true, err
		}
		if q.Status == QuestActive {
			return true, t.SetQuestStatus(q, QuestStopped, fmt.Sprintf("needs attention: %s; fix it, then `questbox quest resume %s`", res.why, q.ID))
		}
		return true, nil
	}
	return false, nil
}

// recordVerdict writes the verdict onto the node, counts a stall for
// non-members and emits the verdict event.
func (t *txn) recordVerdict(q *Quest, n *Node, res result) error {
	n.ClaimHash = res.claim
	n.Outcome = res.outcome()
	n.Facts = res.facts
	n.Feedback = res.feedback
	if !isMember(n.Role) {
		// Members who agree are no stall (see council.go).
		if err := t.stall(q, n, res); err != nil {
			return err
		}
	}
	return t.Emit(Event{Kind: KindVerdict, Quest: q.ID, Node: n.ID, Role: n.Role, Outcome: res.outcome(),
		Facts: res.facts, Feedback: res.feedback, RootCause: res.rootCause(), ClaimHash: res.claim, Reason: res.why})
}

// applyVerdict moves the node by its verdict: a FAIL uses a try, a REVIEW
// asks for consent, a PASS passes the node (or the member, or the stage).
func (t *txn) applyVerdict(q *Quest, n *Node, runID string, res result) error {
	if res.kind == resPass && res.stage != nil {
		return t.StagePassed(q, n, runID, res)
	}
	switch res.kind {
	case resFail:
		n.AddAttempt(Attempt{At: t.now, Run: runID, Outcome: "FAIL", Facts: res.facts, Feedback: res.feedback, ClaimHash: res.claim, TryUsed: true})
		return t.FailTry(q, n, "FAIL")
	case resReview:
		n.AddAttempt(Attempt{At: t.now, Run: runID, Outcome: "REVIEW", Facts: res.facts, Feedback: res.feedback, ClaimHash: res.claim})
		n.Claim = &Claim{Hash: res.claim, Raw: string(res.raw), Since: t.now, Facts: res.facts, Why: res.why, Reasons: res.reasons,
			Answ: res.answer, Owner: res.owner}
		if err := t.Move(q, n, AwaitingConsent, res.why); err != nil {
			return err
		}
		if err := t.Ledger(n, "REVIEW", res.facts); err != nil {
			return err
		}
		return t.Emit(Event{Kind: KindConsent, Quest: q.ID, Node: n.ID, Role: n.Role, Outcome: ConsentRequested, ClaimHash: res.claim, Reason: res.why})
	case resPass:
		n.AddAttempt(Attempt{At: t.now, Run: runID, Outcome: "PASS", Facts: res.facts, ClaimHash: res.claim})
		if res.member != nil {
			return t.MemberPass(q, n, res.member)
		}
		return t.Pass(q, n, res.answer, res.owner, "PASS")
	}
	panic(fmt.Sprintf("BUG: unknown result kind %d", res.kind))
}

// FailTry consumes a try: back to pending, or exhausted at max_tries.
func (t *txn) FailTry(q *Quest, n *Node, outcome string) error {
	n.Tries++
	maxTries := maxTriesIn(t.opt, q, n.Role)
	to, why := Pending, fmt.Sprintf("%s, try %d of %d; feedback kept for the next prompt", outcome, n.Tries, maxTries)
	if n.Tries >= maxTries {
		to, why = Exhausted, fmt.Sprintf("%s %d times (max_tries %d)", outcome, n.Tries, maxTries)
	}
	if err := t.Move(q, n, to, why); err != nil {
		return err
	}
	if err := t.Ledger(n, outcome, n.Facts); err != nil {
		return err
	}
	if to == Pending {
		t.FollowUp(q, n.ID) // the retry: follow-up work (chain.go)
	}
	if to == Exhausted && n.Team != "" {
		return t.StageExhausted(q, n)
	}
	return nil
}

// The no_progress signals besides the answer's (docs/design.md,
// "Loop control"), as stallSignal names them.
const (
	// StallFacts: the same fired rules with the same facts.
	StallFacts = "facts"
	// StallEvidence: the answer's evidence unchanged after
	// normalisation (gates.NormalizeText).
	StallEvidence = "evidence"
	// StallTeamReject is the signal a Team's pipeline feeds: a Team
	// rejected for the same reason.
	StallTeamReject = "team-reject"
)

// stall implements no_progress (docs/design.md, "Loop control", "Councils and
// Teams"): the same signature (quest, role, fired rule ids, output hash)
// max_stalled times in a row stops the quest, and so does each further signal
// of a verdict: the same fired rules with the same facts (only when rules
// fired: passing answers share an empty set), and the same evidence after
// normalisation (only when the answer has evidence).
func (t *txn) stall(q *Quest, n *Node, res result) error {
	if q.Limits.MaxStalled <= 0 || stallNeutral(n, res) {
		return nil
	}
	var ids []string
	for _, f := range res.facts {
		ids = append(ids, f.Rule)
	}
	slices.Sort(ids)
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00", q.ID, n.Role, strings.Join(slices.Compact(ids), ","))
	h.Write(res.raw)
	sig := hex.EncodeToString(h.Sum(nil))[:32]
	if sig == q.StallSig {
		q.StallCount++
	} else {
		q.StallSig, q.StallCount = sig, 1
	}
	t.Track(q)
	if q.StallCount >= q.Limits.MaxStalled && q.Status == QuestActive {
		return t.SetQuestStatus(q, QuestStopped, fmt.Sprintf("no progress: the same answer and the same rules %d times in a row; needs attention (`questbox quest resume %s` after a look)", q.StallCount, q.ID))
	}
	facts := ""
	if len(res.facts) > 0 {
		fs := make([]string, len(res.facts))
		for i, f := range res.facts {
			fs[i] = strings.Join([]string{f.Rule, string(f.Level), f.Where, f.Expected, f.Actual}, "\x1f")
		}
		slices.Sort(fs)
		facts = n.Role + "\x00" + strings.Join(fs, "\x1e")
	}
	if err := t.stallSignal(q, StallFacts, facts, "the same rules fired with the same facts"); err != nil {
		return err
	}
	evidence := ""
	if ev := gates.NormalizeText(answerEvidence(n, res)); ev != "" {
		evidence = n.Role + "\x00" + ev
	}
	return t.stallSignal(q, StallEvidence, evidence, "the same evidence")
}

// answerEvidence is the evidence of the answer res judged: the parsed
// answer's, or, for an answer that failed a rule after it parsed, read
// from the raw answer again; "" when it has none.
func answerEvidence(n *Node, res result) string {
	switch {
	case res.answer != nil:
		return res.answer.Evidence
	case res.owner != nil:
		return res.owner.Evidence
	case len(res.raw) == 0:
		return ""
	case n.Role == RoleOwner:
		o, _ := gates.ParseOwnerAnswer(res.raw)
		return o.Evidence
	}
	a, _ := gates.ParseAnswer(res.raw)
	return a.Evidence
}

// stallSignal counts one observation of the no_progress signal named
// signal (StallFacts, StallEvidence, StallTeamReject, ...): extra is what
// was observed, compared with the signal's previous observation on this
// quest. The same extra max_stalled times in a row stops the quest with
// what (a phrase: "the same evidence") in its reason; a different extra
// starts the count again at 1, and "" means "nothing to compare" and
// resets the signal. Each signal counts on its own, in the quest record
// (StallSigs, StallCounts), so it survives restarts.
//
// A Team's pipeline calls it with StallTeamReject and the Team's id and
// the normalised reason of each rejection: a Team rejected max_stalled
// times in a row for the same reason stops the quest. The caller passes
// whatever should make two observations equal; extra is hashed, so it
// may be long.
func (t *txn) stallSignal(q *Quest, signal, extra, what string) error {
	if q.Limits.MaxStalled <= 0 {
		return nil
	}
	if extra == "" {
		if q.StallSigs[signal] == "" && q.StallCounts[signal] == 0 {
			return nil
		}
		t.ownStallMaps(q)
		delete(q.StallSigs, signal)
		delete(q.StallCounts, signal)
		t.Track(q)
		return nil
	}
	sum := sha256.Sum256([]byte(extra))
	sig := hex.EncodeToString(sum[:16])
	t.ownStallMaps(q)
	if q.StallSigs[signal] == sig {
		q.StallCounts[signal]++
	} else {
		q.StallSigs[signal], q.StallCounts[signal] = sig, 1
	}
	t.Track(q)
	if c := q.StallCounts[signal]; c >= q.Limits.MaxStalled && q.Status == QuestActive {
		return t.SetQuestStatus(q, QuestStopped, fmt.Sprintf("no progress: %s %d times in a row; needs attention (`questbox quest resume %s` after a look)", what, c, q.ID))
	}
	return nil
}

// ownStallMaps gives q stall maps that it alone holds, to change: new
// ones when it has none, and copies when t may have read q from the
// questCache (fromCache), whose quest's they may be (the shared maps, questCache), once
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

// Pass moves n to passed and on to its terminal status per the agent's
// verdict, applying the quest mode's consequences (docs/design.md, "Solo and
// team modes").
func (t *txn) Pass(q *Quest, n *Node, a *gates.Answer, o *gates.OwnerAnswer, outcome string) error {
	if n.Stage == StageAccept && n.Claim != nil {
		return t.AcceptConsented(q, n, outcome)
	}
	n.Claim = nil
	if err := t.Move(q, n, Passed, "gate PASS"); err != nil {
		return err
	}
	if o != nil {
		if err := t.ownerActions(q, n, o); err != nil {
			return err
		}
		if err := t.Move(q, n, Explored, "owner actions applied"); err != nil {
			return err
		}
		return t.Ledger(n, outcome, n.Facts)
	}
	if a == nil {
		return fmt.Errorf("BUG: pass without an answer for node %s", n.ID)
	}
	n.Verdict, n.Evidence, n.Citations, n.NewDirections = a.Verdict, a.Evidence, a.Citations, a.NewDirections
	to := verdictStatus[a.Verdict]
	if to == "" {
		return fmt.Errorf("BUG: verdict %q passed the contract", a.Verdict)
	}
	if err := t.Move(q, n, to, "agent verdict: "+a.Verdict); err != nil {
		return err
	}
	if err := t.Ledger(n, outcome, n.Facts); err != nil {
		return err
	}
	return t.consequences(q, n, a)
}

func (t *txn) consequences(q *Quest, n *Node, a *gates.Answer) error {
	if q.Mode == ModeTeam {
		for _, d := range a.NewDirections {
			if _, _, err := t.NewNode(q, n, t.workerRole(q), d, Proposed, EdgeProposedFrom); err != nil {
				return err
			}
		}
		return nil
	}
	switch a.Verdict {
	case gates.VerdictPromising:
		for _, d := range a.NewDirections {
			if _, _, err := t.NewNode(q, n, t.workerRole(q), d, Pending, EdgeGrewTo); err != nil {
				return err
			}
		}
	case gates.VerdictDead:
		if q.Queued[RoleStrategist] != "" || !slices.Contains(q.Roles, RoleStrategist) {
			return nil
		}
		hyp := fmt.Sprintf("Re-plan %q after the dead end %q (node %s, round %d)", q.Direction, truncate(n.Hypothesis, 80), n.ID, q.Counters.AgentRuns)
		_, _, err := t.NewNode(q, n, RoleStrategist, hyp, Pending, EdgeAbortedTo)
		return err
	case gates.VerdictConclusion:
		if n.Role == RoleStrategist && q.Status == QuestActive {
			return t.SetQuestStatus(q, QuestDone, ReasonStrategistConcluded+truncate(a.Evidence, 200))
		}
	}
	return nil
}

// workerRole is the role of nodes grown from new directions.
func (t *txn) workerRole(q *Quest) string { return workerRole(q.Roles) }

// ownerActions validates and applies an owner's actions. An invalid action
// is recorded as a fact on the owner node and never applied.
func (t *txn) ownerActions(q *Quest, owner *Node, o *gates.OwnerAnswer) error {
	owner.Evidence = o.Evidence
	finish := ""
	for i, a := range o.Actions {
		var why string
		var err error
		switch a.Action {
		case "promote", "abort":
			why, err = t.ownerOnNode(q, owner, a)
		case "spawn":
			why, err = t.ownerSpawn(q, owner, a)
		case "finish":
			finish = a.Summary
			if finish == "" {
				finish = "finished by owner"
			}
		default:
			why = fmt.Sprintf("unknown action %q", a.Action)
		}
		if err != nil {
			return err
		}
		if why != "" {
			owner.Facts = append(owner.Facts, gates.Fact{Rule: "owner-action", Level: gates.Review,
				Where: fmt.Sprintf("actions[%d] (%s %s)", i, a.Action, a.Node), Expected: "a valid action", Actual: why + "; not applied"})
		}
	}
	if finish != "" && q.Status == QuestActive {
		owner.Summary = finish
		return t.SetQuestStatus(q, QuestDone, ReasonOwnerFinished+truncate(finish, 200))
	}
	return nil
}

// ownerOnNode applies an owner's promote or abort of one node of its quest.
// It returns why the action was not applied, or "" when it was.
func (t *txn) ownerOnNode(q *Quest, owner *Node, a gates.Action) (string, error) {
	n, err := t.Node(a.Node)
	if errors.Is(err, ErrNotFound) {
		return "no such node", nil
	} else if err != nil {
		return "", err
	}
	switch {
	case n.Quest != q.ID:
		return fmt.Sprintf("node %s belongs to quest %s", n.ID, n.Quest), nil
	case n.ID == owner.ID:
		return "an owner cannot act on itself", nil
	case a.Action == "promote" && n.Status != Proposed:
		return fmt.Sprintf("node %s is %s; only a proposed node can be promoted", n.ID, n.Status), nil
	case a.Action == "promote":
		if err := t.Move(q, n, Pending, "promoted by owner "+owner.ID); err != nil {
			return "", err
		}
		if err := t.Edge(q, owner.ID, n.ID, EdgePromoted); err != nil {
			return "", err
		}
		if q.Teams {
			return "", t.OpenTeam(q, n)
		}
		return "", nil
	case n.Status.Terminal() || n.Status == Running:
		return fmt.Sprintf("node %s is %s and cannot be aborted now", n.ID, n.Status), nil
	}
	reason := "aborted by owner " + owner.ID
	if a.Reason != "" {
		reason += ": " + a.Reason
	}
	return "", t.Abort(q, n, reason)
}

// ownerSpawn applies an owner's spawn of a new hypothesis under a worker
// role. It returns why the action was not applied, or "" when it was.
func (t *txn) ownerSpawn(q *Quest, owner *Node, a gates.Action) (string, error) {
	role := a.Role
	if role == "" {
		role = t.workerRole(q)
	}
	if !slices.Contains(q.Roles, role) || role == RoleOwner {
		return fmt.Sprintf("role %q is not a worker role of this quest", role), nil
	}
	if strings.TrimSpace(a.Hypothesis) == "" {
		return "empty hypothesis", nil
	}
	n, dup, err := t.NewNode(q, owner, role, a.Hypothesis, Pending, EdgeSpawned)
	if err != nil {
		return "", err
	}
	if dup {
		return fmt.Sprintf("the quest already has this hypothesis as node %s", n.ID), nil
	}
	if q.Teams {
		return "", t.OpenTeam(q, n)
	}
	return "", nil
}
