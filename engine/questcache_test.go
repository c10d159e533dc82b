package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/export"
	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
	"github.com/questbox/questbox/engine/verdict"
)

// storedQuest is quest id's record as the store holds it (a copy).
func storedQuest(t *testing.T, e *Engine, id string) []byte {
	t.Helper()
	var raw []byte
	err := e.store.view(func(tx *store.Tx) error {
		raw = bytes.Clone(tx.Quests().Get([]byte(id)))
		return nil
	})
	if err != nil || raw == nil {
		t.Fatalf("read quest %s: %v (%d bytes)", id, err, len(raw))
	}
	return raw
}

// checkQuestCache fails unless every entry of e's tickmem.QuestCache whose record
// is the stored one holds what that record decodes to; it returns how
// many entries the next tick would use.
func checkQuestCache(t *testing.T, e *Engine) int {
	t.Helper()
	entries, _ := e.decoded.Snapshot()
	current := 0
	for id, c := range entries {
		if !bytes.Equal(c.Record(), storedQuest(t, e, id)) {
			continue // stale: a tick misses it and decodes
		}
		current++
		var want Quest
		if err := records.DecodeQuest(c.Record(), &want); err != nil {
			t.Fatalf("quest %s: the cached record does not decode: %v", id, err)
		}
		if !reflect.DeepEqual(*c.Quest(), want) {
			t.Fatalf("quest %s: the cache holds\n%#v\nits record decodes to\n%#v", id, *c.Quest(), want)
		}
	}
	checkCurrent(t, e)
	return current
}

// cacheCurrent reports whether e's tickmem.QuestCache says it is current as of
// the store's last commit: the next tick takes its entries for the
// active quests' records without reading them.
func cacheCurrent(t *testing.T, e *Engine) bool {
	t.Helper()
	var ok bool
	err := e.store.view(func(tx *store.Tx) error {
		ok = e.decoded.CurrentAsOf(tx)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// checkCurrent fails when e's tickmem.QuestCache says it is current but holds an
// active quest other than as its record is stored.
func checkCurrent(t *testing.T, e *Engine) {
	t.Helper()
	if !cacheCurrent(t, e) {
		return
	}
	var active []string
	err := e.store.view(func(tx *store.Tx) error {
		return tx.Active().ForEach(func(k, _ []byte) error { active = append(active, string(k)); return nil })
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range active {
		c, ok := e.decoded.Entry(id)
		if ok && !bytes.Equal(c.Record(), storedQuest(t, e, id)) {
			t.Fatalf("quest %s: the cache says it is current but holds another record", id)
		}
	}
	entries, ids := e.decoded.Snapshot()
	n := len(entries)
	if !slices.Equal(ids, active) || n != len(active) {
		t.Fatalf("the cache says it is current, but its active set is %q (%d entries), the active index %q", ids, n, active)
	}
}

// TestQuestCacheIsTheDecodedRecord runs quests of both modes through
// ticks whose agents answer every way (directions, dead ends, answers
// that break the contract, owners' turns, budgets running out) and checks
// after every tick and every result that each cached quest is exactly
// what its stored record decodes to, and that the ticks did use the
// cache.
func TestQuestCacheIsTheDecodedRecord(t *testing.T) {
	var calls atomic.Int64
	p := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		switch k := calls.Add(1); k % 4 {
		case 0:
			return reply(answer("promising", "it works "+req.Node, fmt.Sprintf("idea %d", k))), nil
		case 1:
			return reply(answer("dead", "it does not "+req.Node)), nil
		case 2:
			return reply("no JSON here"), nil
		}
		return agent.Reply{}, fmt.Errorf("offline: %w", agent.ErrUnavailable)
	})
	h := newHarness(t, Options{Providers: map[string]Provider{"p": p}, MaxParallel: 4})
	for i := range 6 {
		h.quest(func(s *QuestSpec) {
			s.Provider = "p"
			if i%2 == 0 {
				s.Mode = ModeSolo
			}
			s.Limits.MaxAgentRuns = 6 + i
			s.Direction = fmt.Sprintf("direction %d", i)
		})
	}
	used := 0
	for range 12 {
		used += checkQuestCache(t, h.e)
		h.tick()
	}
	checkQuestCache(t, h.e)
	if used == 0 {
		t.Fatal("no tick found a cached quest whose record was the stored one")
	}
}

// TestQuestCacheIsNeverAheadOfTheStore changes a quest in writes that
// roll back: the cache keeps the committed record, and the next tick
// reads the committed quest, not the rolled-back change.
func TestQuestCacheIsNeverAheadOfTheStore(t *testing.T) {
	h := newHarness(t, Options{})
	q := h.quest(func(s *QuestSpec) { s.Provider, s.Mode = ProviderExternal, ModeSolo })
	if _, err := h.e.Scan(q.ID, []string{"an idea"}); err != nil {
		t.Fatal(err)
	}
	committed := storedQuest(t, h.e, q.ID)
	boom := errors.New("boom")
	for round := range 3 {
		err := h.e.update(func(t *txn) error {
			qq, err := t.Quest(q.ID)
			if err != nil {
				return err
			}
			qq.Counters.Tokens = 999
			qq.Counts.Add(Pending, 5)
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("round %d: update: %v", round, err)
		}
		if checkQuestCache(t, h.e) != 1 {
			t.Fatalf("round %d: the cache does not hold the committed record", round)
		}
		if got := storedQuest(t, h.e, q.ID); !bytes.Equal(got, committed) {
			t.Fatalf("round %d: a rolled-back write changed the record", round)
		}
		var tokens, pending int
		err = h.e.update(func(t *txn) error {
			qs, err := t.activeQuests()
			if err != nil || len(qs) != 1 {
				return errors.Join(err, fmt.Errorf("%d active quests", len(qs)))
			}
			tokens, pending = qs[0].Counters.Tokens, qs[0].Counts.Get(Pending)
			qs[0].Counters.Tokens = 777 // the tick's copy, never the cache's
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("round %d: read: %v", round, err)
		}
		if tokens != 0 || pending != 1 {
			t.Fatalf("round %d: the tick read tokens %d, pending %d; want 0 and 1", round, tokens, pending)
		}
	}
}

// TestQuestCacheLearnsOnlyWhatCommits puts a write that saves a quest
// into a group commit with a write that fails after it: the batch is
// rolled back, and the first write, run again alone, saves another
// change. The cache holds the record that committed, never the one that
// was rolled back.
func TestQuestCacheLearnsOnlyWhatCommits(t *testing.T) {
	h := newHarness(t, Options{})
	q := h.quest(func(s *QuestSpec) { s.Provider, s.Mode = ProviderExternal, ModeSolo })
	if _, err := h.e.Scan(q.ID, []string{"an idea"}); err != nil {
		t.Fatal(err)
	}
	h.tick() // the cache reads the quest
	if checkQuestCache(t, h.e) != 1 {
		t.Fatal("the tick did not remember the quest")
	}
	h.store.h.Latency = time.Hour // the batch commits when the announced write arrives
	tk := h.store.expect()
	boom := errors.New("boom")
	var runs atomic.Int64
	saving := func(t *txn) error {
		qq, err := t.Quest(q.ID)
		if err != nil {
			return err
		}
		qq.Counters.Tokens = 111 // in the batch, rolled back
		if runs.Add(1) > 1 {
			qq.Counters.Tokens = 222 // alone, committed
		}
		return nil
	}
	errs := make(chan error, 1)
	go func() { errs <- h.e.batch(saving, nil) }()
	for {
		q, _, _ := h.store.h.Queue()
		queued := q > 0
		if queued {
			break
		}
		time.Sleep(time.Millisecond)
	}
	err := h.e.batch(func(t *txn) error {
		if _, err := t.Quest(q.ID); err != nil {
			return err
		}
		return boom
	}, tk)
	if !errors.Is(err, boom) {
		t.Fatalf("failing write: %v", err)
	}
	if err := <-errs; err != nil {
		t.Fatalf("saving write: %v", err)
	}
	if runs.Load() != 2 {
		t.Fatalf("the saving write ran %d times, want 2 (in the batch, then alone)", runs.Load())
	}
	c, _ := h.e.decoded.Entry(q.ID)
	if !bytes.Equal(c.Record(), storedQuest(t, h.e, q.ID)) || c.Quest().Counters.Tokens != 222 {
		t.Fatalf("the cache holds a record the store does not (tokens %d, want 222): the rolled-back save reached it", c.Quest().Counters.Tokens)
	}
	checkQuestCache(t, h.e)
}

// A quest's stall maps are the cache's in a tick's copy (the shared maps, tickmem.QuestCache): a
// no_progress signal counted on a copy the transaction read from the
// cache changes maps of the copy's own, and the cached quest still reads
// as its record once that transaction is rolled back.
func TestStallSignalOnACachedCopyLeavesTheCacheAlone(t *testing.T) {
	h := newHarness(t, Options{Providers: map[string]Provider{}})
	q := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal; s.Limits.MaxStalled = 5 })
	// Counted once, committed: the cache learns the quest with its maps.
	err := h.e.update(func(t *txn) error {
		qq, err := t.Quest(q.ID)
		if err != nil {
			return err
		}
		return verdict.StallSignal(t, qq, StallEvidence, "the first evidence", "the same evidence")
	})
	if err != nil {
		t.Fatal(err)
	}
	if checkQuestCache(t, h.e) != 1 {
		t.Fatal("the cache did not learn the saved quest")
	}
	rollBack := errors.New("rolled back")
	for _, extra := range []string{"the first evidence", "other evidence", ""} {
		err = h.e.update(func(t *txn) error {
			raw := t.tx.Quests().Get([]byte(q.ID))
			qq, err := t.cachedQuestInto(q.ID, raw, new(Quest), false)
			if err != nil {
				return err
			}
			if !t.fromCache {
				return errors.New("the quest was not read from the cache")
			}
			if err := verdict.StallSignal(t, qq, StallEvidence, extra, "the same evidence"); err != nil {
				return err
			}
			return rollBack
		})
		if !errors.Is(err, rollBack) {
			t.Fatalf("%q: %v", extra, err)
		}
		if checkQuestCache(t, h.e) != 1 {
			t.Fatalf("%q: the cache lost the quest", extra)
		}
	}
}

// A write that reads a quest whose record the cache holds as stored (a
// result's, in a group commit of hundreds) gets a copy of the cached
// quest, sharing its strings, rather than the record decoded afresh; its
// changes commit and the cache learns them; a read of a record the cache
// does not hold teaches it nothing (it may be a batch's, not committed).
func TestWritesReadQuestsThroughTheCache(t *testing.T) {
	h := newHarness(t, Options{})
	q := h.quest(func(s *QuestSpec) { s.Provider, s.Mode = ProviderExternal, ModeSolo })
	h.tick() // the cache reads the quest
	if checkQuestCache(t, h.e) != 1 {
		t.Fatal("the tick did not remember the quest")
	}
	entry, _ := h.e.decoded.Entry(q.ID)
	cached := entry.Quest()
	err := h.e.update(func(t *txn) error {
		qq, err := t.Quest(q.ID)
		if err != nil {
			return err
		}
		if !t.fromCache || unsafe.StringData(qq.Direction) != unsafe.StringData(cached.Direction) {
			return errors.New("the write decoded the quest afresh, not from the cache")
		}
		qq.Counters.Tokens = 333
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checkQuestCache(t, h.e) != 1 || h.questNow(q.ID).Counters.Tokens != 333 {
		t.Fatal("the cache did not learn the committed change")
	}
	// A record the cache does not hold: the read decodes, the cache is
	// left as it was.
	h.e.decoded.Drop(q.ID)
	err = h.e.update(func(t *txn) error {
		if _, err := t.Peek(q.ID); err != nil {
			return err
		}
		if t.fromCache {
			return errors.New("a quest the cache does not hold was read from it")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := h.e.decoded.Snapshot()
	n := len(entries)
	if n != 0 {
		t.Fatal("a write's read taught the cache a record")
	}
}

// currentHarness is a harness with two active external quests (they
// never dispatch) after a tick: its tickmem.QuestCache is current, so the next
// tick would take the quests from it without reading their records. It
// returns the first; the second is "q2".
func currentHarness(t *testing.T) (*harness, *Quest) {
	t.Helper()
	h := newHarness(t, Options{Providers: map[string]Provider{}})
	q := h.quest(func(s *QuestSpec) { s.Provider, s.Mode = ProviderExternal, ModeSolo })
	if q2 := h.quest(func(s *QuestSpec) { s.Provider, s.Mode = ProviderExternal, ModeSolo }); q2.ID != "q2" {
		t.Fatalf("the second quest is %s", q2.ID)
	}
	h.tick()
	if !cacheCurrent(t, h.e) {
		t.Fatal("after a tick and nothing else, the cache is not current")
	}
	return h, q
}

// writeOutsideTheEngine stores quest q with its agent runs used up in a
// transaction of the store's own, as a migration, salvage or a repair
// would: a commit the tickmem.QuestCache does not learn. A tick that reads the
// record terminates the quest; one that takes the cache's entry does not.
func writeOutsideTheEngine(t *testing.T, h *harness, q *Quest) {
	t.Helper()
	qq := h.questNow(q.ID)
	qq.Limits.MaxAgentRuns = qq.Counters.AgentRuns
	qq.Rev++
	if err := h.e.store.update(func(tx *store.Tx) error { return records.PutQuest(tx.Quests(), qq) }); err != nil {
		t.Fatal(err)
	}
}

// useUpRuns is a write that uses up quest id's agent runs: a tick that
// reads the quest then terminates it.
func useUpRuns(id string) func(t *txn) error {
	return func(t *txn) error {
		q, err := t.Quest(id)
		if err != nil {
			return err
		}
		q.Limits.MaxAgentRuns = q.Counters.AgentRuns
		return nil
	}
}

// wantTerminated fails unless the next tick terminates q, which only its
// stored record says it must.
func wantTerminated(t *testing.T, h *harness, q *Quest) {
	t.Helper()
	rep := h.tick()
	if len(rep.Terminated) != 1 || rep.Terminated[0] != q.ID {
		t.Fatalf("the tick terminated %v, want [%s]: it took the cache's stale quest, not its record", rep.Terminated, q.ID)
	}
	checkQuestCache(t, h.e)
}

// A quest record written by a writer other than the engine's
// transactions (as a migration, salvage or a repair would) leaves a
// commit the cache did not learn: the tick reads the records again.
func TestTickReadsARecordWrittenOutsideTheEngine(t *testing.T) {
	h, q := currentHarness(t)
	writeOutsideTheEngine(t, h, q)
	if cacheCurrent(t, h.e) {
		t.Fatal("a commit the cache did not learn left it current")
	}
	// An engine write learned after the gap does not close it.
	if _, err := h.e.Scan("q2", []string{"an idea"}); err != nil {
		t.Fatal(err)
	}
	if cacheCurrent(t, h.e) {
		t.Fatal("a write learned after a commit the cache did not learn made it current")
	}
	wantTerminated(t, h, q)
}

// A durable consumer's cursor (MQTT's, after every burst) is an engine
// write the cache learns: it writes no quest, and the tick after it still
// takes the cache's entries. A quest record written outside the engine
// after it is read all the same.
func TestAckEventsLeavesTheCacheCurrent(t *testing.T) {
	h, q := currentHarness(t)
	if err := h.e.AckEvents("mqtt", h.e.LastSeq()); err != nil {
		t.Fatal(err)
	}
	if got := h.e.Cursor("mqtt"); got != h.e.LastSeq() {
		t.Fatalf("cursor %d, want %d", got, h.e.LastSeq())
	}
	if !cacheCurrent(t, h.e) {
		t.Fatal("the cursor's commit, an engine write without quests, left the cache not current")
	}
	writeOutsideTheEngine(t, h, q)
	if err := h.e.AckEvents("mqtt", h.e.LastSeq()); err != nil {
		t.Fatal(err)
	}
	if cacheCurrent(t, h.e) {
		t.Fatal("a cursor's commit after a commit the cache did not learn made it current")
	}
	wantTerminated(t, h, q)
}

// The other writes of the engine that save no quest, an export's cursor
// and a durable consumer opened and removed, are engine writes too: the
// cache learns their commits and stays current.
func TestCursorWritesLeaveTheCacheCurrent(t *testing.T) {
	h, _ := currentHarness(t)
	for _, w := range []struct {
		name  string
		write func() error
	}{
		{"an export's cursor", func() error { return h.e.ExportAck("q2", 0, 1) }},
		{"a consumer opened", func() error { _, err := h.e.OpenOutbox("mqtt"); return err }},
		{"a consumer removed", func() error { return h.e.RemoveConsumer("mqtt") }},
	} {
		commits := h.e.store.Commits()
		if err := w.write(); err != nil {
			t.Fatalf("%s: %v", w.name, err)
		}
		if h.e.store.Commits() == commits {
			t.Fatalf("%s committed nothing", w.name)
		}
		if !cacheCurrent(t, h.e) {
			t.Fatalf("%s left the cache not current", w.name)
		}
	}
	var st export.State
	err := h.e.store.view(func(tx *store.Tx) (err error) {
		st, err = export.ReadState(tx, "q2")
		return err
	})
	if err != nil || st.Cursor != 1 {
		t.Fatalf("export state %+v, %v; want cursor 1", st, err)
	}
}

// A write whose commit reports a failure after bbolt wrote it (a sync
// that fails) is not learned, and the record it wrote is read.
func TestTickReadsARecordOfACommitThatFailed(t *testing.T) {
	h, q := currentHarness(t)
	w := &engineWrite{e: h.e, fn: useUpRuns(q.ID)}
	if err := h.e.store.db.Update(w.run); err != nil {
		t.Fatal(err)
	}
	if err := w.committed(fmt.Errorf("sync: %w", ErrStoreFailed)); !errors.Is(err, ErrStoreFailed) {
		t.Fatalf("committed: %v", err)
	}
	if cacheCurrent(t, h.e) {
		t.Fatal("a commit that reported a failure left the cache current")
	}
	wantTerminated(t, h, q)
}

// A tick that begins after a commit of two writes (a group commit's)
// when only the first has told the cache (each write's news comes after
// the commit, on the goroutine that waits for it) reads the records;
// the second's news, once it comes, changes nothing the tick read.
func TestTickReadsARecordWhoseNewsIsLate(t *testing.T) {
	h, q := currentHarness(t)
	first := &engineWrite{e: h.e, fn: func(t *txn) error {
		qq, err := t.Quest("q2")
		if err != nil {
			return err
		}
		qq.Counters.Tokens++
		return nil
	}}
	second := &engineWrite{e: h.e, fn: useUpRuns(q.ID)}
	err := h.e.store.db.Update(func(tx *store.Tx) error {
		return errors.Join(first.run(tx), second.run(tx))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := first.committed(nil); err != nil {
		t.Fatal(err)
	}
	if cacheCurrent(t, h.e) {
		t.Fatal("a commit with a write not yet learned left the cache current")
	}
	wantTerminated(t, h, q)
	if err := second.committed(nil); err != nil {
		t.Fatal(err)
	}
	checkQuestCache(t, h.e)
	if h.questNow(q.ID).Status != QuestTerminated {
		t.Fatal("the late news put back the quest the tick terminated")
	}
	if rep := h.tick(); len(rep.Terminated) != 0 {
		t.Fatalf("a tick after the late news terminated %v again", rep.Terminated)
	}
}

// A write rolled back leaves the cache current (it learned nothing), and
// the tick takes the committed quest from it, not the rolled-back change.
func TestTickAfterARolledBackWriteTakesTheCommittedQuest(t *testing.T) {
	h, q := currentHarness(t)
	boom := errors.New("boom")
	err := h.e.update(func(t *txn) error { return errors.Join(useUpRuns(q.ID)(t), boom) })
	if !errors.Is(err, boom) {
		t.Fatalf("update: %v", err)
	}
	if !cacheCurrent(t, h.e) {
		t.Fatal("a write rolled back made the cache read again")
	}
	if rep := h.tick(); len(rep.Terminated) != 0 {
		t.Fatalf("the tick terminated %v: a rolled-back change reached it", rep.Terminated)
	}
	// And the engine's own writes keep it current.
	if _, err := h.e.Scan(q.ID, []string{"an idea"}); err != nil {
		t.Fatal(err)
	}
	if !cacheCurrent(t, h.e) {
		t.Fatal("a learned write made the cache read again")
	}
	checkQuestCache(t, h.e)
}

// The cache is current for its store only: a store opened anew (a
// restore, a compaction at open, salvage) has other commits with the
// same ids.
func TestQuestCacheIsCurrentForItsStoreOnly(t *testing.T) {
	h, _ := currentHarness(t)
	other, _ := currentHarness(t)
	err := other.e.store.update(func(tx *store.Tx) error {
		if h.e.decoded.Current(tx) {
			return errors.New("a cache current for one store is current for another")
		}
		return errUnchanged
	})
	if !errors.Is(err, errUnchanged) {
		t.Fatal(err)
	}
}

// An active quest whose record says it is not active (a store whose
// active index is not in step with it) loses its cached entry when a
// tick reads the record, and the cache, whose entries are then not the
// active index's quests, is not made current by that read: the tick
// after it reads the record again rather than the entry of the quest as
// it was, or a set without it.
func TestTickForgetsAnEntryWhoseRecordIsNotActive(t *testing.T) {
	h, q := currentHarness(t)
	qq := h.questNow(q.ID)
	qq.Status = QuestStopped
	qq.Rev++
	if err := h.e.store.update(func(tx *store.Tx) error { return records.PutQuest(tx.Quests(), qq) }); err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		var status QuestStatus
		err := h.e.update(func(t *txn) error {
			qs, err := t.activeQuests()
			if err != nil {
				return err
			}
			for _, a := range qs {
				if a.ID == q.ID {
					status = a.Status
				}
			}
			return errUnchanged // nothing written, nothing committed
		})
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if status != QuestStopped {
			t.Fatalf("round %d: the transaction read quest %s as %s, its record says %s", round, q.ID, status, QuestStopped)
		}
		if cacheCurrent(t, h.e) {
			t.Fatalf("round %d: the cache says it is current, but it cannot hold quest %s as the active index does", round, q.ID)
		}
	}
}

// activeIDs is what activeQuests returns in a transaction of e's own
// (rolled back), after before ran in it, in the active index's order.
func activeIDs(t *testing.T, e *Engine, before func(t *txn) error) []string {
	t.Helper()
	var ids []string
	err := e.update(func(t *txn) error {
		if before != nil {
			if err := before(t); err != nil {
				return err
			}
		}
		qs, err := t.activeQuests()
		if err != nil {
			return err
		}
		for _, q := range qs {
			ids = append(ids, q.ID)
		}
		slices.Sort(ids)
		return errors.New("rolled back")
	})
	if err == nil || err.Error() != "rolled back" {
		t.Fatal(err)
	}
	return ids
}

// While current the cache gives the active set (the index is not read):
// a quest that a learned write leaves not active leaves the set, and once
// none is active the idle check says so.
func TestQuestThatStopsLeavesTheCurrentSet(t *testing.T) {
	h, q := currentHarness(t)
	if _, err := h.e.StopQuest(q.ID, SourceCLI); err != nil {
		t.Fatal(err)
	}
	if !cacheCurrent(t, h.e) {
		t.Fatal("a learned stop left the cache not current")
	}
	checkQuestCache(t, h.e)
	if got := activeIDs(t, h.e, nil); !slices.Equal(got, []string{"q2"}) {
		t.Fatalf("active quests %q after %s stopped, want [q2]", got, q.ID)
	}
	if h.e.idle() {
		t.Fatal("idle with q2 active")
	}
	if _, err := h.e.StopQuest("q2", SourceCLI); err != nil {
		t.Fatal(err)
	}
	if !cacheCurrent(t, h.e) {
		t.Fatal("a learned stop left the cache not current")
	}
	if !h.e.idle() {
		t.Fatal("not idle once every quest stopped")
	}
	if _, err := h.e.ResumeQuest(q.ID, SourceCLI); err != nil {
		t.Fatal(err)
	}
	if got := activeIDs(t, h.e, nil); !slices.Equal(got, []string{q.ID}) {
		t.Fatalf("active quests %q after %s resumed, want [%s]", got, q.ID, q.ID)
	}
	checkQuestCache(t, h.e)
}

// A transaction that changed the active set before it reads the active
// quests (a quest stopped, one created: humangate.Expire's kind of turn)
// reads its own active index, not the cache's set as of the last commit.
func TestActiveQuestsOfATransactionThatChangedTheSet(t *testing.T) {
	h, q := currentHarness(t)
	stop := func(t *txn) error {
		qq, err := t.Quest(q.ID)
		if err != nil {
			return err
		}
		return t.SetQuestStatus(qq, QuestStopped, "test")
	}
	if got := activeIDs(t, h.e, stop); !slices.Equal(got, []string{"q2"}) {
		t.Fatalf("active quests %q after %s stopped in the transaction, want [q2]", got, q.ID)
	}
	if !cacheCurrent(t, h.e) {
		t.Fatal("a rolled-back transaction left the cache not current")
	}
	create := func(t *txn) error {
		s := h.e.NewQuestSpec("new", "new")
		s.Provider, s.Mode = ProviderExternal, ModeSolo
		_, err := t.newQuest(s)
		return err
	}
	if got := activeIDs(t, h.e, create); !slices.Equal(got, []string{q.ID, "q2", "q3"}) {
		t.Fatalf("active quests %q with q3 created in the transaction, want [%s q2 q3]", got, q.ID)
	}
}

// A tick that reads every active quest (the cache not current) makes
// the cache's entries exactly those quests: an entry of a quest that
// left the active index by a commit the cache did not learn goes.
func TestValidatingTickDropsQuestsNotActive(t *testing.T) {
	h, q := currentHarness(t)
	stopOutsideTheEngine(t, h, q.ID)
	for round := range 2 {
		if got := activeIDs(t, h.e, nil); !slices.Equal(got, []string{"q2"}) {
			t.Fatalf("round %d: active quests %q, want [q2]", round, got)
		}
		if !cacheCurrent(t, h.e) {
			t.Fatalf("round %d: the read of every active quest did not make the cache current", round)
		}
	}
	checkQuestCache(t, h.e)
}

// Two writes of one commit (a group commit's) save the same quest, the
// second stopping it, and the first's news comes last: it does not bring
// the quest back into the set.
func TestOlderNewsDoesNotBringBackAQuestThatStopped(t *testing.T) {
	h, q := currentHarness(t)
	first := &engineWrite{e: h.e, fn: spendToken(q.ID)}
	second := &engineWrite{e: h.e, fn: func(t *txn) error {
		qq, err := t.Quest(q.ID)
		if err != nil {
			return err
		}
		return t.SetQuestStatus(qq, QuestStopped, "test")
	}}
	err := h.e.store.db.Update(func(tx *store.Tx) error {
		return errors.Join(first.run(tx), second.run(tx))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := second.committed(nil); err != nil {
		t.Fatal(err)
	}
	if err := first.committed(nil); err != nil {
		t.Fatal(err)
	}
	if !cacheCurrent(t, h.e) {
		t.Fatal("a commit of two learned writes left the cache not current")
	}
	checkQuestCache(t, h.e)
	if got := activeIDs(t, h.e, nil); !slices.Equal(got, []string{"q2"}) {
		t.Fatalf("active quests %q, want [q2]", got)
	}
}

// News of a commit that a validating tick read past is old: a write
// whose news comes after such a tick, and whose quest left the active
// index since (by a commit the cache did not learn), does not bring the
// quest back.
func TestNewsOlderThanTheValidatingTickIsIgnored(t *testing.T) {
	h, q := currentHarness(t)
	late := &engineWrite{e: h.e, fn: spendToken(q.ID)}
	if err := h.e.store.db.Update(late.run); err != nil {
		t.Fatal(err)
	}
	stopOutsideTheEngine(t, h, q.ID)
	if got := activeIDs(t, h.e, nil); !slices.Equal(got, []string{"q2"}) {
		t.Fatalf("active quests %q, want [q2]", got)
	}
	if err := late.committed(nil); err != nil {
		t.Fatal(err)
	}
	if !cacheCurrent(t, h.e) {
		t.Fatal("the validating read and the late news left the cache not current")
	}
	checkQuestCache(t, h.e)
	if got := activeIDs(t, h.e, nil); !slices.Equal(got, []string{"q2"}) {
		t.Fatalf("active quests %q after the late news, want [q2]", got)
	}
}

// stopOutsideTheEngine stores quest id stopped and out of the active
// index in a transaction of the store's own: a commit the tickmem.QuestCache does
// not learn.
func stopOutsideTheEngine(t *testing.T, h *harness, id string) {
	t.Helper()
	qq := h.questNow(id)
	qq.Status = QuestStopped
	qq.Rev++
	err := h.e.store.update(func(tx *store.Tx) error {
		if err := records.PutQuest(tx.Quests(), qq); err != nil {
			return err
		}
		return tx.Active().Delete([]byte(id))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// spendToken is a write that counts a token on quest id: it saves the
// quest, active.
func spendToken(id string) func(t *txn) error {
	return func(t *txn) error {
		q, err := t.Quest(id)
		if err != nil {
			return err
		}
		q.Counters.Tokens++
		return nil
	}
}
