package api

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/questbox/questbox/engine"
)

// QuestResult is what a quest found, for people: GET
// /api/quests/{id}/result, `questbox quest result`, and the dashboard's
// quest card (docs/results.md). It shows the quest's locked findings,
// each with its evidence (capped: EvidenceCap), its citations, the node
// and Team that produced it, the gate's verdict and the person who
// approved it, if one did; and, once the quest rests, how it ended. Its
// texts are capped and printable (text.go). An export (`questbox
// export`) stays the machine's record of every locked node, whole.
type QuestResult struct {
	Quest     string      `json:"quest"`
	Name      string      `json:"name"`
	Direction string      `json:"direction"`
	Status    QuestStatus `json:"status"`
	// Finished is true once the quest is done or was terminated by a
	// budget; a stopped quest may resume.
	Finished bool `json:"finished"`
	// Ending is how the quest ended, or why it rests; absent while it is
	// active.
	Ending *Ending `json:"ending,omitempty"`
	// Headline sums the findings up in one line: "1 conclusion, 2
	// growing (kept), 3 dead ends", or "no findings yet".
	Headline string        `json:"headline"`
	Counts   FindingCounts `json:"counts"`
	// Findings are the conclusions, then the growing, then the dead
	// ends, each kind in the order its nodes locked.
	Findings []Finding `json:"findings"`
	// Closed are the worker nodes and Teams locked without a finding
	// (aborted by a person or an owner, exhausted, team_blocked), the
	// first ClosedCap of them; ClosedMore counts the rest.
	Closed     []Closed `json:"closed"`
	ClosedMore int      `json:"closed_more,omitempty"`
	// Open counts the nodes not locked yet: proposed, waiting, at work.
	Open int `json:"open"`
	// EvidenceCap is how many bytes of each evidence the result shows.
	EvidenceCap int `json:"evidence_cap"`
}

// ClosedCap is how many nodes closed without a finding a result lists.
const ClosedCap = 50

// FindingCounts counts a quest's findings by kind, and its nodes closed
// without one.
type FindingCounts struct {
	Conclusions int `json:"conclusions"`
	Growing     int `json:"growing"`
	DeadEnds    int `json:"dead_ends"`
	Closed      int `json:"closed"`
}

// String is the counts as people read them: "1 conclusion, 2 growing
// (kept), 3 dead ends", or "no findings yet".
func (c FindingCounts) String() string {
	if c.Conclusions+c.Growing+c.DeadEnds == 0 {
		return "no findings yet"
	}
	return fmt.Sprintf("%s, %d growing (kept), %s", plural(c.Conclusions, "conclusion"), c.Growing, plural(c.DeadEnds, "dead end"))
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// The kinds of finding (Finding.Kind).
const (
	FindingConclusion = string(engine.FindingConclusion)
	FindingGrowing    = string(engine.FindingGrowing)
	FindingDeadEnd    = string(engine.FindingDeadEnd)
)

// Finding is one finding of a quest.
type Finding struct {
	Kind       string     `json:"kind"` // conclusion, growing, dead_end
	Node       string     `json:"node"`
	Role       string     `json:"role"`
	Status     NodeStatus `json:"status"`
	Verdict    string     `json:"verdict"`
	Hypothesis string     `json:"hypothesis"` // capped: HypothesisCap
	// Evidence is the start of the answer's evidence (EvidenceCap);
	// EvidenceBytes the whole evidence's size, and EvidenceCut the note
	// that says what was left out ("" when nothing was).
	Evidence      string `json:"evidence"`
	EvidenceBytes int    `json:"evidence_bytes"`
	EvidenceCut   string `json:"evidence_cut,omitempty"`
	// Citations are the first CitationsCap; CitationsMore counts the rest.
	Citations     []ResultCitation `json:"citations"`
	CitationsMore int              `json:"citations_more,omitempty"`
	// Team is the Team whose deliverable it is; absent for a worker's
	// own answer.
	Team *FindingTeam `json:"team,omitempty"`
	// Gate is what the quest's gate said of the answer: PASS, or REVIEW
	// (then a person approved it). Review are the facts it asked about;
	// Why says why a person had to look when no fact does (a
	// checkpoint).
	Gate   Outcome `json:"gate"`
	Review []Fact  `json:"review"`
	Why    string  `json:"why,omitempty"`
	// HumanApproved says whether a person's consent let it lock, and
	// Approval who and when.
	HumanApproved bool      `json:"human_approved"`
	Approval      *Approval `json:"approval,omitempty"`
	Locked        time.Time `json:"locked"`
}

// ResultCitation is a citation as a result shows it: its source and quote
// capped (SourceCap, HypothesisCap), Cut the bytes left out of both.
type ResultCitation struct {
	Source string `json:"source"`
	Quote  string `json:"quote"`
	Cut    int    `json:"cut,omitempty"`
}

// FindingTeam is the Team behind a finding: its kind, the executer stage
// that delivered it, the accepter stage that accepted it, and how many
// times the Team was rejected before.
type FindingTeam struct {
	Kind      string `json:"kind"`
	Executer  string `json:"executer,omitempty"`
	Accepter  string `json:"accepter,omitempty"`
	Revisions int    `json:"revisions"`
}

// Approval is a person's consent that let a finding lock: on which node
// (the finding's own, or its Team's accepter), through what (Via: button,
// dashboard:USER, mqtt), and when. Text says it in words ("approved on
// the button"); faces add the time in their own zone.
type Approval struct {
	Node string    `json:"node"`
	Via  string    `json:"via"`
	At   time.Time `json:"at"`
	Text string    `json:"text"`
}

// approvalText is how a face says who approved.
func approvalText(via string) string {
	switch kind, user, _ := strings.Cut(via, ":"); kind {
	case "button":
		return "approved on the button"
	case "dashboard":
		return "approved on the dashboard by " + user
	case "mqtt":
		return "approved over MQTT"
	}
	return "approved via " + via
}

// Closed is a node locked without a finding.
type Closed struct {
	Node       string     `json:"node"`
	Role       string     `json:"role"`
	Status     NodeStatus `json:"status"`
	Hypothesis string     `json:"hypothesis"` // capped: HypothesisCap
	Reason     string     `json:"reason"`     // capped: HypothesisCap
}

// Ending is how a quest ended, or why it rests. How is finish (its
// owner's finish action), strategist (a strategist's conclusion), no_work
// (nothing was left to run), done (an older questbox's), budget
// (terminated), stopped (a person paused it) or attention (it stopped by
// itself); Text says it in words. Statement is the owner's closing
// statement, capped (EvidenceCap; StatementCut says what was left out).
type Ending struct {
	How          string `json:"how"`
	Text         string `json:"text"`
	Reason       string `json:"reason,omitempty"`
	Node         string `json:"node,omitempty"`
	Statement    string `json:"statement,omitempty"`
	StatementCut string `json:"statement_cut,omitempty"`
}

// endingText says how a quest ended, in words.
func endingText(d engine.Ending) string {
	by := ""
	if d.Node != "" {
		by = " " + d.Node
	}
	switch d.How {
	case engine.EndedByFinish:
		return "finished by the finish action of its owner" + by
	case engine.EndedByStrategist:
		return "finished by the conclusion of its strategist" + by
	case engine.EndedNoWork:
		return "finished: no work was left"
	case engine.EndedByBudget:
		return "ended: a budget ran out"
	case engine.EndedByPerson:
		return "paused by a person; it goes on after `questbox quest resume`"
	case engine.EndedForAttention:
		return "stopped by itself: it needs attention"
	}
	return "finished"
}

// ResultView is the view of r. Every text in it that an agent or a
// person wrote is capped and printable (text.go).
func ResultView(r *engine.Result) QuestResult {
	q := r.Quest
	name, _ := shown(q.Name, HypothesisCap, false)
	dir, _ := shown(q.Direction, HypothesisCap, true)
	v := QuestResult{Quest: q.ID, Name: name, Direction: dir, Status: QuestStatus(q.Status), Finished: q.Finished(),
		Counts: findingCounts(r), Findings: make([]Finding, len(r.Findings)), Closed: []Closed{}, EvidenceCap: EvidenceCap}
	v.Headline = v.Counts.String()
	for _, s := range engine.Statuses {
		if !s.Terminal() {
			v.Open += q.Counts.Get(s)
		}
	}
	for i := range r.Findings {
		v.Findings[i] = findingView(&r.Findings[i])
	}
	closed, more := firstOf(r.Closed, ClosedCap)
	v.ClosedMore = more
	for _, n := range closed {
		hyp, _ := shown(n.Hypothesis, HypothesisCap, true)
		reason, _ := shown(n.Reason, HypothesisCap, true)
		v.Closed = append(v.Closed, Closed{Node: n.ID, Role: n.Role, Status: NodeStatus(n.Status), Hypothesis: hyp, Reason: reason})
	}
	if d := r.Ending; d.How != "" {
		st, cut := shown(d.Statement, EvidenceCap, true)
		reason, _ := shown(d.Reason, HypothesisCap, true)
		v.Ending = &Ending{How: string(d.How), Text: endingText(d), Reason: reason, Node: d.Node, Statement: st, StatementCut: CutNote(cut)}
	}
	return v
}

// firstOf is the first n of s, and how many of s it leaves out.
func firstOf[T any](s []T, n int) ([]T, int) {
	if len(s) <= n {
		return s, 0
	}
	return s[:n], len(s) - n
}

// findingCounts counts r's findings by kind.
func findingCounts(r *engine.Result) FindingCounts {
	return FindingCounts{Conclusions: r.Count(engine.FindingConclusion), Growing: r.Count(engine.FindingGrowing),
		DeadEnds: r.Count(engine.FindingDeadEnd), Closed: len(r.Closed)}
}

func findingView(f *engine.Finding) Finding {
	n := f.Node
	hyp, _ := shown(n.Hypothesis, HypothesisCap, true)
	ev, cut := shown(n.Evidence, EvidenceCap, true)
	v := Finding{Kind: string(f.Kind), Node: n.ID, Role: n.Role, Status: NodeStatus(n.Status), Verdict: n.Verdict, Hypothesis: hyp,
		Evidence: ev, EvidenceBytes: len(n.Evidence), EvidenceCut: CutNote(cut), Citations: []ResultCitation{},
		Gate: Outcome(f.Gate), Review: facts(f.Review), Why: f.Why, HumanApproved: f.Approval != nil, Locked: n.Updated}
	for i := range v.Review {
		// A fact quotes the answer (its actual): one line each, printable.
		x := &v.Review[i]
		x.Where, x.Expected, x.Actual, x.Text = Printable(x.Where, false), Printable(x.Expected, false), Printable(x.Actual, false), Printable(x.Text, false)
	}
	cites, more := firstOf(n.Citations, CitationsCap)
	v.CitationsMore = more
	for _, c := range cites {
		src, cs := shown(c.Source, SourceCap, false)
		quote, cq := shown(c.Quote, HypothesisCap, true)
		v.Citations = append(v.Citations, ResultCitation{Source: src, Quote: quote, Cut: cs + cq})
	}
	if n.TeamKind != "" {
		v.Team = &FindingTeam{Kind: n.TeamKind, Revisions: n.RevisionCount}
		if f.Executer != nil {
			v.Team.Executer = f.Executer.ID
		}
		if f.Accepter != nil {
			v.Team.Accepter = f.Accepter.ID
		}
	}
	if a := f.Approval; a != nil {
		v.Approval = &Approval{Node: a.Node, Via: a.Via, At: a.At, Text: approvalText(a.Via)}
	}
	return v
}

// result is what a quest found (QuestResult): its conclusions, what is
// still growing and the dead ends, with evidence, citations and who
// approved them.
func (s *Server) result(w http.ResponseWriter, r *http.Request, eng *engine.Engine) error {
	res, err := eng.Result(r.PathValue("id"))
	if err != nil {
		return err
	}
	return ok(w, ResultView(res))
}

// Result is GET /api/quests/{id}/result.
func (c *Client) Result(ctx context.Context, id string) (r QuestResult, err error) {
	return r, c.get(ctx, p("/api/quests/%s/result", id), &r)
}
