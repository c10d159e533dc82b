package engine

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/gates"
	"github.com/questbox/questbox/gates/judge"
)

// uncited is a conclusion that cites nothing: the default gate's
// citations-present rule sends it to REVIEW.
func uncited(evidence string) string {
	raw, _ := json.Marshal(map[string]any{"verdict": "conclusion", "evidence": evidence, "citations": []any{}, "new_directions": []string{}})
	return "```json\n" + string(raw) + "\n```\n"
}

// onlyConsent returns the one consent request waiting.
func onlyConsent(t *testing.T, h *harness) ConsentRequest {
	t.Helper()
	cs, err := h.e.Consents()
	if err != nil || len(cs) != 1 {
		t.Fatalf("consents: %+v, %v; want one", cs, err)
	}
	return cs[0]
}

// kinds lists the kinds of rs, in order.
func kinds(rs []ConsentReason) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Kind)
	}
	return out
}

// TestConsentReasons: each way a claim comes to wait for a human records
// its own reason with the claim, and the request shows it with what a yes
// approves.
func TestConsentReasons(t *testing.T) {
	submit := func(t *testing.T, h *harness, spec func(*QuestSpec), raw string) ConsentRequest {
		t.Helper()
		q := h.quest(func(s *QuestSpec) {
			s.Provider = ProviderExternal
			if spec != nil {
				spec(s)
			}
		})
		res, _ := h.e.Scan(q.ID, []string{"tesseract jpn"})
		r, err := h.e.Submit(context.Background(), q.ID, res.Added[0], []byte(raw))
		if err != nil || r.Status != AwaitingConsent {
			t.Fatalf("submit: %+v, %v; want awaiting_consent", r, err)
		}
		return onlyConsent(t, h)
	}

	t.Run("rule", func(t *testing.T) {
		h := newHarness(t, Options{})
		c := submit(t, h, nil, uncited("tesseract read 38 of 40 receipts"))
		if got := kinds(c.Reasons); !slices.Equal(got, []string{ReasonRule}) {
			t.Fatalf("reasons %v, want one rule", got)
		}
		r := c.Reasons[0]
		if r.Fact == nil || r.Fact.Rule != gates.RuleCitationsPresent || r.Fact.Level != gates.Review || r.Text != r.Fact.String() {
			t.Errorf("reason %+v, want the citations-present fact", r)
		}
		if d := c.Deliverable; d.Node != c.Node || d.Verdict != "conclusion" || d.Evidence != "tesseract read 38 of 40 receipts" {
			t.Errorf("deliverable %+v, want the node's conclusion", d)
		}
	})

	t.Run("checkpoint", func(t *testing.T) {
		h := newHarness(t, Options{})
		c := submit(t, h, func(s *QuestSpec) { s.Checkpoints = []string{RoleScout} }, answer("promising", "tesseract reads most receipts", "try jpn_vert"))
		if len(c.Reasons) != 1 || c.Reasons[0].Kind != ReasonCheckpoint || c.Reasons[0].Role != RoleScout || c.Reasons[0].Text != "checkpoint of role scout" {
			t.Errorf("reasons %+v, want the checkpoint of role scout", c.Reasons)
		}
		if len(c.Deliverable.Citations) != 0 || c.Deliverable.Verdict != "promising" {
			t.Errorf("deliverable %+v", c.Deliverable)
		}
	})

	t.Run("rule at a checkpoint", func(t *testing.T) {
		h := newHarness(t, Options{})
		c := submit(t, h, func(s *QuestSpec) { s.Checkpoints = []string{RoleScout} }, uncited("tesseract read 38 of 40 receipts"))
		if got := kinds(c.Reasons); !slices.Equal(got, []string{ReasonRule, ReasonCheckpoint}) {
			t.Errorf("reasons %v, want the rule and the checkpoint", got)
		}
		if c.Why != "the gate asks for review" {
			t.Errorf("why %q", c.Why)
		}
	})

	t.Run("judge", func(t *testing.T) {
		h := newHarness(t, Options{Judge: &doubter{}})
		c := submit(t, h, nil, citing("https://example.org/a", "forty-two"))
		if len(c.Reasons) != 1 {
			t.Fatalf("reasons %+v, want one doubt", c.Reasons)
		}
		r := c.Reasons[0]
		if r.Kind != ReasonJudge || r.Fact == nil || r.Fact.Rule != judge.RuleJudge || r.Source != "https://example.org/a" || r.Quote != "forty-two" ||
			!strings.Contains(r.Text, "the quote does not support the claim") {
			t.Errorf("reason %+v, want the judge's doubt of the citation with its quote", r)
		}
		if d := c.Deliverable; len(d.Citations) != 1 || d.Citations[0].Quote != "forty-two" {
			t.Errorf("deliverable %+v, want the cited quote", d)
		}
	})

	t.Run("team accept", func(t *testing.T) {
		h := newHarness(t, Options{Providers: map[string]Provider{"demo": agent.Demo{}}})
		q := h.quest(func(s *QuestSpec) {
			s.Provider, s.Teams = "demo", true
			s.Direction = "find the most accurate free OCR for Japanese invoices"
		})
		var c ConsentRequest
		for i := 0; i < 60 && c.Node == ""; i++ {
			h.tick()
			if cs, _ := h.e.Consents(); len(cs) > 0 {
				c = cs[0]
			}
		}
		if c.Node == "" {
			ns, _ := h.e.Nodes(q.ID)
			t.Fatalf("no accept waited for the button\n%s", describeNodes(ns))
		}
		acc := h.node(c.Node)
		if c.Stage != StageAccept || c.Team != acc.Team || c.Team == "" {
			t.Errorf("request %+v, want the accept stage of its Team", c)
		}
		if got := kinds(c.Reasons); !slices.Equal(got, []string{ReasonTeamAccept, ReasonRule}) {
			t.Fatalf("reasons %v, want the Team's accept and the deliverable's rule", got)
		}
		if r := c.Reasons[0]; r.Team != acc.Team || !strings.HasPrefix(r.Text, "human accept of Team "+acc.Team+" ") {
			t.Errorf("reason %+v, want the human accept of Team %s", r, acc.Team)
		}
		if f := c.Reasons[1].Fact; f == nil || f.Rule != gates.RuleCitationsPresent {
			t.Errorf("reason %+v, want the deliverable's citations-present", c.Reasons[1])
		}
		exec := h.node(acc.Parent)
		if d := c.Deliverable; d.Node != exec.ID || d.Evidence != exec.Evidence || d.Evidence == "" || d.Verdict != exec.Verdict {
			t.Errorf("deliverable %+v, want executer %s's (%q)", d, exec.ID, exec.Evidence)
		}
	})

	t.Run("egress", func(t *testing.T) {
		r := newEgressRig(t, Options{})
		q := r.quest(func(s *QuestSpec) { s.Provider = "claude" })
		c := r.consentOf(q)
		if len(c.Reasons) != 1 || c.Reasons[0].Kind != ReasonEgress || c.Reasons[0].Text != c.Why {
			t.Errorf("reasons %+v, want the egress with its why %q", c.Reasons, c.Why)
		}
		if !strings.Contains(c.Deliverable.Evidence, "may send its material") || !strings.Contains(c.Deliverable.Evidence, "anthropic") {
			t.Errorf("deliverable %+v, want what the quest may send, and to whom", c.Deliverable)
		}
	})

	t.Run("not recorded", func(t *testing.T) {
		// A claim kept by a questbox that recorded no reasons (its
		// record has no "reasons") is listed with what it said then.
		h := newHarness(t, Options{})
		q := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal })
		a := gates.Answer{Verdict: "conclusion", Evidence: "tesseract read 38 of 40 receipts", Citations: []gates.Citation{}}
		n, err := h.e.PlantNode(q.ID, Node{Role: RoleScout, Hypothesis: "old", Status: AwaitingConsent,
			Claim: &Claim{Hash: strings.Repeat("a", 64), Raw: "x", Since: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), Why: "the gate asks for review", Answ: &a}}, "")
		if err != nil {
			t.Fatal(err)
		}
		c := onlyConsent(t, h)
		if c.Node != n.ID || c.Reasons != nil || c.Why != "the gate asks for review" || c.Deliverable.Evidence != a.Evidence {
			t.Errorf("old request %+v, want no reasons, its why and its evidence", c)
		}
	})
}

// TestConsentQueueIsTheOneExpiryRule: the queue marks what the button no
// longer offers, the activity counts it apart, and the deadline is the
// request's own.
func TestConsentQueueIsTheOneExpiryRule(t *testing.T) {
	h := newHarness(t, Options{ConsentExpiry: time.Hour})
	q := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal })
	res, _ := h.e.Scan(q.ID, []string{"tesseract jpn"})
	if _, err := h.e.Submit(context.Background(), q.ID, res.Added[0], []byte(uncited("tesseract read 38 of 40 receipts"))); err != nil {
		t.Fatal(err)
	}
	c := onlyConsent(t, h)
	if !c.Deadline.Equal(c.Since.Add(time.Hour)) {
		t.Errorf("deadline %v, want an hour after %v", c.Deadline, c.Since)
	}
	for _, tc := range []struct {
		at      time.Time
		expired bool
	}{{c.Since, false}, {c.Deadline.Add(-time.Second), false}, {c.Deadline, true}} {
		qs, err := h.e.ConsentQueue(tc.at)
		if err != nil || len(qs) != 1 || qs[0].Expired != tc.expired {
			t.Errorf("queue at %v: %+v, %v; want expired %v", tc.at, qs, err, tc.expired)
		}
		a, err := h.e.Activity(tc.at)
		if err != nil || (len(a.Consents) == 0) != tc.expired || (a.Expired == 1) != tc.expired {
			t.Errorf("activity at %v: %d live, %d expired, %v", tc.at, len(a.Consents), a.Expired, err)
		}
	}
}
