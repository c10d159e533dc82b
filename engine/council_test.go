package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/council"
	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/gates"
)

// scoutScript is a worker that finds two leads, "alpha lead" and "beta
// lead", whatever it is asked.
const scoutScript = "#!/bin/sh\ncat >/dev/null\ncat <<'X'\n```json\n" +
	`{"verdict":"promising","evidence":"the scout found two leads worth weighing","citations":[],"new_directions":["alpha lead","beta lead"]}` +
	"\n```\nX\n"

// memberScript is a council member's program: it keeps its prompt, notes
// the node it ran, waits at a barrier until members of its council have
// started (at most 20 s: past that it answers nothing valid and the test
// fails), then answers body, where ALPHA and BETA are the ids of the
// proposals "alpha lead" and "beta lead" read from its prompt.
func memberScript(dir, name string, barrier int, body string) string {
	return fmt.Sprintf(`#!/bin/sh
dir=%q; me=%q
prompt=$(cat)
printf '%%s\n' "$prompt" > "$dir/prompt.$me"
printf '%%s\n' "$prompt" | sed -n 's/^Node \(n[0-9]*\), hypothesis.*/\1/p' >> "$dir/ran.$me"
: > "$dir/started.$me"
i=0
while [ "$(ls "$dir" | grep -c '^started\.')" -lt %d ]; do
  i=$((i+1)); if [ $i -gt 2000 ]; then echo "barrier timed out"; exit 0; fi
  sleep 0.01
done
ALPHA=$(printf '%%s\n' "$prompt" | sed -n 's/^- \(n[0-9]*\): alpha lead$/\1/p' | head -1)
BETA=$(printf '%%s\n' "$prompt" | sed -n 's/^- \(n[0-9]*\): beta lead$/\1/p' | head -1)
printf '%%sjson\n' '`+"```"+`'
cat <<X
%s
X
printf '%%s\n' '`+"```"+`'
`, dir, name, barrier, body)
}

// commandProvider writes script to dir/name.sh and returns a command
// provider running it.
func commandProvider(t *testing.T, dir, name, script string) Provider {
	t.Helper()
	path := filepath.Join(dir, name+".sh")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := agent.NewCommand(agent.CommandConfig{Name: name, Argv: []string{"/bin/sh", path}, Timeout: time.Minute, OutputCap: 1 << 16, Env: []string{"PATH"}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

const (
	reviewerAbortsBeta = `{"confidence":0.6,"actions":[{"action":"abort","node":"$BETA","reason":"weaker"}],"dissent":"beta is weaker than it looks","notes":"alpha has the evidence"}`
	judgePromotesAlpha = `{"confidence":0.9,"actions":[{"action":"promote","node":"$ALPHA"}],"dissent":"","verdict_source":"pass","citations":[{"source":"evidence","quote":"the scout found two leads"}]}`
	reviewerFinishes   = `{"confidence":0.9,"actions":[{"action":"promote","node":"$ALPHA"},{"action":"finish","summary":"alpha it is"}],"dissent":"","notes":"done"}`
)

// councilRig is a team quest whose scout finds two leads, with a council
// of command providers, one program per member.
type councilRig struct {
	h     *harness
	q     *Quest
	dir   string
	names []string // the members' provider names: reviewers, then judges
}

func newCouncilRig(t *testing.T, reviewers, judges []string, limits func(*Limits)) *councilRig {
	t.Helper()
	dir := t.TempDir()
	provs := map[string]Provider{"scout": commandProvider(t, dir, "scout", scoutScript)}
	n := len(reviewers) + len(judges)
	var names, rs, js []string
	for i, body := range reviewers {
		name := fmt.Sprintf("rev%d", i+1)
		provs[name] = commandProvider(t, dir, name, memberScript(dir, name, n, body))
		names, rs = append(names, name), append(rs, name)
	}
	for i, body := range judges {
		name := fmt.Sprintf("judge%d", i+1)
		provs[name] = commandProvider(t, dir, name, memberScript(dir, name, n, body))
		names, js = append(names, name), append(js, name)
	}
	h := localHarness(t, Options{Providers: provs, MaxParallel: 4})
	q := h.quest(func(s *QuestSpec) {
		s.Provider, s.Mode, s.Roles = "scout", ModeTeam, []string{RoleScout, RolePOC, RoleOwner}
		s.CouncilReviewers, s.CouncilJudges = rs, js
		if limits != nil {
			limits(&s.Limits)
		}
	})
	return &councilRig{h: h, q: q, dir: dir, names: names}
}

// byHypothesis maps the quest's hypotheses to their nodes.
func (r *councilRig) byHypothesis() map[string]*Node {
	r.h.t.Helper()
	ns, err := r.h.e.Nodes(r.q.ID)
	if err != nil {
		r.h.t.Fatal(err)
	}
	out := map[string]*Node{}
	for _, n := range ns {
		out[n.Hypothesis] = n
	}
	return out
}

func (r *councilRig) owner() *Node {
	r.h.t.Helper()
	ns, err := r.h.e.Nodes(r.q.ID)
	if err != nil {
		r.h.t.Fatal(err)
	}
	for _, n := range ns {
		if n.Role == RoleOwner {
			return n
		}
	}
	r.h.t.Fatalf("no owner node in %s", describeNodes(ns))
	return nil
}

func (r *councilRig) file(name string) string {
	b, err := os.ReadFile(filepath.Join(r.dir, name))
	if err != nil {
		r.h.t.Fatalf("%s: %v", name, err)
	}
	return string(b)
}

func TestCouncilJudgeMajorityAppliesReviewersAdvise(t *testing.T) {
	r := newCouncilRig(t, []string{reviewerAbortsBeta, reviewerAbortsBeta}, []string{judgePromotesAlpha}, nil)
	r.h.tick() // the scout
	rep := r.h.tick()
	// The owner's design phase: three members dispatched in one tick.
	if len(rep.Dispatched) != 3 {
		t.Fatalf("council tick dispatched %v, want the 3 members", rep.Dispatched)
	}
	owner := r.owner()
	if owner.Status != CouncilPending || owner.Phase != PhaseDesign {
		t.Fatalf("owner: got %s phase %q, want council_pending in its design phase", owner.Status, owner.Phase)
	}
	// Each member ran once, with its own provider and its role's prompt.
	members := map[string]*Node{}
	ns, _ := r.h.e.Nodes(r.q.ID)
	for _, n := range ns {
		if domain.IsMember(n.Role) {
			members[n.ID] = n
			if n.Status != Explored || n.Parent != owner.ID {
				t.Errorf("member %s: got %s parent %s, want explored under %s (%+v)", n.ID, n.Status, n.Parent, owner.ID, n.Attempts)
			}
		}
	}
	for _, name := range r.names {
		ran := strings.Fields(r.file("ran." + name))
		if len(ran) != 1 || members[ran[0]] == nil || members[ran[0]].Provider != name {
			t.Fatalf("provider %s ran %v, want exactly one member whose provider it is", name, ran)
		}
		role := members[ran[0]].Role
		if p := r.file("prompt." + name); !strings.Contains(p, "You are the "+role) || !strings.Contains(p, "You are a "+role+" on the owner's council") {
			t.Errorf("provider %s (%s) got a prompt without its role's contract:\n%s", name, role, p)
		}
	}
	r.h.tick() // the council decides
	owner = r.owner()
	if owner.Status != Explored || owner.Phase != PhaseRun {
		t.Fatalf("owner: got %s phase %q, want explored in its run phase; facts %v", owner.Status, owner.Phase, owner.Facts)
	}
	hyps := r.byHypothesis()
	if a := hyps["alpha lead"]; a.Status != Pending {
		t.Errorf("alpha (the judge's promote): got %s, want pending", a.Status)
	}
	if b := hyps["beta lead"]; b.Status != Proposed {
		t.Errorf("beta (only the reviewers' abort): got %s, want still proposed", b.Status)
	}
	rules := map[string]int{}
	for _, f := range owner.Facts {
		rules[f.Rule]++
	}
	if rules[council.RuleAdvice] != 1 || rules[RuleCouncilDissent] != 2 {
		t.Errorf("owner facts: got %v, want one advice (the abort) and two dissents", owner.Facts)
	}
	edges, _ := r.h.e.Edges(r.q.ID)
	rel := map[string]int{}
	for _, e := range edges {
		rel[e.Relation]++
	}
	if rel[EdgeCouncilOf] != 3 || rel[EdgeCouncilReply] != 3 {
		t.Errorf("edges: got %v, want 3 council_of and 3 council_reply", rel)
	}
	if q := r.h.questNow(r.q.ID); q.Counters.AgentRuns != 4 {
		t.Errorf("agent runs: got %d, want 4 (the scout and 3 members)", q.Counters.AgentRuns)
	}
}

func TestCouncilReviewerOnlyNeverFinishes(t *testing.T) {
	r := newCouncilRig(t, []string{reviewerFinishes, reviewerFinishes}, nil, nil)
	for range 3 {
		r.h.tick()
	}
	q := r.h.questNow(r.q.ID)
	if q.Status != QuestActive {
		t.Fatalf("quest: got %s (%s), want active: a reviewer-only council never finishes", q.Status, q.Reason)
	}
	if a := r.byHypothesis()["alpha lead"]; a.Status == Proposed {
		t.Errorf("alpha: got %s, want promoted: every reviewer proposed it", a.Status)
	}
	if o := r.owner(); o.Status != Explored {
		t.Errorf("owner: got %s, want explored", o.Status)
	}
}

func TestCouncilJudgesAbstainDecideNothing(t *testing.T) {
	r := newCouncilRig(t, []string{reviewerAbortsBeta}, []string{`not json at all`}, func(l *Limits) { l.MaxTries = 1 })
	r.h.tick() // the scout
	r.h.tick() // members run; the judge fails its only try: it abstains
	r.h.tick() // the council decides nothing
	o := r.owner()
	if o.Status != Exhausted && o.Status != Pending {
		t.Fatalf("owner: got %s, want back to pending or exhausted (its try used)", o.Status)
	}
	if o.Tries != 1 {
		t.Errorf("owner tries: got %d, want 1", o.Tries)
	}
	hyps := r.byHypothesis()
	if hyps["beta lead"].Status != Proposed || hyps["alpha lead"].Status != Proposed {
		t.Errorf("proposals: got alpha %s, beta %s, want both still proposed", hyps["alpha lead"].Status, hyps["beta lead"].Status)
	}
}

func TestCouncilSurvivesCrash(t *testing.T) {
	g := newGate()
	h := localHarness(t, Options{Providers: map[string]Provider{"g": g, "scout": funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		return reply(answer("promising", "the scout found two leads worth weighing", "alpha lead", "beta lead")), nil
	})}, MaxParallel: 4})
	q := h.quest(func(s *QuestSpec) {
		s.Provider, s.Roles = "scout", []string{RoleScout, RolePOC, RoleOwner}
		s.CouncilReviewers, s.CouncilJudges = []string{"g"}, []string{"g", "g"}
	})
	h.tick()
	if _, err := h.e.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	started := []string{<-g.started, <-g.started, <-g.started}
	// kill -9 while all three members run.
	if err := h.store.Close(); err != nil {
		t.Fatal(err)
	}
	for _, id := range started {
		g.ch(id) <- reply("too late")
	}
	h.e.Wait()
	h.open()
	for _, id := range started {
		if n := h.node(id); n.Status != Pending || n.Tries != 0 {
			t.Errorf("member %s after recovery: got %s tries %d, want pending, no try used", id, n.Status, n.Tries)
		}
	}
	qq := h.questNow(q.ID)
	owner := qq.Queued[queuedCouncil]
	if owner == "" || h.node(owner).Status != CouncilPending {
		t.Fatalf("after recovery: owner %q, want still council_pending (queued %v)", owner, qq.Queued)
	}
	if qq.Counters.AgentRuns != 1 {
		t.Errorf("agent runs: got %d, want 1 (interrupted runs do not count)", qq.Counters.AgentRuns)
	}
	rep, err := h.e.Tick(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(rep.Dispatched)
	slices.Sort(started)
	if !slices.Equal(rep.Dispatched, started) {
		t.Fatalf("after restart dispatched %v, want the same members %v again", rep.Dispatched, started)
	}
	judge := `{"confidence":1,"actions":[{"action":"finish","summary":"alpha"}],"dissent":"","verdict_source":"pass","citations":[{"source":"e","quote":"two leads worth"}]}`
	for range 3 {
		id := <-g.started
		body := judge
		if h.node(id).Role == RoleReviewer {
			body = `{"confidence":0.2,"actions":[],"dissent":"too early","notes":""}`
		}
		g.ch(id) <- reply(body)
	}
	h.e.Wait()
	h.clock.Advance(time.Minute)
	h.tick()
	o := h.node(owner)
	if o.Status != Explored {
		t.Fatalf("owner: got %s, want explored; facts %v", o.Status, o.Facts)
	}
	if qq := h.questNow(q.ID); qq.Status != QuestDone {
		t.Errorf("quest: got %s, want done by the judges' finish", qq.Status)
	}
	if _, err := h.e.Verify(); err != nil {
		t.Fatal(err)
	}
	var runs []Run
	for _, id := range started {
		rs, _ := h.e.QuestRuns("", id)
		runs = append(runs, rs...)
	}
	if len(runs) != 6 {
		t.Errorf("member runs: got %d, want 6 (3 interrupted, 3 answered)", len(runs))
	}
}

// A store salvaged while a council sits keeps the council: its edges, its
// owner in council_pending, and the decision still to come.
func TestSalvageKeepsASittingCouncil(t *testing.T) {
	r := newCouncilRig(t, []string{reviewerAbortsBeta, reviewerAbortsBeta}, []string{judgePromotesAlpha}, nil)
	r.h.tick()
	r.h.tick() // the members answered; the owner still sits
	r.h.bulk(1, 200, func(s *QuestSpec) { s.Provider = ProviderExternal })
	raw, err := os.ReadFile(filepath.Join(r.h.dir, StoreFile))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, StoreFile), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	salvageEventsDamage(t, dir)
	h2 := &harness{t: t, dir: dir, clock: newFakeClock(), opt: r.h.opt}
	h2.open()
	t.Cleanup(h2.close)
	edges, err := h2.e.Edges(r.q.ID)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range edges {
		if e.Relation == EdgeCouncilOf || e.Relation == EdgeCouncilReply {
			n++
		}
	}
	if n != 6 {
		t.Fatalf("salvaged council edges: got %d, want 6 (%v)", n, edges)
	}
	q := h2.questNow(r.q.ID)
	owner := q.Queued[queuedCouncil]
	if owner == "" || h2.node(owner).Status != CouncilPending {
		t.Fatalf("salvaged quest: queued %v, want its owner still council_pending", q.Queued)
	}
	h2.tick()
	if o := h2.node(owner); o.Status != Explored {
		t.Fatalf("owner after the salvaged council decided: got %s, want explored", o.Status)
	}
}

// The demo plays council members: a demo quest with a council votes,
// keeps a dissent, and finishes by its judges' majority.
func TestDemoCouncilRunsToTheEnd(t *testing.T) {
	h := localHarness(t, Options{Providers: map[string]Provider{ProviderDemo: agent.Demo{}}, MaxParallel: 3})
	q := h.quest(func(s *QuestSpec) {
		s.Provider = ProviderDemo
		h.e.SetCouncil(s, 2, 1, nil)
	})
	for i := 0; i < 60 && h.questNow(q.ID).Status == QuestActive; i++ {
		h.tick()
	}
	got := h.questNow(q.ID)
	if got.Status != QuestDone {
		ns, _ := h.e.Nodes(q.ID)
		t.Fatalf("demo council quest: got %s (%s), want done; nodes:\n%s", got.Status, got.Reason, describeNodes(ns))
	}
	ns, _ := h.e.Nodes(q.ID)
	dissent, members := false, 0
	for _, n := range ns {
		if domain.IsMember(n.Role) {
			members++
			if n.Status != Explored {
				t.Errorf("member %s: got %s, want explored (facts %v)", n.ID, n.Status, n.Facts)
			}
		}
		for _, f := range n.Facts {
			dissent = dissent || f.Rule == RuleCouncilDissent
		}
	}
	if members == 0 || !dissent {
		t.Errorf("got %d members and dissent=%v, want a council with a dissent kept on its owner", members, dissent)
	}
}

func TestNewQuestRefusesABadCouncil(t *testing.T) {
	h := localHarness(t, Options{Providers: map[string]Provider{ProviderDemo: agent.Demo{}}})
	for _, c := range []struct {
		name string
		spec func(*QuestSpec)
		want string
	}{
		{"solo", func(s *QuestSpec) { s.Mode = ModeSolo; s.CouncilJudges = []string{ProviderDemo} }, "mode solo has no owner"},
		{"unknown provider", func(s *QuestSpec) { s.CouncilReviewers = []string{"gemini"} }, `council provider "gemini" is not configured`},
		{"external member", func(s *QuestSpec) { s.CouncilJudges = []string{ProviderExternal} }, "not external"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := h.e.NewQuestSpec("q", "d")
			s.Provider = ProviderDemo
			c.spec(&s)
			if _, err := h.e.NewQuest(s); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// phaseRig is a team quest gated at its scout phase: its scouts find a
// lead for the poc phase, its council (one reviewer, one judge) promotes
// every proposal at owner turns and, at the scout gate, revises once and
// then passes.
func phaseRig(t *testing.T, checkpoint bool) (*harness, *Quest, *int) {
	gateSittings := 0
	worker := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		if req.Role == RolePOC {
			return reply(answer("conclusion", "the poc settled the lead for good")), nil
		}
		return reply(answer("promising", "the scout found a lead worth weighing", fmt.Sprintf("lead %d", req.Attempt+req.Depth+len(req.Hypothesis)))), nil
	})
	member := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		var actions []string
		for _, p := range req.Proposals {
			actions = append(actions, fmt.Sprintf(`{"action":"promote","node":%q}`, p.Node))
		}
		list := "[" + strings.Join(actions, ",") + "]"
		verdict := gates.SourcePass
		if strings.Contains(req.Hypothesis, "scout_gate") {
			if !strings.Contains(req.Prompt, "This council is the gate of the scout phase") {
				return reply("a gate member's prompt must say which phase it closes"), nil
			}
			list = "[]"
			if req.Role == RoleJudge {
				gateSittings++
				if gateSittings == 1 {
					verdict = gates.SourceRevise
				}
			}
		}
		if req.Role == RoleReviewer {
			return reply(fmt.Sprintf(`{"confidence":0.5,"actions":%s,"dissent":"dig deeper","notes":"n"}`, list)), nil
		}
		return reply(fmt.Sprintf(`{"confidence":0.9,"actions":%s,"dissent":"","verdict_source":%q,"citations":[{"source":"e","quote":"the scout found a lead"}]}`, list, verdict)), nil
	})
	h := localHarness(t, Options{Providers: map[string]Provider{"w": worker, "m": member}, MaxParallel: 3,
		Vendors: map[string]string{"m": "local"}})
	q := h.quest(func(s *QuestSpec) {
		s.Provider, s.Roles = "w", []string{RoleScout, RolePOC, RoleOwner}
		s.CouncilReviewers, s.CouncilJudges, s.PhaseGates = []string{"m"}, []string{"m"}, []string{RoleScout}
		if checkpoint {
			s.Checkpoints = []string{"scout_gate"}
		}
	})
	return h, q, &gateSittings
}

// gatesOf lists the scout gates of q with their status and verdict, and
// whether any poc node has run.
func gatesOf(t *testing.T, h *harness, q string) (gs []*Node, pocRan bool) {
	ns, err := h.e.Nodes(q)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range ns {
		switch {
		case n.Role == "scout_gate":
			gs = append(gs, n)
		case n.Role == RolePOC && len(n.Runs) > 0:
			pocRan = true
		}
	}
	return gs, pocRan
}

func TestPhaseGateRevisesThenOpensThePhase(t *testing.T) {
	h, q, _ := phaseRig(t, false)
	opened := false
	for i := 0; i < 14; i++ {
		h.tick()
		gs, pocRan := gatesOf(t, h, q.ID)
		passed := len(gs) > 0 && gs[len(gs)-1].Status == Explored && gs[len(gs)-1].Verdict == gates.SourcePass
		if pocRan && !opened {
			t.Fatalf("tick %d: a poc node ran before the scout gate passed (gates %v)", i, describeNodes(gs))
		}
		opened = opened || passed
	}
	gs, pocRan := gatesOf(t, h, q.ID)
	if len(gs) != 2 || gs[0].Verdict != gates.SourceRevise || gs[1].Verdict != gates.SourcePass || gs[0].Phase != RoleScout {
		ns, _ := h.e.Nodes(q.ID)
		t.Fatalf("scout gates: got %s, want a revise then a pass; nodes:\n%s", describeNodes(gs), describeNodes(ns))
	}
	if !pocRan {
		ns, _ := h.e.Nodes(q.ID)
		t.Errorf("no poc ran after the scout gate passed; nodes:\n%s", describeNodes(ns))
	}
	var revision *Node
	ns, _ := h.e.Nodes(q.ID)
	for _, n := range ns {
		if strings.HasPrefix(n.Hypothesis, "Revise after "+gs[0].ID) {
			revision = n
		}
	}
	if revision == nil || revision.Role != RoleScout || len(revision.Runs) == 0 {
		t.Fatalf("revision of the scout phase: got %+v, want a scout that ran", revision)
	}
}

func TestPhaseGateCheckpointWaitsForTheButton(t *testing.T) {
	h, q, _ := phaseRig(t, true)
	var g *Node
	for i := 0; i < 10 && g == nil; i++ {
		h.tick()
		gs, pocRan := gatesOf(t, h, q.ID)
		if pocRan {
			t.Fatalf("a poc ran before the button")
		}
		if len(gs) > 0 && gs[len(gs)-1].Status == AwaitingConsent {
			g = gs[len(gs)-1]
		}
	}
	if g == nil {
		t.Fatal("the scout gate never waited for consent")
	}
	for range 3 {
		h.tick()
	}
	if _, pocRan := gatesOf(t, h, q.ID); pocRan {
		t.Fatal("a poc ran while the gate waited for the button")
	}
	if err := h.e.Approve(g.ID, button(t, g.Claim.Hash)); err != nil {
		t.Fatal(err)
	}
	if n := h.node(g.ID); n.Status != Explored || n.Verdict != gates.SourcePass {
		t.Fatalf("gate after consent: got %s %q, want explored pass", n.Status, n.Verdict)
	}
	for range 6 {
		h.tick()
	}
	if _, pocRan := gatesOf(t, h, q.ID); !pocRan {
		ns, _ := h.e.Nodes(q.ID)
		t.Errorf("no poc ran after the button; nodes:\n%s", describeNodes(ns))
	}
}

// A judge's pass quoting words its prompt never showed is a revise (the
// judge discipline): its finish does not apply.
func TestCouncilJudgeWithoutVerifiedQuoteCannotFinish(t *testing.T) {
	judge := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		return reply(`{"confidence":1,"actions":[{"action":"finish","summary":"done"}],"dissent":"","verdict_source":"pass","citations":[{"source":"e","quote":"accuracy 99.9% on every invoice"}]}`), nil
	})
	scout := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		return reply(answer("dead", "the scout found nothing worth weighing")), nil
	})
	h := localHarness(t, Options{Providers: map[string]Provider{"j": judge, "s": scout}, MaxParallel: 2,
		Vendors: map[string]string{"j": "local"}})
	q := h.quest(func(s *QuestSpec) {
		s.Provider, s.Roles = "s", []string{RoleScout, RolePOC, RoleOwner}
		s.CouncilJudges = []string{"j"}
	})
	for range 3 {
		h.tick()
	}
	if got := h.questNow(q.ID); got.Status != QuestActive {
		t.Fatalf("quest: got %s (%s), want active: an unverified pass cannot finish", got.Status, got.Reason)
	}
	ns, _ := h.e.Nodes(q.ID)
	var judged *Node
	for _, n := range ns {
		if n.Role == RoleJudge {
			judged = n
			break
		}
	}
	if judged == nil || judged.Verdict != gates.SourceRevise || len(judged.Facts) == 0 || judged.Facts[0].Rule != gates.RuleJudgeCitation {
		t.Fatalf("judge: got %+v, want verdict revise with a judge-citation fact", judged)
	}
}

// The engine's memory of a sitting council's owner (sittingOwners) is
// used only while the owner's record is the one it decoded: the same
// bytes give the same entry, without decoding again; a change of the
// record (here the attempt of a sitting that decided nothing, as council.Decide
// writes it) is read again, and the seats are the next sitting's.
func TestSittingOwnerFollowsTheOwnersRecord(t *testing.T) {
	errRollback := errors.New("rolled back: the test changed the owner by hand")
	worker := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		return reply(answer("promising", "the scout found two leads worth weighing", "alpha lead", "beta lead")), nil
	})
	member := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		return reply("no vote"), nil // a try used: the council keeps sitting
	})
	h := localHarness(t, Options{Providers: map[string]Provider{"w": worker, "m": member}, MaxParallel: 3,
		Vendors: map[string]string{"m": "local"}})
	q := h.quest(func(s *QuestSpec) {
		s.Provider, s.Mode, s.Roles = "w", ModeTeam, []string{RoleScout, RolePOC, RoleOwner}
		s.CouncilReviewers, s.CouncilJudges = []string{"m"}, []string{"m", "m"}
	})
	for i := 0; i < 10 && h.questNow(q.ID).Queued[queuedCouncil] == ""; i++ {
		h.tick()
	}
	if h.questNow(q.ID).Queued[queuedCouncil] == "" {
		t.Fatal("no council sat in 10 ticks")
	}
	hypOf := func(t2 *txn, k []byte) string {
		id := subRO(t2.tx, bHyps, q.ID).Get(k)
		if id == nil {
			return ""
		}
		n, err := t2.NodeHead(string(id))
		if err != nil {
			t.Fatal(err)
		}
		return n.Hypothesis
	}
	err := h.e.update(func(t2 *txn) error {
		qq, err := t2.Quest(q.ID)
		if err != nil {
			return err
		}
		first, err := council.ReadSittingOwner(t2, qq)
		if err != nil {
			return err
		}
		again, err := council.ReadSittingOwner(t2, qq)
		if err != nil {
			return err
		}
		if again != first {
			t.Errorf("the same owner record was decoded again")
		}
		if len(first.Keys) != 3 || !strings.Contains(hypOf(t2, first.Keys[0]), "sitting 1:") {
			t.Errorf("first sitting's seats: %d keys, the first one's hypothesis %q", len(first.Keys), hypOf(t2, first.Keys[0]))
		}
		// The sitting decided nothing: the owner's record changes.
		owner, err := t2.Node(qq.Queued[queuedCouncil])
		if err != nil {
			return err
		}
		owner.AddAttempt(Attempt{At: t2.now, Outcome: "FAIL", TryUsed: true})
		if err := t2.SaveNode(owner); err != nil {
			return err
		}
		next, err := council.ReadSittingOwner(t2, qq)
		if err != nil {
			return err
		}
		if next == first || council.Sitting(next.Owner) != 2 {
			t.Fatalf("after the owner's record changed: the same entry %v, sitting %d, want a new one at sitting 2", next == first, council.Sitting(next.Owner))
		}
		want := council.KeysOf(t2, council.Seats(qq, next.Owner, council.Sitting(next.Owner)))
		for i, k := range next.Keys {
			if string(k) != string(want[i]) || string(k) == string(first.Keys[i]) {
				t.Errorf("seat %d: the key of the wrong sitting", i)
			}
		}
		// Another make-up of the council is another set of seats.
		qq.CouncilJudges = qq.CouncilJudges[:1]
		fewer, err := council.ReadSittingOwner(t2, qq)
		if err != nil {
			return err
		}
		if len(fewer.Keys) != 2 {
			t.Errorf("a council of 1 reviewer and 1 judge: %d seats' keys, want 2", len(fewer.Keys))
		}
		return errRollback
	})
	if !errors.Is(err, errRollback) {
		t.Fatal(err)
	}
}

// A sitting owner's entry remembers its members' ids, and the tick finds
// the members by them (council.SittingMembers) only after checking that each
// node is its seat's member: ids that name other nodes (other seats'
// members, the owner, a node that does not exist, as an entry from a
// rolled-back transaction could) give the members the hypothesis index
// names, in seat order, as council.Members finds them.
func TestSittingMembersCheckTheRememberedIds(t *testing.T) {
	errRollback := errors.New("rolled back")
	worker := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		return reply(answer("promising", "the scout found two leads worth weighing", "alpha lead", "beta lead")), nil
	})
	member := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		return reply("no vote"), nil
	})
	h := localHarness(t, Options{Providers: map[string]Provider{"w": worker, "m": member}, MaxParallel: 3,
		Vendors: map[string]string{"m": "local"}})
	q := h.quest(func(s *QuestSpec) {
		s.Provider, s.Mode, s.Roles = "w", ModeTeam, []string{RoleScout, RolePOC, RoleOwner}
		s.CouncilReviewers, s.CouncilJudges = []string{"m"}, []string{"m", "m"}
	})
	for i := 0; i < 10 && h.questNow(q.ID).Queued[queuedCouncil] == ""; i++ {
		h.tick()
	}
	if h.questNow(q.ID).Queued[queuedCouncil] == "" {
		t.Fatal("no council sat in 10 ticks")
	}
	ids := func(ns []*Node) []string {
		var out []string
		for _, n := range ns {
			out = append(out, n.ID)
		}
		return out
	}
	err := h.e.update(func(t2 *txn) error {
		qq, err := t2.Quest(q.ID)
		if err != nil {
			return err
		}
		so, err := council.ReadSittingOwner(t2, qq)
		if err != nil {
			return err
		}
		want, err := council.Members(t2, qq, so.Owner)
		if err != nil {
			return err
		}
		if len(want) != 3 {
			t.Fatalf("the index names %d members, want 3", len(want))
		}
		if _, err := council.SittingMembers(t2, qq, so, false); err != nil {
			return err
		}
		learnt, err := council.ReadSittingOwner(t2, qq)
		if err != nil {
			return err
		}
		if !slices.Equal(learnt.IDs, ids(want)) {
			t.Errorf("the entry learnt the ids %v, want %v", learnt.IDs, ids(want))
		}
		for _, c := range []struct {
			name string
			ids  []string
		}{
			{"as learnt", ids(want)},
			{"other seats' members", []string{want[1].ID, want[2].ID, want[0].ID}},
			{"the owner and nodes that do not exist", []string{so.Owner.ID, "n99999", ""}},
			{"fewer", []string{want[0].ID}},
		} {
			for _, afterOwner := range []bool{false, true} {
				e := *learnt
				e.IDs = c.ids
				if afterOwner {
					// As the tick reads them: the owner's record, then
					// its members with steps of the node cursor.
					if _, err := council.ReadSittingOwner(t2, qq); err != nil {
						return err
					}
				}
				got, err := council.SittingMembers(t2, qq, &e, afterOwner)
				if err != nil {
					return err
				}
				if !slices.Equal(ids(got), ids(want)) {
					t.Errorf("%s, after the owner %v: got the members %v, want %v", c.name, afterOwner, ids(got), ids(want))
				}
				for i, m := range got {
					if !reflect.DeepEqual(m, want[i]) {
						t.Errorf("%s, after the owner %v: member %s read as %+v, want %+v", c.name, afterOwner, m.ID, *m, *want[i])
					}
				}
			}
		}
		// A step of the node cursor reads only the record right after
		// the one read before.
		if _, err := t2.NodeHead(want[0].ID); err != nil {
			return err
		}
		if m, ok, err := t2.NextNodeHead(want[2].ID, nil); ok || err != nil {
			t.Errorf("a step from %s read %s as %v (ok %v, %v), want no read: it is not the next record", want[0].ID, want[2].ID, m, ok, err)
		}
		if _, err := t2.NodeHead(want[0].ID); err != nil {
			return err
		}
		if m, ok, err := t2.NextNodeHead(want[1].ID, nil); !ok || err != nil || !reflect.DeepEqual(m, want[1]) {
			t.Errorf("a step from %s to %s read %v (ok %v, %v), want %+v", want[0].ID, want[1].ID, m, ok, err, *want[1])
		}
		return errRollback
	})
	if !errors.Is(err, errRollback) {
		t.Fatal(err)
	}
}

// The tick takes a sitting council's owner and members from the engine's
// memory of the sitting at the quest's revision (council.TickSitting, council.SittingAt)
// when a write handed it over or a tick read it: what it takes is, at
// every step of a council's life (members pending for want of a slot,
// running, answered; sittings that decide nothing and sit again), what
// the store says, and the memory is used.
func TestTickSittingIsWhatTheStoreSays(t *testing.T) {
	errRollback := errors.New("rolled back: a check reads only")
	worker := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		return reply(answer("promising", "the scout found two leads worth weighing", "alpha lead", "beta lead")), nil
	})
	// A member's run arrives, then waits for the test to let it answer.
	arrived, answer := make(chan struct{}), make(chan struct{})
	member := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		arrived <- struct{}{}
		<-answer
		return reply("no vote"), nil // a try used: the council sits again
	})
	// Two slots for a council of three: a member waits pending while the
	// others run.
	h := localHarness(t, Options{Providers: map[string]Provider{"w": worker, "m": member}, MaxParallel: 2,
		Vendors: map[string]string{"m": "local"}})
	q := h.quest(func(s *QuestSpec) {
		s.Provider, s.Mode, s.Roles = "w", ModeTeam, []string{RoleScout, RolePOC, RoleOwner}
		s.CouncilReviewers, s.CouncilJudges = []string{"m"}, []string{"m", "m"}
		s.Limits.MaxTries = 50
	})
	hits, checks := 0, 0
	check := func(when string) {
		t.Helper()
		err := h.e.update(func(t2 *txn) error {
			qq, err := t2.Peek(q.ID) // pristine, as the tick reads it
			if err != nil || qq.Queued[queuedCouncil] == "" {
				return err
			}
			checks++
			if h.e.sittings.AtRev(qq.ID, qq.Rev, len(qq.CouncilReviewers), len(qq.CouncilJudges)) != nil {
				hits++
			}
			so, got, err := council.TickSitting(t2, qq)
			if err != nil {
				return err
			}
			owner, err := t2.Node(qq.Queued[queuedCouncil])
			if err != nil {
				return err
			}
			want, err := council.Members(t2, qq, owner)
			if err != nil {
				return err
			}
			if !reflect.DeepEqual(so.Owner, owner) {
				t.Errorf("%s: the owner is %+v, the store says %+v", when, *so.Owner, *owner)
			}
			if len(got) != len(want) || len(want) != 3 {
				t.Fatalf("%s: %d members, the store says %d (want 3)", when, len(got), len(want))
			}
			same := func(how string, got []*Node) {
				t.Helper()
				for i := range want {
					if !reflect.DeepEqual(got[i], want[i]) {
						t.Errorf("%s%s: member %d is %+v, the store says %+v", when, how, i, *got[i], *want[i])
					}
				}
			}
			same("", got)
			// A memory of another revision is not used: here one whose
			// first member is done.
			e := *h.e.sittings.Entry(qq.ID)
			if e.At != nil {
				stale := *e.At
				stale.Rev--
				stale.Heads = slices.Clone(stale.Heads)
				stale.Heads[0].Status = Explored
				e.At = &stale
				h.e.sittings.Put(qq.ID, &e)
				if _, got, err = council.TickSitting(t2, qq); err != nil {
					return err
				}
				same(", an older revision remembered", got)
			}
			// Nor is the memory when this transaction changed the quest's
			// nodes: the store is read.
			m, err := t2.Node(want[2].ID)
			if err != nil {
				return err
			}
			m.Feedback = "changed in this transaction"
			if err := t2.SaveNode(m); err != nil {
				return err
			}
			if _, got, err = council.TickSitting(t2, qq); err != nil {
				return err
			}
			if got[2].Feedback != m.Feedback {
				t.Errorf("%s: after a change of a member in the transaction, its head has the feedback %q", when, got[2].Feedback)
			}
			return errRollback
		})
		if err != nil && !errors.Is(err, errRollback) {
			t.Fatal(err)
		}
	}
	statuses := map[Status]bool{}
	for i := 0; i < 16; i++ {
		rep, err := h.e.Tick(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		held := 0
		for _, id := range rep.Dispatched {
			if domain.IsMember(h.node(id).Role) {
				held++
				<-arrived
			}
		}
		check(fmt.Sprintf("tick %d, its runs held", i))
		for _, ns := range h.nodesByStatus(q.ID) {
			for _, id := range ns {
				if n := h.node(id); domain.IsMember(n.Role) {
					statuses[n.Status] = true
				}
			}
		}
		for range held {
			answer <- struct{}{}
		}
		h.e.Wait()
		check(fmt.Sprintf("tick %d, its runs recorded", i))
		h.clock.Advance(time.Minute)
	}
	if checks < 10 || hits < checks/2 {
		t.Errorf("%d checks of a sitting council, %d of them from the memory: want at least 10, half of them", checks, hits)
	}
	for _, st := range []Status{Pending, Running} {
		if !statuses[st] {
			t.Errorf("no member was ever %s at a check: %v", st, statuses)
		}
	}
}

// TestMembersDispatchedTogetherAreCounted: two council members whose ids
// sort in the other order than their runs ("n10" before "n9"), both back
// to pending after a FAIL and dispatched again in one tick that does not
// save their quest. The quest's record counts neither; each running entry
// must be laid over it (overlayDispatch), not only those after the entry
// of the latest run in key order.
func TestMembersDispatchedTogetherAreCounted(t *testing.T) {
	var calls atomic.Int32
	member := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		if calls.Add(1) <= 3 {
			return reply("no vote"), nil
		}
		return voter(ctx, req)
	})
	h := localHarness(t, Options{Providers: map[string]Provider{"p": member}, MaxParallel: 3})
	q := h.quest(func(s *QuestSpec) {
		s.Provider, s.Roles = "p", []string{RoleScout, RolePOC, RoleOwner}
		s.Limits.MaxStalled = 0
		h.e.SetCouncil(s, 2, 1, nil)
	})
	// Six aborted fillers: the owner is n8, its members n9, n10, n11.
	var hyps []string
	for i := range 6 {
		hyps = append(hyps, fmt.Sprintf("filler %d", i))
	}
	res, err := h.e.Scan(q.ID, hyps)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range append([]string{"n1"}, res.Added...) {
		if _, err := h.e.AbortNode(id, "filler"); err != nil {
			t.Fatal(err)
		}
	}
	h.tick() // the members fail, each back to pending
	if got := h.node("n9"); got.Role != RoleReviewer || got.Status != Pending || got.Tries != 1 {
		t.Fatalf("n9 after the first sitting's tick: %s %s, %d tries; want a reviewer back to pending", got.Role, got.Status, got.Tries)
	}
	h.tick() // all three dispatched again in one tick
	if _, err := h.e.Verify(); err != nil {
		ns, _ := h.e.Nodes(q.ID)
		t.Fatalf("verify: %v\n%s", err, describeNodes(ns))
	}
	if got := h.questNow(q.ID).Counts; got.Get(Pending) != 0 || got.Get(Explored) != 3 {
		t.Errorf("counts %v, want the three members explored, nothing pending", got)
	}
}
