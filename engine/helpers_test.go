package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/storetest"
	"github.com/questbox/questbox/gates/consent"
	"github.com/questbox/questbox/internal/clock/clocktest"
)

// funcProvider is a provider whose answers a test scripts.
type funcProvider func(ctx context.Context, req agent.Request) (agent.Reply, error)

func (f funcProvider) Run(ctx context.Context, req agent.Request) (agent.Reply, error) {
	return f(ctx, req)
}

// answer renders a worker answer as an agent would print it.
func answer(verdict, evidence string, dirs ...string) string {
	a := map[string]any{"verdict": verdict, "evidence": evidence, "citations": []any{}, "new_directions": dirs}
	if verdict == "conclusion" {
		a["citations"] = []any{map[string]string{"source": "https://example.org/doc", "quote": "the exact words"}}
	}
	if dirs == nil {
		a["new_directions"] = []string{}
	}
	raw, _ := json.Marshal(a)
	return "Here is my answer.\n```json\n" + string(raw) + "\n```\n"
}

func reply(s string) agent.Reply {
	return agent.Reply{Output: []byte(s), Tokens: 10, TokensReported: true}
}

// mustOpenStore opens a store in a temp dir; its cleanup closes it and runs
// the integrity check and the ledger verification.
func mustOpenStore(t testing.TB, dir string) *Store {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	s, err := OpenStore(dir, StoreOptions{Check: true})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	return s
}

type harness struct {
	t     testing.TB
	dir   string
	store *Store
	e     *Engine
	clock *clocktest.Clock
	opt   Options
}

func newHarness(t testing.TB, opt Options) *harness {
	t.Helper()
	h := &harness{t: t, dir: t.TempDir(), clock: clocktest.NewClock(time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)), opt: opt}
	h.open()
	t.Cleanup(h.close)
	return h
}

func (h *harness) open() {
	h.t.Helper()
	h.store = mustOpenStore(h.t, h.dir)
	opt := h.opt
	opt.Clock = h.clock
	e, err := New(h.store, opt)
	if err != nil {
		h.t.Fatalf("engine: %v", err)
	}
	h.e = e
}

func (h *harness) close() {
	if h.store == nil {
		return
	}
	h.e.Shutdown(0)
	if _, err := h.e.Verify(); err != nil {
		h.t.Errorf("verify at cleanup: %v", err)
	}
	if err := h.store.Close(); err != nil {
		h.t.Errorf("close: %v", err)
	}
	h.store = nil
}

func (h *harness) restart() {
	h.close()
	h.open()
}

func (h *harness) quest(spec func(*QuestSpec)) *Quest {
	h.t.Helper()
	s := h.e.NewQuestSpec("test quest", "find the best thing")
	if spec != nil {
		spec(&s)
	}
	q, err := h.e.NewQuest(s)
	if err != nil {
		h.t.Fatalf("new quest: %v", err)
	}
	return q
}

// tick runs one tick, waits for its runs and advances the clock a minute.
func (h *harness) tick() TickReport {
	h.t.Helper()
	rep, err := h.e.Tick(context.Background())
	if err != nil {
		h.t.Fatalf("tick: %v", err)
	}
	h.e.Wait()
	h.clock.Advance(time.Minute)
	return rep
}

func (h *harness) node(id string) *Node {
	h.t.Helper()
	n, err := h.e.Node(id)
	if err != nil {
		h.t.Fatalf("node %s: %v", id, err)
	}
	return n
}

func (h *harness) questNow(id string) *Quest {
	h.t.Helper()
	q, err := h.e.Quest(id)
	if err != nil {
		h.t.Fatalf("quest %s: %v", id, err)
	}
	return q
}

func (h *harness) nodesByStatus(quest string) map[Status][]string {
	h.t.Helper()
	ns, err := h.e.Nodes(quest)
	if err != nil {
		h.t.Fatal(err)
	}
	out := map[Status][]string{}
	for _, n := range ns {
		out[n.Status] = append(out[n.Status], n.ID)
	}
	return out
}

func describeNodes(ns []*Node) string {
	var b strings.Builder
	for _, n := range ns {
		fmt.Fprintf(&b, "%s %s %s %q\n", n.ID, n.Role, n.Status, n.Hypothesis)
	}
	return b.String()
}

// bulk creates quests quests, each with extra pending nodes, in one
// transaction (seeding big stores without an fsync per quest).
func (h *harness) bulk(quests, nodesPerQuest int, spec func(*QuestSpec)) []string {
	h.t.Helper()
	var ids []string
	err := h.e.update(func(t *txn) error {
		for i := 0; i < quests; i++ {
			s := h.e.NewQuestSpec(fmt.Sprintf("bulk %d", i), fmt.Sprintf("direction %d", i))
			if spec != nil {
				spec(&s)
			}
			if err := h.e.validateSpec(&s); err != nil {
				return err
			}
			q, err := t.newQuest(s)
			if err != nil {
				return err
			}
			for j := 0; j < nodesPerQuest; j++ {
				if _, _, err := t.NewNode(q, nil, RoleScout, fmt.Sprintf("hypothesis %d of %s", j, q.ID), Pending, ""); err != nil {
					return err
				}
			}
			ids = append(ids, q.ID)
		}
		return nil
	})
	if err != nil {
		h.t.Fatalf("bulk: %v", err)
	}
	return ids
}

// button is a consent from the physical button for claimHash.
func button(t testing.TB, claimHash string) consent.Consent {
	t.Helper()
	c, err := consent.New(consent.Button{}, claimHash)
	if err != nil {
		t.Fatalf("consent: %v", err)
	}
	return c
}

// newFakeClock is a fake clock at a fixed start.
func newFakeClock() *clocktest.Clock {
	return clocktest.NewClock(time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC))
}

// localHarness is newHarness with every provider on the box's own
// vendor: tests of councils and Teams weigh votes and stages, not egress
// (roles_test does).
func localHarness(t testing.TB, opt Options) *harness {
	t.Helper()
	if opt.Vendors == nil {
		opt.Vendors = map[string]string{}
	}
	for name := range opt.Providers {
		if _, ok := opt.Vendors[name]; !ok {
			opt.Vendors[name] = VendorLocal
		}
	}
	return newHarness(t, opt)
}

// salvageEventsDamage damages the store's first events page (elsewhere
// than the nodes, so that salvage rebuilds the indexes from the node
// records) and salvages it, which must rebuild the store.
func salvageEventsDamage(t *testing.T, dir string) SalvageReport {
	t.Helper()
	f, err := storetest.Open(filepath.Join(dir, StoreFile))
	if err != nil {
		t.Fatal(err)
	}
	page, err := f.LeafOf(storetest.Seq(1), string(bEvents))
	if err == nil {
		err = f.Garbage(page)
	}
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Salvage(dir, time.Date(2026, 12, 2, 11, 0, 0, 0, time.UTC))
	if err != nil || rep.Healthy {
		t.Fatalf("salvage: %+v, %v; want a rebuilt store", rep, err)
	}
	return rep
}
