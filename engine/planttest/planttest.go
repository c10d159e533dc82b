// Package planttest plants a council and Teams (docs/design.md, "Councils and
// Teams") into a quest through the engine's Plant API, the way the engine
// lays them out, for the tests of the faces that show them: the API, `quest
// show`, the dashboard, the LEDs, MQTT, export, verify and salvage.
package planttest

import (
	"fmt"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/gates"
)

// Fixture names what V32 planted.
type Fixture struct {
	Quest string
	// Owner is council_pending in its design phase; Reviewer runs;
	// Judges answered, the first passing and the second (dissenting)
	// asking for a revision.
	Owner, Reviewer string
	Judges          []string
	// Blocked is a poc Team rejected twice (team_blocked), with its
	// stages oldest first; Revising is a scout Team whose accepter
	// rejected once and whose executer runs again.
	Blocked, Revising             string
	BlockedStages, RevisingStages []string
}

// Dissent is what the second judge dissents with, a fact on it.
const Dissent = "the evidence cites one invoice only"

// V32 makes quest (a team quest) a v3.2 quest with a council of one
// reviewer and two judges, and plants an owner in council and two Teams.
func V32(e *engine.Engine, quest string) (Fixture, error) {
	f := Fixture{Quest: quest}
	p := planter{e: e, quest: quest}
	p.err = e.PlantQuest(quest, func(q *engine.Quest) {
		q.RoleProviders = map[string]string{engine.RoleJudge: "claude", engine.RoleReviewer: "local"}
		q.Egress = []string{"local", "anthropic", "google"}
		q.CouncilReviewers, q.CouncilJudges = []string{"local"}, []string{"claude", "gemini"}
		q.Teams, q.MaxRevisions, q.AcceptMode = true, 2, "judge"
	})
	f.Owner = p.node(engine.Node{Role: engine.RoleOwner, Hypothesis: "triage the proposals", Status: engine.CouncilPending,
		Phase: engine.PhaseDesign}, "")
	f.Reviewer = p.member(f.Owner, engine.RoleReviewer, "local", engine.Running, "", "", false)
	f.Judges = []string{
		p.member(f.Owner, engine.RoleJudge, "claude", engine.Explored, "pass", "", true),
		p.member(f.Owner, engine.RoleJudge, "gemini", engine.Explored, "revise", Dissent, true),
	}
	f.Blocked = p.node(engine.Node{Parent: f.Owner, Role: engine.RolePOC, Hypothesis: "build the OCR pipeline", Status: engine.TeamBlocked,
		TeamKind: engine.RolePOC, RevisionCount: 2, MaxRevisions: 2, Outcome: "FAIL"}, engine.EdgeSpawned)
	f.BlockedStages = p.stages(f.Blocked, []stage{
		{engine.StagePlan, engine.Explored, "promising", 0},
		{engine.StageExec, engine.Explored, "promising", 0},
		{engine.StageAccept, engine.Explored, "reject", 0},
		{engine.StageExec, engine.Explored, "promising", 1},
		{engine.StageAccept, engine.Explored, "reject", 1},
	})
	f.Revising = p.node(engine.Node{Parent: f.Owner, Role: engine.RoleScout, Hypothesis: "survey free OCR engines", Status: engine.Revising,
		TeamKind: engine.RoleScout, RevisionCount: 1, MaxRevisions: 2}, engine.EdgeSpawned)
	f.RevisingStages = p.stages(f.Revising, []stage{
		{engine.StagePlan, engine.Explored, "promising", 0},
		{engine.StageExec, engine.Explored, "promising", 0},
		{engine.StageAccept, engine.Explored, "reject", 0},
		{engine.StageExec, engine.Pending, "", 1},
	})
	return f, p.err
}

type stage struct {
	stage   string
	status  engine.Status
	verdict string
	rev     int
}

var stageRole = map[string]string{engine.StagePlan: engine.RolePlanner, engine.StageExec: engine.RoleExecuter, engine.StageAccept: engine.RoleAccepter}

type planter struct {
	e     *engine.Engine
	quest string
	err   error
	seq   int
}

func (p *planter) node(n engine.Node, rel string) string {
	if p.err != nil {
		return ""
	}
	made, err := p.e.PlantNode(p.quest, n, rel)
	if err != nil {
		p.err = fmt.Errorf("plant %s %q: %w", n.Role, n.Hypothesis, err)
		return ""
	}
	return made.ID
}

func (p *planter) edge(from, to, rel string) {
	if p.err == nil {
		p.err = p.e.PlantEdge(p.quest, from, to, rel)
	}
}

func (p *planter) member(owner, role, provider string, st engine.Status, verdict, dissent string, replied bool) string {
	p.seq++
	n := engine.Node{Parent: owner, Role: role, Provider: provider, Status: st, Verdict: verdict,
		Hypothesis: fmt.Sprintf("council member %d (%s, %s) of %s", p.seq, role, provider, owner)}
	if dissent != "" {
		n.Facts = []gates.Fact{{Rule: engine.RuleCouncilDissent, Level: gates.Review, Where: "answer", Expected: "the majority's actions", Actual: dissent}}
	}
	id := p.node(n, engine.EdgeCouncilOf)
	if replied {
		p.edge(id, owner, engine.EdgeCouncilReply)
	}
	return id
}

// stages plants a Team's stage nodes in order, each linked from the one
// before it, as a Team links its stages (docs/design.md, "Teams").
func (p *planter) stages(team string, ss []stage) []string {
	var ids []string
	prev := team
	for i, s := range ss {
		rel := engine.EdgeStagesInto
		switch {
		case i == 0:
		case ss[i-1].stage == engine.StageAccept:
			rel = engine.EdgeRejectsTo
		case s.stage == engine.StageExec:
			rel = engine.EdgeMakesPlan
		default:
			rel = engine.EdgeExecutes
		}
		n := engine.Node{Parent: prev, Role: stageRole[s.stage], Status: s.status, Verdict: s.verdict, Team: team, Stage: s.stage,
			RevisionCount: s.rev, MaxRevisions: 2, Hypothesis: fmt.Sprintf("%s of %s, revision %d", s.stage, team, s.rev)}
		if s.verdict == "reject" {
			n.Outcome = "FAIL"
		}
		id := p.node(n, rel)
		ids = append(ids, id)
		prev = id
	}
	return ids
}
