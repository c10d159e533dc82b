package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
)

func TestStoreLockedByAnotherHandle(t *testing.T) {
	dir := t.TempDir()
	s := mustOpenStore(t, dir)
	defer s.Close()
	_, err := OpenStore(dir, StoreOptions{LockTimeout: 50e6})
	if !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), "questbox store "+dir+" is in use by another process") {
		t.Fatalf("got %v, want ErrInUse naming the dir", err)
	}
}

func TestStoreCorruptFileIsRefused(t *testing.T) {
	// A valid store cut short, as a card that lost its tail would leave it.
	good := t.TempDir()
	mustOpenStore(t, good).Close()
	whole, err := os.ReadFile(filepath.Join(good, StoreFile))
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string][]byte{
		"garbage":   bytes.Repeat([]byte("garbage!"), 4096),
		"short":     bytes.Repeat([]byte("garbage!"), 600),
		"truncated": whole[:5000],
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, StoreFile), content, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := OpenStore(dir, StoreOptions{Check: true})
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "questbox salvage --data "+dir) {
			t.Errorf("%s: got %v, want ErrCorrupt naming the salvage command", name, err)
		}
	}
}

func TestStoreNewerSchemaIsRefused(t *testing.T) {
	dir := t.TempDir()
	s := mustOpenStore(t, dir)
	if err := s.db.Update(func(tx *store.Tx) error { return tx.Meta().Put(kSchema, u64(SchemaVersion+1)) }); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := OpenStore(dir, StoreOptions{}); !errors.Is(err, ErrSchema) {
		t.Fatalf("got %v, want ErrSchema", err)
	}
}

func TestEventsSeqOutboxAndReplayAfterRestart(t *testing.T) {
	p := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		return reply(answer("dead", "nothing to find here at all")), nil
	})
	h := newHarness(t, Options{Providers: map[string]Provider{"p": p}})
	sub := h.e.Subscribe(0)
	q := h.quest(func(s *QuestSpec) { s.Provider = "p"; s.Mode = ModeSolo })
	h.tick()
	evs, err := sub.Next(context.Background())
	sub.Close()
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for i, ev := range evs {
		if ev.Seq != uint64(i+1) {
			t.Fatalf("event %d has seq %d, want %d", i, ev.Seq, i+1)
		}
		kinds = append(kinds, ev.Kind+":"+ev.To+ev.Outcome)
	}
	want := "quest:active node:pending node:running verdict:PASS node:passed node:aborted node:pending"
	if got := strings.Join(kinds, " "); !strings.HasPrefix(got, want) {
		t.Errorf("events: got %s, want prefix %s", got, want)
	}
	last := h.e.LastSeq()
	h.restart()
	// Replay from a seq after a restart gives the same events.
	again, err := h.e.Events(3, 0)
	if err != nil || len(again) == 0 || again[0].Seq != 4 || uint64(len(again))+3 != last {
		t.Fatalf("replay from 3: got %d events starting %v, %v; want %d starting at 4", len(again), again, err, last-3)
	}
	if _, err := h.e.AbortNode(h.nodesByStatus(q.ID)[Pending][0], "test"); err != nil {
		t.Fatal(err)
	}
	if got := h.e.LastSeq(); got <= last {
		t.Errorf("seq after restart: got %d, want > %d", got, last)
	}
}

func TestEventsArePrunedOnlyPastDurableCursors(t *testing.T) {
	h := newHarness(t, Options{EventRetention: 5})
	q := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal })
	if err := h.e.AckEvents("mqtt", 2); err != nil {
		t.Fatal(err)
	}
	var hyps []string
	for i := 0; i < 20; i++ {
		hyps = append(hyps, "hypothesis "+string(rune('a'+i)))
	}
	// One scan at a time: each write's events are one record, and
	// retention prunes a record whole (engine/records/eventgroup.go).
	for _, hyp := range hyps {
		if _, err := h.e.Scan(q.ID, []string{hyp}); err != nil {
			t.Fatal(err)
		}
	}
	h.tick()
	evs, err := h.e.Events(2, 0)
	if err != nil || len(evs) == 0 || evs[0].Seq != 3 {
		t.Fatalf("events after the mqtt cursor must be kept: got %v, %v", evs, err)
	}
	if err := h.e.AckEvents("mqtt", h.e.LastSeq()); err != nil {
		t.Fatal(err)
	}
	h.tick()
	if _, err := h.e.Events(2, 0); !errors.Is(err, ErrEventsPruned) {
		t.Errorf("after ack: got %v, want ErrEventsPruned", err)
	}
}

func TestVerifyNamesTheFirstRewrittenRecord(t *testing.T) {
	h := newHarness(t, Options{})
	q := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal })
	res, _ := h.e.Scan(q.ID, []string{"one", "two"})
	for _, id := range res.Added {
		if _, err := h.e.Submit(context.Background(), q.ID, id, []byte(answer("dead", "dead end found for "+id))); err != nil {
			t.Fatal(err)
		}
	}
	if rep, err := h.e.Verify(); err != nil || rep.Records != 2 || rep.Locked != 2 {
		t.Fatalf("clean store: got %+v, %v", rep, err)
	}
	tamper := func(fn func(tx *store.Tx) error) {
		t.Helper()
		if err := h.store.db.Update(fn); err != nil {
			t.Fatal(err)
		}
	}
	// Rewrite a locked node's status behind the engine's back.
	var saved []byte
	tamper(func(tx *store.Tx) error {
		saved = append([]byte(nil), tx.Nodes().Get(mustKey(res.Added[1]))...)
		n, _ := records.ReadNode(tx, res.Added[1])
		n.Status = Explored
		return putJSON(tx.Nodes(), mustKey(n.ID), n)
	})
	if _, err := h.e.Verify(); !errors.Is(err, ErrLedgerBroken) || !strings.Contains(err.Error(), "locked node "+res.Added[1]+" is explored") {
		t.Errorf("rewritten node: got %v, want ErrLedgerBroken naming it", err)
	}
	tamper(func(tx *store.Tx) error { return tx.Nodes().Put(mustKey(res.Added[1]), saved) })
	// Rewrite the first ledger record's outcome.
	tamper(func(tx *store.Tx) error {
		var r LedgerRecord
		getJSON(tx.Ledger(), u64(1), &r)
		r.Outcome = "FAIL"
		raw, _ := json.Marshal(r)
		return tx.Ledger().Put(u64(1), raw)
	})
	if _, err := h.e.Verify(); !errors.Is(err, ErrLedgerBroken) || !strings.Contains(err.Error(), "ledger record 1 ") {
		t.Errorf("rewritten record: got %v, want ErrLedgerBroken naming record 1", err)
	}
	// Repair so that the harness's cleanup verification passes.
	tamper(func(tx *store.Tx) error {
		var r LedgerRecord
		getJSON(tx.Ledger(), u64(1), &r)
		r.Outcome = "PASS"
		raw, _ := json.Marshal(r)
		return tx.Ledger().Put(u64(1), raw)
	})
}

func TestExportBatchIsSentAgainUntilAcknowledged(t *testing.T) {
	h := newHarness(t, Options{})
	q := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal })
	res, _ := h.e.Scan(q.ID, []string{"one", "two", "three"})
	submit := func(id string) {
		if _, err := h.e.Submit(context.Background(), q.ID, id, []byte(answer("dead", "dead end found for "+id))); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(b ExportBatch) []string {
		var out []string
		for _, n := range b.Nodes {
			out = append(out, n.ID)
		}
		return out
	}
	submit(res.Added[0])
	submit(res.Added[1])
	const file = "/backup/export.jsonl"
	b1, err := h.e.ExportBegin(q.ID, file, 100)
	if err != nil || len(b1.Nodes) != 2 || b1.Offset != 100 {
		t.Fatalf("first batch: %v %d %v, want 2 nodes at offset 100", ids(b1), b1.Offset, err)
	}
	// The client dies before acknowledging; the journal survives a restart.
	h.restart()
	submit(res.Added[2])
	if _, err := h.e.ExportBegin(q.ID, "/elsewhere.jsonl", 0); !errors.Is(err, ErrBusy) {
		t.Fatalf("export to another file while one is journaled: %v, want ErrBusy", err)
	}
	if _, err := h.e.ExportBegin(q.ID, "", 0); !errors.Is(err, ErrBusy) {
		t.Fatalf("export to stdout while a file export is journaled: %v, want ErrBusy", err)
	}
	b2, err := h.e.ExportBegin(q.ID, file, 180)
	if err != nil || len(b2.Nodes) != 3 || b2.Offset != 100 {
		t.Fatalf("batch again: %v at %d, %v; want all 3 nodes at the journaled offset 100", ids(b2), b2.Offset, err)
	}
	if err := h.e.ExportAck(q.ID, b1.From, b1.Upto); !errors.Is(err, ErrBusy) {
		t.Fatalf("acknowledging the older batch once a newer one is journaled: %v, want ErrBusy", err)
	}
	if err := h.e.ExportAck(q.ID, b2.From, b2.Upto); err != nil {
		t.Fatal(err)
	}
	if err := h.e.ExportAck(q.ID, b2.From, b2.Upto); err != nil {
		t.Fatalf("acknowledging twice: %v, want a no-op", err)
	}
	b3, err := h.e.ExportBegin(q.ID, file, 300)
	if err != nil || len(b3.Nodes) != 0 {
		t.Fatalf("after the ack: %v, %v; want nothing", ids(b3), err)
	}
	before := h.e.store.Commits()
	if _, err := h.e.ExportBegin(q.ID, "", 0); err != nil || h.e.store.Commits() != before {
		t.Fatalf("an empty export committed (%d commits, %v); it must write nothing", h.e.store.Commits()-before, err)
	}
}

func TestExportAbortDropsTheJournal(t *testing.T) {
	h := newHarness(t, Options{})
	q := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal })
	res, _ := h.e.Scan(q.ID, []string{"one"})
	if _, err := h.e.Submit(context.Background(), q.ID, res.Added[0], []byte(answer("dead", "dead end found here, nothing more to do"))); err != nil {
		t.Fatal(err)
	}
	if _, err := h.e.ExportBegin(q.ID, "/full/disk.jsonl", 7); err != nil {
		t.Fatal(err)
	}
	if err := h.e.ExportAbort(q.ID, "/full/disk.jsonl"); err != nil {
		t.Fatal(err)
	}
	b, err := h.e.ExportBegin(q.ID, "/other.jsonl", 0)
	if err != nil || len(b.Nodes) != 1 || b.Offset != 0 {
		t.Fatalf("after abort: %d nodes at %d, %v; want the node again at 0", len(b.Nodes), b.Offset, err)
	}
}

func TestOneCommitPerTickWhateverTheQuestCount(t *testing.T) {
	for _, quests := range []int{1, 30} {
		// Runs are held until the tick's own commits are counted: a fast
		// run would otherwise record its verdict (one more commit) before
		// Tick returns.
		release := make(chan struct{})
		p := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
			<-release
			return reply(answer("promising", "keep going with node "+req.Node, "more "+req.Node)), nil
		})
		h := newHarness(t, Options{Providers: map[string]Provider{"p": p}, MaxParallel: quests})
		h.bulk(quests, 1, func(s *QuestSpec) { s.Provider = "p"; s.Mode = ModeSolo })
		before := h.store.Commits()
		rep, err := h.e.Tick(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if got := h.store.Commits() - before; got != 1 || len(rep.Dispatched) != quests {
			t.Errorf("%d quests: tick committed %d times and dispatched %d, want 1 commit and %d dispatches", quests, got, len(rep.Dispatched), quests)
		}
		before = h.store.Commits()
		close(release)
		h.e.Wait()
		// The results share commits (group commit): at most one each,
		// and for many results far fewer (commit_test.go pins that).
		if got := h.store.Commits() - before; got < 1 || got > uint64(quests) {
			t.Errorf("%d quests: finishing the runs committed %d times, want between 1 and %d", quests, got, quests)
		}
	}
}

func mustKey(id string) []byte {
	k, err := records.NodeKey(id)
	if err != nil {
		panic(err)
	}
	return k
}

func TestIdleTickDoesNotWrite(t *testing.T) {
	h := newHarness(t, Options{})
	before := h.store.Commits()
	h.tick()
	if got := h.store.Commits() - before; got != 0 {
		t.Errorf("tick with no active quest committed %d times, want 0", got)
	}
	// A pending node waiting for an external agent: nothing to do.
	q := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal })
	if _, err := h.e.Scan(q.ID, []string{"wait for an outside agent"}); err != nil {
		t.Fatal(err)
	}
	before = h.store.Commits()
	h.tick()
	if got := h.store.Commits() - before; got != 0 {
		t.Errorf("tick with an idle active quest committed %d times, want 0", got)
	}
	if _, err := h.e.StopQuest(q.ID, SourceCLI); err != nil {
		t.Fatal(err)
	}
	before = h.store.Commits()
	h.tick()
	if got := h.store.Commits() - before; got != 0 {
		t.Errorf("tick with only a stopped quest committed %d times, want 0", got)
	}
}

// records.NodeKey accepts exactly the ids nodeID writes.
func TestNodeKeyAcceptsOnlyNodeIDs(t *testing.T) {
	for _, v := range []uint64{0, 1, 9, 10, 12345, 1<<64 - 1} {
		id := domain.NodeID(v)
		k, err := records.NodeKey(id)
		if err != nil || seqOf(k) != v {
			t.Errorf("records.NodeKey(%q): got %v, %v, want %d", id, seqOf(k), err, v)
		}
	}
	for _, id := range []string{"", "n", "n00", "n01", "n+1", "n-1", "n1_0", "q1", "N1", "n 1", "n18446744073709551616"} {
		if _, err := records.NodeKey(id); !errors.Is(err, ErrNotFound) {
			t.Errorf("records.NodeKey(%q): got %v, want ErrNotFound", id, err)
		}
	}
}

// Records carved from a transaction's block never share bytes: one that
// outgrows the room moves out, and a claimed record cannot be appended
// into the next one.
func TestTxnBlockRecordsDoNotOverlap(t *testing.T) {
	var tx txn
	var got [][]byte
	var want []string
	for i := 0; i < 3000; i++ {
		s := strings.Repeat(string(rune('a'+i%26)), 1+i%97)
		if i%500 == 0 {
			s = strings.Repeat("x", blockSize+i) // larger than a block
		}
		b := tx.Claim(append(tx.Spare(16), s...))
		if len(b) != cap(b) {
			t.Fatalf("record %d: cap %d, want its length %d", i, cap(b), len(b))
		}
		got, want = append(got, b), append(want, s)
		if i%7 == 0 {
			k := tx.Key8(uint64(i))
			got, want = append(got, k), append(want, string(u64(uint64(i))))
		}
	}
	for i := range got {
		if string(got[i]) != want[i] {
			t.Fatalf("record %d was overwritten: got %.20q, want %.20q", i, got[i], want[i])
		}
	}
}
