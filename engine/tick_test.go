package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/questbox/questbox/engine/agent"
)

// gate is a provider that blocks each run until the test releases it.
type gate struct {
	mu      sync.Mutex
	started chan string // node ids, as runs start
	release map[string]chan agent.Reply
}

func newGate() *gate {
	return &gate{started: make(chan string, 100), release: map[string]chan agent.Reply{}}
}

func (g *gate) ch(node string) chan agent.Reply {
	g.mu.Lock()
	defer g.mu.Unlock()
	c, ok := g.release[node]
	if !ok {
		c = make(chan agent.Reply, 1)
		g.release[node] = c
	}
	return c
}

func (g *gate) Run(ctx context.Context, req agent.Request) (agent.Reply, error) {
	c := g.ch(req.Node)
	g.started <- req.Node
	select {
	case r := <-c:
		return r, nil
	case <-ctx.Done():
		return agent.Reply{}, ctx.Err()
	}
}

func TestTickDispatchesOnePerQuestAndRespectsMaxParallel(t *testing.T) {
	g := newGate()
	h := newHarness(t, Options{Providers: map[string]Provider{"g": g}, MaxParallel: 2})
	var qs []*Quest
	for i := 0; i < 3; i++ {
		qs = append(qs, h.quest(func(s *QuestSpec) { s.Provider = "g"; s.Mode = ModeSolo; s.Name = fmt.Sprint("q", i) }))
	}
	rep, err := h.e.Tick(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Dispatched) != 2 {
		t.Fatalf("first tick: dispatched %v, want 2 (max_parallel)", rep.Dispatched)
	}
	first := <-g.started
	<-g.started
	// A long run does not block other quests: the third quest dispatches
	// once a slot frees, while the other run is still going.
	sub := h.e.Subscribe(h.e.LastSeq())
	defer sub.Close()
	g.ch(first) <- reply(answer("dead", "this was a dead end, sadly"))
	waitEvent(t, sub, func(ev Event) bool { return ev.Kind == KindVerdict && ev.Node == first })
	rep, err = h.e.Tick(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Dispatched) != 1 {
		t.Fatalf("second tick: dispatched %v, want exactly 1", rep.Dispatched)
	}
	third := <-g.started
	for _, q := range qs {
		qq := h.questNow(q.ID)
		if qq.Counts.Get(Running) > 1 {
			t.Errorf("quest %s has %d running nodes, want at most 1", q.ID, qq.Counts.Get(Running))
		}
	}
	for node := range map[string]bool{third: true} {
		g.ch(node) <- reply(answer("dead", "this was a dead end, sadly"))
	}
	for _, q := range qs {
		if r := h.questNow(q.ID).Running; r != "" && r != third {
			g.ch(r) <- reply(answer("dead", "this was a dead end, sadly"))
		}
	}
	h.e.Wait()
}

func TestCrashLeavesRunningNodeForRecovery(t *testing.T) {
	g := newGate()
	h := newHarness(t, Options{Providers: map[string]Provider{"g": g}})
	q := h.quest(func(s *QuestSpec) { s.Provider = "g"; s.Mode = ModeSolo })
	if _, err := h.e.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	node := <-g.started
	// Simulate kill -9: the store is closed under the run, nothing is
	// recorded; the goroutine's late write fails harmlessly.
	if err := h.store.Close(); err != nil {
		t.Fatal(err)
	}
	g.ch(node) <- reply(answer("dead", "too late to be recorded"))
	h.e.Wait()
	h.open()
	n := h.node(node)
	if n.Status != Pending || n.Tries != 0 {
		t.Fatalf("after recovery: got %s tries %d, want pending tries 0", n.Status, n.Tries)
	}
	last := n.Attempts[len(n.Attempts)-1]
	if last.Outcome != "interrupted" || last.TryUsed {
		t.Errorf("attempt log: got %+v, want an interrupted attempt that used no try", last)
	}
	if qq := h.questNow(q.ID); qq.Running != "" || qq.Counts.Get(Running) != 0 {
		t.Errorf("quest still has a running node: %+v", qq)
	}
}

func TestShutdownInterruptsRunsAfterGrace(t *testing.T) {
	g := newGate()
	h := newHarness(t, Options{Providers: map[string]Provider{"g": g}})
	h.quest(func(s *QuestSpec) { s.Provider = "g" })
	if _, err := h.e.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	node := <-g.started
	h.e.Shutdown(0)
	n := h.node(node)
	if n.Status != Pending || n.Tries != 0 || n.Attempts[0].Outcome != "interrupted" {
		t.Errorf("after shutdown: got %s tries %d %+v, want pending, no try, interrupted", n.Status, n.Tries, n.Attempts)
	}
	if _, err := h.e.Tick(context.Background()); err == nil {
		t.Error("tick after shutdown: got nil error, want refusal")
	}
}

func TestBudgets(t *testing.T) {
	runs := 0
	p := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		runs++
		return agent.Reply{Output: []byte(answer("promising", "keeps growing forever and ever", fmt.Sprintf("direction %d", runs))), Tokens: 400, TokensReported: true}, nil
	})
	t.Run("zero runs terminates at first tick", func(t *testing.T) {
		runs = 0
		h := newHarness(t, Options{Providers: map[string]Provider{"p": p}})
		q := h.quest(func(s *QuestSpec) { s.Provider = "p"; s.Limits.MaxAgentRuns = 0 })
		rep := h.tick()
		if qq := h.questNow(q.ID); qq.Status != QuestTerminated || !strings.Contains(qq.Reason, "max_agent_runs") || runs != 0 || len(rep.Dispatched) != 0 {
			t.Errorf("got %s %q after %d runs, want terminated by max_agent_runs with no run", qq.Status, qq.Reason, runs)
		}
	})
	t.Run("max agent runs", func(t *testing.T) {
		runs = 0
		h := newHarness(t, Options{Providers: map[string]Provider{"p": p}})
		q := h.quest(func(s *QuestSpec) { s.Provider = "p"; s.Mode = ModeSolo; s.Limits.MaxAgentRuns = 3 })
		for i := 0; i < 6; i++ {
			h.tick()
		}
		qq := h.questNow(q.ID)
		if runs != 3 || qq.Status != QuestTerminated || !strings.Contains(qq.Reason, "max_agent_runs reached (3 of 3)") {
			t.Errorf("got %d runs, %s %q; want 3 runs then terminated", runs, qq.Status, qq.Reason)
		}
	})
	// A run starts only when its reservation fits in what is left: 4096
	// tokens on a provider with no cap, 2048 and the cap on one with.
	for _, c := range []struct {
		name      string
		maxTokens map[string]int
		runs      int
	}{
		{"tokens", nil, 15},                             // 400 a run while 400k+4096 <= 10000
		{"tokens capped", map[string]int{"p": 500}, 19}, // while 400k+2548 <= 10000
	} {
		t.Run(c.name, func(t *testing.T) {
			runs = 0
			h := newHarness(t, Options{Providers: map[string]Provider{"p": p}, MaxTokens: c.maxTokens})
			q := h.quest(func(s *QuestSpec) {
				s.Provider, s.Mode, s.Limits.TokenBudget, s.Limits.MaxStalled = "p", ModeSolo, 10000, 0
			})
			for i := 0; i < c.runs+3; i++ {
				h.tick()
			}
			qq := h.questNow(q.ID)
			want := fmt.Sprintf("token_budget 10000: %d used and 0 reserved by runs in flight, a run of ", 400*c.runs)
			if runs != c.runs || qq.Status != QuestTerminated || !strings.HasPrefix(qq.Reason, want) || qq.Counters.Tokens != 400*c.runs {
				t.Errorf("got %d runs, %d tokens, %s %q; want %d runs then terminated: %q…", runs, qq.Counters.Tokens, qq.Status, qq.Reason, c.runs, want)
			}
		})
	}
}

func TestNoProgressStopsQuest(t *testing.T) {
	p := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		return reply("I cannot do this."), nil
	})
	h := newHarness(t, Options{Providers: map[string]Provider{"p": p}})
	q := h.quest(func(s *QuestSpec) { s.Provider = "p"; s.Limits.MaxStalled = 2; s.Limits.MaxTries = 5 })
	h.tick()
	if got := h.questNow(q.ID).Status; got != QuestActive {
		t.Fatalf("after one stalled answer: got %s, want active", got)
	}
	h.tick()
	qq := h.questNow(q.ID)
	if qq.Status != QuestStopped || !strings.Contains(qq.Reason, "no progress") {
		t.Fatalf("got %s %q, want stopped for no progress", qq.Status, qq.Reason)
	}
	if rep := h.tick(); len(rep.Dispatched) != 0 {
		t.Errorf("stopped quest dispatched %v", rep.Dispatched)
	}
	if _, err := h.e.ResumeQuest(q.ID, SourceCLI); err != nil {
		t.Fatal(err)
	}
	if rep := h.tick(); len(rep.Dispatched) != 1 {
		t.Errorf("resumed quest: dispatched %v, want 1", rep.Dispatched)
	}
}

func TestProviderErrors(t *testing.T) {
	var mode string
	p := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		switch mode {
		case "unavailable":
			return agent.Reply{}, fmt.Errorf("openai provider: dial tcp: connection refused: %w", agent.ErrUnavailable)
		case "notfound":
			return agent.Reply{}, fmt.Errorf("command provider \"x\": executable \"nope\": %w", agent.ErrNotFound)
		case "timeout":
			return agent.Reply{Output: []byte("partial")}, fmt.Errorf("killed after 5m: %w", agent.ErrTimeout)
		}
		return reply(answer("dead", "a dead end, recorded here")), nil
	})
	online := true
	h := newHarness(t, Options{Providers: map[string]Provider{"p": p}, Online: func() bool { return online }})
	q := h.quest(func(s *QuestSpec) { s.Provider = "p"; s.Mode = ModeSolo })
	root := h.nodesByStatus(q.ID)[Pending][0]

	mode, online = "unavailable", false
	h.tick()
	if n := h.node(root); n.Status != Deferred || n.Tries != 0 {
		t.Fatalf("unreachable provider: got %s tries %d, want deferred, no try", n.Status, n.Tries)
	}
	h.tick()
	if n := h.node(root); n.Status != Deferred {
		t.Fatalf("offline: got %s, want still deferred", n.Status)
	}
	mode, online = "timeout", true
	h.tick() // back to pending, then dispatched in the same tick: times out
	n := h.node(root)
	if n.Status != Pending || n.Tries != 1 || n.Facts[0].Rule != "agent-timeout" {
		t.Fatalf("timeout: got %s tries %d facts %v, want pending, 1 try, agent-timeout fact", n.Status, n.Tries, n.Facts)
	}
	mode = "notfound"
	h.tick()
	n = h.node(root)
	qq := h.questNow(q.ID)
	if n.Status != Pending || n.Tries != 1 || qq.Status != QuestStopped || !strings.Contains(qq.Reason, "nope") {
		t.Fatalf("missing executable: node %s tries %d, quest %s %q; want pending, tries unchanged, quest stopped naming it", n.Status, n.Tries, qq.Status, qq.Reason)
	}
}

func TestSoloMode(t *testing.T) {
	p := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		switch {
		case req.Role == RoleStrategist:
			return reply(answer("conclusion", "the strategist settles the question")), nil
		case req.Depth == 0:
			return reply(answer("promising", "root looks promising indeed", "child one", "child two")), nil
		default:
			return reply(answer("dead", "this child is a dead end")), nil
		}
	})
	h := newHarness(t, Options{Providers: map[string]Provider{"p": p}, MaxParallel: 1})
	q := h.quest(func(s *QuestSpec) { s.Provider = "p"; s.Mode = ModeSolo })
	h.tick() // root -> growing, two poc children
	by := h.nodesByStatus(q.ID)
	if len(by[Growing]) != 1 || len(by[Pending]) != 2 {
		t.Fatalf("after root: %v", by)
	}
	h.tick() // child one dead -> one strategist queued
	h.tick() // strategist is newer than child two: child two dead first
	by = h.nodesByStatus(q.ID)
	ns, _ := h.e.Nodes(q.ID)
	strategists := 0
	for _, n := range ns {
		if n.Role == RoleStrategist {
			strategists++
		}
	}
	if strategists != 1 || len(by[Aborted]) != 2 {
		t.Fatalf("two dead ends must queue exactly one strategist; got %d strategists:\n%s", strategists, describeNodes(ns))
	}
	h.tick()
	if qq := h.questNow(q.ID); qq.Status != QuestDone || !strings.Contains(qq.Reason, "strategist") {
		t.Fatalf("got %s %q, want done by the strategist", qq.Status, qq.Reason)
	}
	edges, _ := h.e.Edges(q.ID)
	rels := map[string]int{}
	for _, e := range edges {
		rels[e.Relation]++
	}
	if rels[EdgeGrewTo] != 2 || rels[EdgeAbortedTo] != 1 {
		t.Errorf("edges: got %v, want 2 grew_to and 1 aborted_to", rels)
	}
}

func TestTeamModeOwner(t *testing.T) {
	var ownerAnswer string
	p := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		if req.Role == RoleOwner {
			return reply(ownerAnswer), nil
		}
		if req.Depth > 0 {
			return reply(answer("dead", "node "+req.Node+" turned out to be a dead end")), nil
		}
		return reply(answer("promising", "node "+req.Node+" looks promising indeed", "idea A", "idea B", "idea C")), nil
	})
	h := newHarness(t, Options{Providers: map[string]Provider{"p": p}, MaxParallel: 1})
	q := h.quest(func(s *QuestSpec) { s.Provider = "p"; s.Limits.OwnerEvery = 3 })
	h.tick()
	by := h.nodesByStatus(q.ID)
	if len(by[Proposed]) != 3 {
		t.Fatalf("team worker's new directions must be proposed: %v", by)
	}
	other := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal; s.Name = "other" })
	oth, _ := h.e.Scan(other.ID, []string{"foreign"})
	a, b, c := by[Proposed][0], by[Proposed][1], by[Proposed][2]
	ownerAnswer = "```json\n" + fmt.Sprintf(`{"evidence":"decided after reading all proposals","actions":[
		{"action":"promote","node":%q},
		{"action":"abort","node":%q,"reason":"duplicate"},
		{"action":"promote","node":"n999"},
		{"action":"promote","node":%q},
		{"action":"spawn","hypothesis":"idea A","role":"poc"}]}`, a, b, oth.Added[0]) + "\n```"
	h.tick()
	ns, _ := h.e.Nodes(q.ID)
	var owner *Node
	for _, n := range ns {
		if n.Role == RoleOwner {
			owner = n
		}
	}
	if owner == nil || owner.Status != Explored {
		t.Fatalf("owner node missing or not explored:\n%s", describeNodes(ns))
	}
	if h.node(a).Status != Pending || h.node(b).Status != Aborted || h.node(c).Status != Proposed {
		t.Errorf("valid actions: got a=%s b=%s c=%s, want pending aborted proposed", h.node(a).Status, h.node(b).Status, h.node(c).Status)
	}
	if h.node(oth.Added[0]).Status != Pending {
		t.Errorf("foreign node was touched: %s", h.node(oth.Added[0]).Status)
	}
	var invalid []string
	for _, f := range owner.Facts {
		if f.Rule == "owner-action" {
			invalid = append(invalid, f.Where+": "+f.Actual)
		}
	}
	if len(invalid) != 3 {
		t.Errorf("invalid actions recorded: got %d %q, want 3 (unknown node, foreign node, duplicate spawn)", len(invalid), invalid)
	}
	// Nothing pending and no proposals but c: the owner finishes.
	ownerAnswer = "```json\n{\"evidence\":\"enough work has been done now\",\"actions\":[{\"action\":\"finish\",\"summary\":\"idea A wins\"}]}\n```"
	h.tick() // a runs: dead
	for i := 0; i < 3 && h.questNow(q.ID).Status == QuestActive; i++ {
		h.tick()
	}
	if qq := h.questNow(q.ID); qq.Status != QuestDone || !strings.Contains(qq.Reason, "idea A wins") {
		t.Errorf("got %s %q, want done by the owner", qq.Status, qq.Reason)
	}
}

func TestCheckpointConsent(t *testing.T) {
	p := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		return reply(answer("promising", fmt.Sprintf("evidence for try %d of this node", req.Attempt), "next step")), nil
	})
	h := newHarness(t, Options{Providers: map[string]Provider{"p": p}})
	q := h.quest(func(s *QuestSpec) { s.Provider = "p"; s.Mode = ModeSolo; s.Checkpoints = []string{RoleScout} })
	h.tick()
	cs, err := h.e.Consents()
	if err != nil || len(cs) != 1 {
		t.Fatalf("consents: got %v, %v, want one", cs, err)
	}
	c := cs[0]
	if err := h.e.Approve(c.Node, button(t, strings.Repeat("0", 64))); !errors.Is(err, ErrStaleConsent) {
		t.Errorf("approve with another claim hash: got %v, want ErrStaleConsent", err)
	}
	if err := h.e.Reject(c.Node, button(t, c.ClaimHash)); err != nil {
		t.Fatal(err)
	}
	n := h.node(c.Node)
	if n.Status != Pending || n.Tries != 1 || n.Feedback != "rejected by human" {
		t.Fatalf("after reject: got %s tries %d %q, want pending, 1 try, rejected by human", n.Status, n.Tries, n.Feedback)
	}
	if err := h.e.Approve(c.Node, button(t, c.ClaimHash)); !errors.Is(err, ErrIllegalMove) {
		t.Errorf("approving a consent no longer asked for: got %v, want ErrIllegalMove", err)
	}
	h.tick()
	cs, _ = h.e.Consents()
	if len(cs) != 1 || cs[0].ClaimHash == c.ClaimHash {
		t.Fatalf("second request: got %+v, want one with a new claim hash", cs)
	}
	if err := h.e.Approve(c.Node, button(t, c.ClaimHash)); !errors.Is(err, ErrStaleConsent) {
		t.Errorf("old consent for a changed claim: got %v, want ErrStaleConsent", err)
	}
	if err := h.e.Approve(cs[0].Node, button(t, cs[0].ClaimHash)); err != nil {
		t.Fatal(err)
	}
	if n := h.node(c.Node); n.Status != Growing {
		t.Errorf("after approval: got %s, want growing", n.Status)
	}
	if got := h.questNow(q.ID).Counts.Get(Pending); got != 1 {
		t.Errorf("approved promising node spawned %d pending children, want 1", got)
	}
}

// waitEvent reads the subscription until an event matches.
func waitEvent(t *testing.T, sub *Subscription, match func(Event) bool) Event {
	t.Helper()
	for {
		evs, err := sub.Next(context.Background())
		if err != nil {
			t.Fatalf("subscription: %v", err)
		}
		for _, ev := range evs {
			if match(ev) {
				return ev
			}
		}
	}
}

func TestConsentExpiry(t *testing.T) {
	h := newHarness(t, Options{ConsentExpiry: 10 * time.Minute})
	q := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal; s.Checkpoints = []string{RoleScout} })
	res, _ := h.e.Scan(q.ID, []string{"needs a human"})
	r, err := h.e.Submit(context.Background(), q.ID, res.Added[0], []byte(answer("promising", "worth a human look here", "next")))
	if err != nil || r.Outcome != "REVIEW" || r.Status != AwaitingConsent {
		t.Fatalf("checkpoint submit: got %+v, %v, want REVIEW awaiting_consent", r, err)
	}
	h.clock.Advance(9 * time.Minute)
	h.tick()
	if n := h.node(r.Node); n.Status != AwaitingConsent {
		t.Fatalf("before expiry: got %s, want awaiting_consent", n.Status)
	}
	h.clock.Advance(time.Minute)
	h.tick()
	n := h.node(r.Node)
	last := n.Attempts[len(n.Attempts)-1]
	if n.Status != Pending || n.Tries != 0 || last.Outcome != "expired" {
		t.Fatalf("after expiry: got %s tries %d last %+v, want pending, no try, expired", n.Status, n.Tries, last)
	}
	if err := h.e.Approve(r.Node, button(t, r.ClaimHash)); !errors.Is(err, ErrIllegalMove) {
		t.Errorf("approving an expired request: got %v, want ErrIllegalMove", err)
	}
	evs, _ := h.e.Events(0, 0)
	found := false
	for _, ev := range evs {
		found = found || (ev.Kind == KindConsent && ev.Outcome == "expired" && ev.Node == r.Node)
	}
	if !found {
		t.Error("no consent expired event")
	}
}
