package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/gates"
	"github.com/questbox/questbox/internal/daemon/daemontest"
	"github.com/questbox/questbox/ui/api"
)

// demoMaxTicks is two minutes of `make run`'s 5s tick.
const demoMaxTicks = 24

// TestDemoShowsCouncilTeamsAndButton runs the real daemon as `make run` does
// (`run --demo` on a fresh data directory; its own tick is an hour away, so
// every tick is one `questbox tick` through it, which waits for the tick's
// runs just as a 5s tick outlasts the demo's 2s answers) and counts the ticks
// until the demo quest has shown (docs/design.md, "The demo"): a council vote
// with a dissent (a council-dissent fact on the owner), a Team rejected once
// and revised (a rejects_to edge), and one consent that waits for the button
// (a node awaiting_consent). All three must show within demoMaxTicks, two
// minutes at 5s. Then the virtual button's long press, through the daemon,
// grants that consent.
func TestDemoShowsCouncilTeamsAndButton(t *testing.T) {
	data := daemontest.ShortDir(t)
	dm := startDaemon(t, data, "--demo", "--gpio", "sim", "--listen", "127.0.0.1:0")
	waitBooted(t, data)

	var (
		seen                           = map[string]int{} // what showed -> at which tick
		dissent, rejected, awaiting, q string
		v                              api.QuestDetail
	)
	for tick := 1; tick <= demoMaxTicks && len(seen) < 3; tick++ {
		must(t, 0, "", "tick", "--data", data)
		var qs []api.Quest
		decode(t, must(t, 0, "", "quest", "list", "--json", "--data", data), &qs)
		if len(qs) != 1 || !strings.HasPrefix(qs[0].Name, "demo:") || qs[0].Provider != engine.ProviderDemo {
			t.Fatalf("quests after run --demo: %+v, want the one demo quest", qs)
		}
		q = qs[0].ID
		v = showQuest(t, data, q)
		for _, n := range v.Nodes {
			if n.Role == engine.RoleOwner && dissent == "" && slices.ContainsFunc(n.Facts, func(f api.Fact) bool { return f.Rule == engine.RuleCouncilDissent }) {
				dissent, seen["dissent"] = n.ID, tick
			}
			if n.Status == api.NodeAwaitingConsent && awaiting == "" {
				awaiting, seen["consent"] = n.ID, tick
			}
		}
		for _, e := range v.Edges {
			if e.Relation == engine.EdgeRejectsTo && rejected == "" {
				rejected, seen["revision"] = e.From+"->"+e.To, tick
			}
		}
	}
	t.Logf("demo: revision %s at tick %d, dissent on %s at tick %d, consent on %s at tick %d",
		rejected, seen["revision"], dissent, seen["dissent"], awaiting, seen["consent"])
	if len(seen) < 3 {
		t.Fatalf("after %d ticks (2 minutes at 5s) the demo has shown only %v; want a dissent, a revision and a consent\n%s",
			demoMaxTicks, seen, dm.stdout.String())
	}

	// The dissent is a council member's vote: a reviewer under the owner.
	var voters []string
	for _, n := range v.Nodes {
		if n.Parent == dissent && (n.Role == engine.RoleReviewer || n.Role == engine.RoleJudge) {
			voters = append(voters, n.Role)
		}
	}
	if !slices.Contains(voters, engine.RoleReviewer) || !slices.Contains(voters, engine.RoleJudge) {
		t.Errorf("owner %s: council members %v, want a reviewer and judges", dissent, voters)
	}
	acc := nodeOf(t, v, awaiting)
	if acc.Stage != engine.StageAccept || acc.Team == "" {
		t.Fatalf("the consent is on %s (%s stage %q), want a Team's accept", acc.ID, acc.Role, acc.Stage)
	}
	if n := nodeOf(t, v, acc.Team); n.Status != api.NodeRevising {
		t.Errorf("Team %s before the button: %s, want revising", n.ID, n.Status)
	}
	if v.Quest.Status != "active" {
		t.Errorf("quest %s while the consent waits: %s, want active", q, v.Quest.Status)
	}

	// The request says why: the Team's accept, and the rule its
	// deliverable's conclusion fired (it cites nothing); and what a yes
	// approves, the executer's conclusion.
	var c api.Consent
	decode(t, must(t, 0, "", "consent", "show", awaiting, "--json", "--data", data), &c)
	kinds := []string{}
	for _, r := range c.Reasons {
		kinds = append(kinds, r.Kind+":"+r.Rule)
	}
	if !slices.Equal(kinds, []string{"team_accept:", "rule:" + gates.RuleCitationsPresent}) || c.Team != acc.Team ||
		c.Deliverable.Node != acc.Parent || c.Deliverable.Verdict != "conclusion" || c.Deliverable.Evidence == "" {
		t.Errorf("the demo's consent: reasons %v, team %s, deliverable %+v; want the accept of Team %s and citations-present on %s's conclusion",
			kinds, c.Team, c.Deliverable, acc.Team, acc.Parent)
	}

	r := must(t, 0, "", "device", "press", "--hold", "2s", "--data", data)
	if got, want := strings.TrimSpace(r.stdout), "long (2s): approved "+awaiting; got != want {
		t.Errorf("device press --hold 2s printed %q, want %q", got, want)
	}
	v = showQuest(t, data, q)
	if n := nodeOf(t, v, awaiting); n.Status == api.NodeAwaitingConsent || !slices.ContainsFunc(n.Attempts, func(a api.Attempt) bool { return a.Outcome == "granted" }) {
		t.Errorf("accepter %s after the button: %s, attempts %+v; want the consent granted", n.ID, n.Status, n.Attempts)
	}
	if n := nodeOf(t, v, acc.Team); n.Status != api.NodeExplored {
		t.Errorf("Team %s after the button: %s, want explored by the executer's conclusion", n.ID, n.Status)
	}
	waitFor(t, "the consent event", func() bool {
		return strings.Contains(dm.stdout.String(), q+" "+awaiting+" consent granted")
	})
}
