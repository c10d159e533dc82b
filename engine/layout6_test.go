package engine

import (
	"bytes"
	"errors"
	"testing"

	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
)

// dispatchOne dispatches quest's first pending node in a transaction of
// its own, as a tick does, and leaves it running (no agent is started).
func dispatchOne(t *testing.T, h *harness, quest string) (node, run string) {
	t.Helper()
	return dispatchReserving(t, h, quest, 0)
}

// dispatchReserving is dispatchOne for a run that reserves reserve tokens.
func dispatchReserving(t *testing.T, h *harness, quest string, reserve int) (node, run string) {
	t.Helper()
	err := h.e.update(func(t *txn) error {
		q, err := t.Peek(quest)
		if err != nil {
			return err
		}
		n, err := t.firstPending(q)
		if err != nil || n == nil {
			return errors.Join(err, ErrNotFound)
		}
		r, err := t.planRun(q, n, "p", reserve)
		q.Counters.AgentRuns++
		node, run = n.ID, r.ID
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return node, run
}

// renameQuest saves quest for a reason of its own: a new name.
func renameQuest(t *testing.T, h *harness, quest string) {
	t.Helper()
	if err := h.e.update(func(t *txn) error {
		q, err := t.Quest(quest)
		q.Name = "renamed"
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// rawQuest is quest's record as stored.
func rawQuest(t *testing.T, h *harness, quest string) []byte {
	t.Helper()
	var raw []byte
	_ = h.store.view(func(tx *store.Tx) error {
		raw = bytes.Clone(tx.Quests().Get([]byte(quest)))
		return nil
	})
	return raw
}

// A dispatch writes its running entry and its event and nothing else: the
// quest's record and the node's stay as they were, the node stays in its
// pending index, and every reader sees it running, its run, and the quest
// counting it once.
func TestDispatchWritesOneRecord(t *testing.T) {
	h := newHarness(t, Options{})
	q := h.quest(func(s *QuestSpec) { s.Provider, s.Mode = ProviderExternal, ModeSolo })
	if _, err := h.e.Scan(q.ID, []string{"first idea", "second idea"}); err != nil {
		t.Fatal(err)
	}
	before := rawQuest(t, h, q.ID)
	node, run := dispatchOne(t, h, q.ID)
	if got := rawQuest(t, h, q.ID); !bytes.Equal(got, before) {
		t.Error("the dispatch rewrote the quest's record")
	}
	err := h.store.view(func(tx *store.Tx) error {
		if v := tx.Runs().Get([]byte(run)); v != nil {
			t.Errorf("run %s is in the runs bucket while it runs: %s", run, v)
		}
		if v := tx.Running().Get(store.RunningKey(q.ID, node)); v == nil {
			t.Errorf("no running entry %s/%s", q.ID, node)
		}
		if id := first(tx, bPending, q.ID); id != node {
			t.Errorf("first of the pending index: %q, want the running node %s", id, node)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := h.node(node); n.Status != Running || len(n.Runs) != 1 || n.Runs[0] != run {
		t.Errorf("node %s: %s, runs %v; want running, [%s]", node, n.Status, n.Runs, run)
	}
	got := h.questNow(q.ID)
	if got.Running != node || got.Counts.Get(Running) != 1 || got.Counts.Get(Pending) != 1 || got.Counters.AgentRuns != 1 {
		t.Errorf("quest: running %q, counts %v, agent runs %d; want %s, 1 running and 1 pending, 1", got.Running, got.Counts, got.Counters.AgentRuns, node)
	}
	runs, err := h.e.QuestRuns(q.ID, "")
	if err != nil || len(runs) != 1 || runs[0].ID != run || !runs[0].Ended.IsZero() {
		t.Errorf("runs: %+v, %v; want %s in flight", runs, err, run)
	}
	if r, err := h.e.FindRun(run); err != nil || r.Node != node {
		t.Errorf("find %s: %+v, %v", run, r, err)
	}

	// Saved for another reason while the node runs, the quest folds the
	// dispatch into its record and counts it still once.
	renameQuest(t, h, q.ID)
	got = h.questNow(q.ID)
	if got.Counts.Get(Running) != 1 || got.Counts.Get(Pending) != 1 || got.Counters.AgentRuns != 1 || got.Running != node {
		t.Errorf("after a save: counts %v, agent runs %d, running %q", got.Counts, got.Counters.AgentRuns, got.Running)
	}

	// The run ends (recovered at start-up): its record moves to the
	// runs bucket, the node is pending again, the agent run uncounted.
	h.restart()
	n := h.node(node)
	got = h.questNow(q.ID)
	if n.Status != Pending || got.Running != "" || got.Counts.Get(Pending) != 2 || got.Counters.AgentRuns != 0 {
		t.Errorf("after recovery: node %s, quest running %q, counts %v, agent runs %d", n.Status, got.Running, got.Counts, got.Counters.AgentRuns)
	}
	runs, err = h.e.QuestRuns(q.ID, "")
	if err != nil || len(runs) != 1 || runs[0].Outcome != "interrupted" {
		t.Errorf("runs after recovery: %+v, %v", runs, err)
	}
}

// A schema 5 store with a node left running (node -> run id, the run in
// the runs bucket, the node out of its pending index, the quest counting
// the dispatch) migrates to the dispatch layout, counting nothing twice,
// and the run is recovered at start-up as before.
func TestMigrationToDispatchLayout(t *testing.T) {
	h := newHarness(t, Options{})
	q := h.quest(func(s *QuestSpec) { s.Provider, s.Mode = ProviderExternal, ModeSolo })
	if _, err := h.e.Scan(q.ID, []string{"first idea", "second idea"}); err != nil {
		t.Fatal(err)
	}
	node, run := dispatchOne(t, h, q.ID)
	h.close()

	// Back to schema 5's layout.
	st := mustOpenStore(t, h.dir)
	err := st.db.Update(func(tx *store.Tx) error {
		qq, _, err := getQuest(tx, q.ID) // the dispatch folded in, as schema 5 saved it
		if err != nil {
			return err
		}
		v := bytes.Clone(tx.Running().Get(store.RunningKey(q.ID, node)))
		if err := tx.Running().Delete(store.RunningKey(q.ID, node)); err != nil {
			return err
		}
		if err := tx.Running().Put([]byte(node), []byte(run)); err != nil {
			return err
		}
		if err := tx.Runs().Put([]byte(run), v); err != nil {
			return err
		}
		n, err := records.ReadNodeRecord(tx, node)
		if err != nil {
			return err
		}
		if err := subRO(tx, bPending, q.ID).Delete(u64(n.Order)); err != nil {
			return err
		}
		if err := records.PutQuest(tx.Quests(), qq); err != nil {
			return err
		}
		return tx.Meta().Put(kSchema, u64(5))
	})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()

	// Read as it is, schema 5 shows the node running.
	ro, err := OpenStore(h.dir, StoreOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(ro, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := e.Node(node); err != nil || n.Status != Running {
		t.Errorf("schema 5 read as it is: node %s %v, %v; want running", node, n.Status, err)
	}
	ro.Close()

	// A writing open migrates; before the engine recovers the run, the
	// store reads as schema 6 wrote it.
	st = mustOpenStore(t, h.dir)
	err = st.view(func(tx *store.Tx) error {
		if v := tx.Running().Get([]byte(node)); v != nil {
			t.Errorf("schema 5 running entry left: %s", v)
		}
		if id := first(tx, bPending, q.ID); id != node {
			t.Errorf("first of the pending index %q, want the running node %s", id, node)
		}
		n, err := records.ReadNode(tx, node)
		if err != nil || n.Status != Running || n.Runs[len(n.Runs)-1] != run {
			t.Errorf("node %s after the migration: %+v, %v", node, n, err)
		}
		qq, _, err := getQuest(tx, q.ID)
		if err != nil || qq.Counts.Get(Running) != 1 || qq.Counts.Get(Pending) != 1 || qq.Counters.AgentRuns != 1 {
			t.Errorf("quest after the migration: %+v, %v; want 1 running, 1 pending, 1 agent run", qq, err)
		}
		r, ok, err := records.GetRun(tx, run, q.ID, node)
		if err != nil || !ok || r.Node != node {
			t.Errorf("run %s after the migration: %+v, %v, %v", run, r, ok, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	h.open()
	got := h.questNow(q.ID)
	if n := h.node(node); n.Status != Pending || got.Counts.Get(Pending) != 2 || got.Counters.AgentRuns != 0 || got.Running != "" {
		t.Errorf("recovered: node %s, quest %+v", n.Status, got)
	}
}

// What the tick remembers of a quest's first pending node reaches it only
// from a committed transaction: a write that is rolled back leaves the
// view as it was, and the next tick dispatches what the store says.
func TestPendingViewIgnoresRolledBackWrites(t *testing.T) {
	h := newHarness(t, Options{})
	q := h.quest(func(s *QuestSpec) { s.Provider, s.Mode = ProviderExternal, ModeSolo })
	if _, err := h.e.Scan(q.ID, []string{"first idea"}); err != nil {
		t.Fatal(err)
	}
	first := h.nodesByStatus(q.ID)[Pending][0]
	boom := errors.New("boom")
	// A write that aborts the pending node and adds another, then fails.
	err := h.e.update(func(t *txn) error {
		qq, err := t.Quest(q.ID)
		if err != nil {
			return err
		}
		n, err := t.Node(first)
		if err != nil {
			return err
		}
		if err := t.Abort(qq, n, "test"); err != nil {
			return err
		}
		if _, _, err := t.NewNode(qq, nil, RoleScout, "rolled back idea", Pending, ""); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("update: %v", err)
	}
	seenRev, seenHead, _ := h.e.view.Entry(q.ID)
	if rev := h.questNow(q.ID).Rev; seenRev != rev || seenHead == nil || seenHead.ID != first {
		t.Errorf("view after the rolled-back write: revision %d, head %+v; want revision %d, %s", seenRev, seenHead, rev, first)
	}
	node, _ := dispatchOne(t, h, q.ID)
	if node != first {
		t.Errorf("dispatched %s, want %s (the rolled-back write reached the view)", node, first)
	}
	// A committed change is seen at once.
	h.restart()
	if _, err := h.e.Scan(q.ID, []string{"second idea"}); err != nil {
		t.Fatal(err)
	}
	if err := h.e.update(func(t *txn) error {
		qq, err := t.Quest(q.ID)
		if err != nil {
			return err
		}
		n, err := t.Node(first)
		if err != nil {
			return err
		}
		return t.Abort(qq, n, "test")
	}); err != nil {
		t.Fatal(err)
	}
	second := h.nodesByStatus(q.ID)[Pending][0]
	if node, _ := dispatchOne(t, h, q.ID); node != second || node == first {
		t.Errorf("dispatched %s, want %s", node, second)
	}
}

// Verify names a running entry whose node is missing from the store (a
// torn write), and salvage drops it.
func TestVerifyNamesADanglingRunningEntry(t *testing.T) {
	h := newHarness(t, Options{})
	q := h.quest(func(s *QuestSpec) { s.Provider, s.Mode = ProviderExternal, ModeSolo })
	h.close()
	st := mustOpenStore(t, h.dir)
	err := st.db.Update(func(tx *store.Tx) error {
		return tx.Running().Put(store.RunningKey(q.ID, "n999"), records.AppendRun(nil, &Run{ID: "r999", Quest: q.ID, Node: "n999"}))
	})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := st.Verify()
	if !errors.Is(err, ErrCorrupt) || len(rep.Problems) != 1 || rep.Problems[0] != "the running index names node n999, which is missing from the store" {
		t.Errorf("verify: %v, problems %q", err, rep.Problems)
	}
	st.Close()
	if _, err := Salvage(h.dir, h.clock.Now()); err != nil {
		t.Fatal(err)
	}
	h.open() // verified clean at cleanup
	if got := h.questNow(q.ID); got.Running != "" || got.Counts.Get(Running) != 0 {
		t.Errorf("after salvage: running %q, counts %v", got.Running, got.Counts)
	}
}
