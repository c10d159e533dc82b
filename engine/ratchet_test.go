package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/questbox/questbox/engine/agent"
)

func TestCanMoveMatchesSpec(t *testing.T) {
	legal := map[string]bool{
		"proposed>pending": true, "pending>running": true,
		"running>pending": true, "running>deferred": true, "running>awaiting_consent": true,
		"running>passed": true, "running>exhausted": true,
		"deferred>pending": true, "awaiting_consent>passed": true, "awaiting_consent>pending": true,
		"awaiting_consent>exhausted": true,
		"passed>explored":            true, "passed>growing": true, "passed>aborted": true,
		// An owner's design phase (docs/design.md, "Councils and Teams",
		// council.go).
		"pending>council_pending": true, "council_pending>passed": true, "council_pending>pending": true,
		"council_pending>exhausted": true, "council_pending>awaiting_consent": true,
		// A Team's rows (package engine/team; team.MoveOK keeps them to Teams).
		"pending>revising": true, "revising>passed": true, "revising>team_blocked": true,
	}
	for _, from := range Statuses {
		for _, to := range Statuses {
			want := legal[string(from)+">"+string(to)]
			if to == Aborted && !from.Terminal() {
				want = true
			}
			if got := from.CanMove(to); got != want {
				t.Errorf("%s -> %s: got %v, want %v", from, to, got, want)
			}
		}
	}
}

func TestTerminalNodeRefusesEveryPath(t *testing.T) {
	h := newHarness(t, Options{})
	q := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal })
	res, err := h.e.Scan(q.ID, []string{"only hypothesis"})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Added[0]
	r, err := h.e.Submit(context.Background(), q.ID, id, []byte(answer("promising", "the evidence is long enough here")))
	if err != nil || r.Outcome != "PASS" || r.Status != Growing {
		t.Fatalf("submit: got %+v, %v, want PASS growing", r, err)
	}
	checks := map[string]func() error{
		"submit": func() error {
			_, err := h.e.Submit(context.Background(), q.ID, id, []byte(answer("dead", "another answer entirely, long")))
			return err
		},
		"abort":   func() error { _, err := h.e.AbortNode(id, "x"); return err },
		"approve": func() error { return h.e.Approve(id, button(t, r.ClaimHash)) },
		"reject":  func() error { return h.e.Reject(id, button(t, r.ClaimHash)) },
		"move": func() error {
			return h.e.update(func(t *txn) error {
				q, _ := t.Quest(q.ID)
				n, _ := t.Node(id)
				return t.Move(q, n, Pending, "test")
			})
		},
	}
	for name, f := range checks {
		err := f()
		if !errors.Is(err, ErrLocked) {
			t.Errorf("%s on terminal node: got %v, want ErrLocked", name, err)
		}
	}
	if n := h.node(id); n.Status != Growing {
		t.Errorf("status after refused changes: got %s, want growing", n.Status)
	}
}

func TestFailRetryKeepsFeedbackThenExhausts(t *testing.T) {
	var prompts []string
	bad := "no json here at all"
	p := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		prompts = append(prompts, req.Prompt)
		return reply(bad), nil
	})
	h := newHarness(t, Options{Providers: map[string]Provider{"p": p}, MaxParallel: 1})
	q := h.quest(func(s *QuestSpec) {
		s.Provider = "p"
		s.Mode = ModeSolo
		s.Limits.MaxTries = 3
		s.Limits.MaxStalled = 0
	})
	root := h.nodesByStatus(q.ID)[Pending][0]
	for i := 1; i <= 3; i++ {
		h.tick()
		n := h.node(root)
		if n.Tries != i {
			t.Fatalf("after tick %d: tries got %d, want %d", i, n.Tries, i)
		}
	}
	n := h.node(root)
	if n.Status != Exhausted {
		t.Fatalf("after 3 FAILs: got %s, want exhausted", n.Status)
	}
	if len(prompts) != 3 {
		t.Fatalf("runs: got %d, want 3", len(prompts))
	}
	if want := n.Attempts[0].Feedback; want == "" || !strings.Contains(prompts[1], want) {
		t.Errorf("second prompt does not carry the first feedback %q:\n%s", want, prompts[1])
	}
	h.tick()
	if got := h.questNow(q.ID).Status; got != QuestDone {
		t.Errorf("solo quest with nothing left: got %s, want done", got)
	}
}

func TestSubmitErrors(t *testing.T) {
	h := newHarness(t, Options{})
	q := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal })
	other := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal; s.Name = "other" })
	res, _ := h.e.Scan(q.ID, []string{"a", "b"})
	oth, _ := h.e.Scan(other.ID, []string{"c"})
	ctx := context.Background()
	if _, err := h.e.Submit(ctx, q.ID, "n999", nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown node: got %v, want ErrNotFound", err)
	}
	if _, err := h.e.Submit(ctx, q.ID, oth.Added[0], nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("node of another quest: got %v, want ErrInvalid", err)
	}
	r, err := h.e.Submit(ctx, q.ID, res.Added[0], []byte(`{"verdict": 3}`))
	if err != nil || r.Outcome != "FAIL" || r.Status != Pending || r.Tries != 1 || len(r.Facts) == 0 {
		t.Errorf("broken answer: got %+v, %v; want FAIL, pending, tries 1, facts", r, err)
	}
	if _, err := h.e.StopQuest(q.ID, SourceCLI); err != nil {
		t.Fatal(err)
	}
	if _, err := h.e.Submit(ctx, q.ID, res.Added[1], []byte(answer("dead", "long enough evidence text"))); !errors.Is(err, ErrInvalid) {
		t.Errorf("stopped quest: got %v, want ErrInvalid", err)
	}
}

func TestScanSkipsDuplicates(t *testing.T) {
	h := newHarness(t, Options{})
	q := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal })
	r1, err := h.e.Scan(q.ID, []string{"alpha", "beta", "", "gamma"})
	if err != nil || len(r1.Added) != 3 {
		t.Fatalf("first scan: got %+v, %v, want 3 added", r1, err)
	}
	r2, err := h.e.Scan(q.ID, []string{"alpha", " BETA ", "gamma"})
	if err != nil || len(r2.Added) != 0 || len(r2.Skipped) != 3 {
		t.Fatalf("second scan: got %+v, %v, want 0 added 3 skipped", r2, err)
	}
	if got := h.questNow(q.ID).Counts.Get(Pending); got != 3 {
		t.Errorf("pending count: got %d, want 3", got)
	}
}

func TestNewQuestValidation(t *testing.T) {
	h := newHarness(t, Options{})
	cases := map[string]func(*QuestSpec){
		"empty direction":     func(s *QuestSpec) { s.Direction = " " },
		"bad mode":            func(s *QuestSpec) { s.Mode = "duo" },
		"unknown provider":    func(s *QuestSpec) { s.Provider = "nope" },
		"checkpoint not role": func(s *QuestSpec) { s.Checkpoints = []string{"judge"} },
		"zero max tries":      func(s *QuestSpec) { s.Limits.MaxTries = 0 },
		"negative budget":     func(s *QuestSpec) { s.Limits.TokenBudget = -1 },
	}
	for name, mod := range cases {
		t.Run(name, func(t *testing.T) {
			s := h.e.NewQuestSpec("n", "d")
			s.Provider = ProviderExternal
			mod(&s)
			if _, err := h.e.NewQuest(s); !errors.Is(err, ErrInvalid) {
				t.Errorf("got %v, want ErrInvalid", err)
			}
		})
	}
	qs, _ := h.e.Quests()
	if len(qs) != 0 {
		t.Errorf("invalid specs created %d quests", len(qs))
	}
}

func ExampleStatus_CanMove() {
	fmt.Println(Running.CanMove(Passed), Explored.CanMove(Pending), Pending.CanMove(Aborted))
	// Output: true false true
}
