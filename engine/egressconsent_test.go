package engine

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// egressRig is an engine asking egress consents, with a provider "claude"
// of vendor anthropic, a local one "box", and an L2 judge whose heavy
// tier is claude's.
type egressRig struct {
	*harness
	claude, box *recorder
	judge       *tierJudge
}

func newEgressRig(t *testing.T, opt Options) *egressRig {
	r := &egressRig{claude: &recorder{answer: workerOrOwner}, box: &recorder{answer: workerOrOwner},
		judge: &tierJudge{light: "box", heavy: "claude"}}
	opt.Providers = map[string]Provider{"claude": r.claude, "box": r.box}
	opt.Vendors = map[string]string{"claude": "anthropic", "box": VendorLocal}
	opt.Judge = r.judge
	opt.EgressConsent = true
	r.harness = newHarness(t, opt)
	return r
}

// consentOf is q's pending egress consent, failing the test when there is
// none.
func (r *egressRig) consentOf(q *Quest) ConsentRequest {
	r.t.Helper()
	cs, err := r.e.Consents()
	if err != nil {
		r.t.Fatal(err)
	}
	for _, c := range cs {
		if c.Quest == q.ID && c.Role == RoleEgress {
			return c
		}
	}
	r.t.Fatalf("quest %s has no egress consent in %+v", q.ID, cs)
	return ConsentRequest{}
}

// With privacy.egress_consent, a quest whose egress names a hosted vendor
// (a council's, an external one, a Team quest) waits for one consent,
// listed with the other consents (the button's queue included) and saying
// why. Until it is given nothing of the quest
// leaves the box: no dispatch (so no judge call), `next` offers nothing,
// `submit` refuses. A long press (a button consent) lets it run.
func TestEgressConsentHoldsTheQuestUntilGiven(t *testing.T) {
	r := newEgressRig(t, Options{})
	q := r.quest(func(s *QuestSpec) {
		s.Provider, s.Roles, s.CouncilJudges = "claude", []string{RoleScout, RoleOwner}, []string{"claude"}
	})
	ext := r.quest(func(s *QuestSpec) { s.Provider, s.Egress = ProviderExternal, []string{"local", "anthropic", "openai"} })
	team := r.quest(func(s *QuestSpec) { s.Provider, s.Teams = "claude", true })
	c := r.consentOf(q)
	if want := "quest q1 would send its material to vendor anthropic (egress)"; c.Why != want {
		t.Errorf("why %q, want %q", c.Why, want)
	}
	if want := "quest q2 would send its material to vendors anthropic, openai (egress)"; r.consentOf(ext).Why != want {
		t.Errorf("why %q, want %q", r.consentOf(ext).Why, want)
	}
	if q.EgressConsent != c.Node {
		t.Errorf("the quest records its consent %q, want %q", q.EgressConsent, c.Node)
	}
	act, err := r.e.ActivityCounts(r.clock.Now())
	if err != nil || len(act.Consents) != 3 {
		t.Fatalf("the button's queue: %+v, %v; want the three egress consents", act.Consents, err)
	}
	res, err := r.e.Scan(ext.ID, []string{"a lead"})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if rep := r.tick(); len(rep.Dispatched) != 0 {
			t.Fatalf("the tick dispatched %v before the consent", rep.Dispatched)
		}
	}
	if w, err := r.e.Next(ext.ID); err != nil || w != nil {
		t.Errorf("next before the consent: %+v, %v; want nothing", w, err)
	}
	_, err = r.e.Submit(context.Background(), ext.ID, res.Added[0], []byte(citing("doc", "the page")))
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "quest q2 waits for its egress consent") {
		t.Errorf("submit before the consent: %v, want ErrBusy naming the consent", err)
	}
	if got := r.claude.roles(); len(got) != 0 || r.judge.calls() != 0 {
		t.Fatalf("before the consent claude ran %v and the judge %d times", got, r.judge.calls())
	}
	if _, err := r.e.AbortNode(c.Node, "in the way"); !errors.Is(err, ErrIllegalMove) {
		t.Errorf("aborting the egress consent: %v, want ErrIllegalMove", err)
	}

	if err := r.e.Approve(c.Node, button(t, c.ClaimHash)); err != nil {
		t.Fatalf("approve: %v", err)
	}
	if n := r.node(c.Node); n.Status != Explored || n.LastAttempt.Outcome != "granted" {
		t.Errorf("the given consent is %s (%+v), want explored, granted", n.Status, n.LastAttempt)
	}
	if qq := r.questNow(q.ID); qq.EgressConsent != "" || qq.Status != QuestActive {
		t.Errorf("after the consent the quest is %s holding %q", qq.Status, qq.EgressConsent)
	}
	r.tick()
	if got := r.claude.roles(); !slices.Equal(got, []string{RoleScout}) {
		t.Errorf("after the consent claude ran %v, want the scout", got)
	}
	// The others still wait for their own: the Team's stages never ran.
	if w, err := r.e.Next(ext.ID); err != nil || w != nil {
		t.Errorf("next of the quest still waiting: %+v, %v; want nothing", w, err)
	}
	if qq := r.questNow(team.ID); qq.Counters.AgentRuns != 0 || qq.EgressConsent == "" {
		t.Errorf("the Team quest ran %d agents, holding %q", qq.Counters.AgentRuns, qq.EgressConsent)
	}
}

// A rejection ends the quest, naming the refusal and the vendor; nothing
// of it ever runs.
func TestEgressConsentRejectEndsTheQuest(t *testing.T) {
	r := newEgressRig(t, Options{})
	q := r.quest(func(s *QuestSpec) { s.Provider = "claude" })
	c := r.consentOf(q)
	if err := r.e.Reject(c.Node, button(t, c.ClaimHash)); err != nil {
		t.Fatalf("reject: %v", err)
	}
	qq := r.questNow(q.ID)
	if want := "egress refused by a human (button): quest q1 would send its material to vendor anthropic (egress); nothing was sent"; qq.Status != QuestTerminated || qq.Reason != want {
		t.Errorf("quest %s %q, want terminated %q", qq.Status, qq.Reason, want)
	}
	if n := r.node(c.Node); n.Status != Exhausted || n.Feedback != "rejected by human" {
		t.Errorf("the refused consent is %s (%q), want exhausted, rejected by human", n.Status, n.Feedback)
	}
	r.tick()
	if got := r.claude.roles(); len(got) != 0 {
		t.Errorf("claude ran %v for a refused quest", got)
	}
	if cs, _ := r.e.Consents(); len(cs) != 0 {
		t.Errorf("consents left: %+v", cs)
	}
}

// When consent requests expire, an egress consent is asked again rather
// than dropped: the quest keeps waiting, and the button offers it again.
func TestEgressConsentAskedAgainWhenConsentsExpire(t *testing.T) {
	r := newEgressRig(t, Options{ConsentExpiry: time.Hour})
	q := r.quest(func(s *QuestSpec) { s.Provider = "claude" })
	first := r.consentOf(q)
	r.clock.Advance(2 * time.Hour)
	r.tick()
	again := r.consentOf(q)
	if again.Node != first.Node || !again.Since.After(first.Since) || r.e.ConsentExpired(again, r.clock.Now()) {
		t.Errorf("after expiry: %+v, want %s asked again", again, first.Node)
	}
	if got := r.claude.roles(); len(got) != 0 {
		t.Errorf("claude ran %v while the consent waits", got)
	}
	evs, err := r.e.Events(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range evs {
		if ev.Kind == KindConsent && ev.Node == first.Node {
			got = append(got, ev.Outcome)
		}
	}
	if want := []string{"requested", "expired", "requested"}; !slices.Equal(got, want) {
		t.Errorf("consent events %v, want %v", got, want)
	}
	if err := r.e.Approve(first.Node, button(t, first.ClaimHash)); err != nil {
		t.Errorf("approve after it was asked again: %v", err)
	}
}

// No consent is asked of a quest whose egress is local only, nor when
// privacy.egress_consent is off; and no quest may name the egress role.
func TestEgressConsentOnlyForHostedVendors(t *testing.T) {
	r := newEgressRig(t, Options{})
	r.judge.heavy = "box"
	q := r.quest(func(s *QuestSpec) { s.Provider = "box" })
	if cs, _ := r.e.Consents(); len(cs) != 0 || q.EgressConsent != "" {
		t.Errorf("a local quest asks %+v", cs)
	}
	s := r.e.NewQuestSpec("q", "d")
	s.Roles = []string{RoleScout, RoleEgress, RoleOwner}
	if _, err := r.e.NewQuest(s); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `role "egress" is the egress consent's`) {
		t.Errorf("a quest naming the egress role: %v", err)
	}

	off := newEgressRig(t, Options{})
	off.opt.EgressConsent = false
	off.restart()
	q = off.quest(func(s *QuestSpec) { s.Provider = "claude" })
	if cs, _ := off.e.Consents(); len(cs) != 0 || q.EgressConsent != "" {
		t.Errorf("with the option off a hosted quest asks %+v", cs)
	}
	off.tick()
	if got := off.claude.roles(); !slices.Equal(got, []string{RoleScout}) {
		t.Errorf("with the option off claude ran %v, want the scout", got)
	}
}
