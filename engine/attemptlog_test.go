package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
	"github.com/questbox/questbox/gates"
)

func TestAttemptRecordRoundTrip(t *testing.T) {
	at := time.Date(2026, 12, 4, 17, 0, 0, 123456789, time.UTC)
	for _, a := range []Attempt{
		{},
		{At: at, Run: "r7", Outcome: "FAIL", Facts: []gates.Fact{{Rule: "contract", Level: gates.Fail, Where: "evidence", Expected: "a string", Actual: "missing"}},
			Feedback: "fix the evidence", ClaimHash: "abc", TryUsed: true},
		{At: at.In(time.FixedZone("", 3600)), Outcome: "deferred", Feedback: "unreachable", Repeats: 41},
		{At: at, Outcome: "PASS", Facts: []gates.Fact{}},
	} {
		v := records.AppendAttemptRecord([]byte("prefix"), "n12", 99, &a)[len("prefix"):]
		r, err := records.DecodeAttemptRecord(v)
		if err != nil {
			t.Fatalf("%+v: %v", a, err)
		}
		if r.Node != "n12" || r.Prev != 99 || !reflect.DeepEqual(jsonOf(t, r.Attempt), jsonOf(t, a)) {
			t.Errorf("round trip: %s %d %s, want n12 99 %s", r.Node, r.Prev, jsonOf(t, r.Attempt), jsonOf(t, a))
		}
		for i := range v {
			bad := slices.Clone(v)
			bad[i] ^= 0x20
			if _, err := records.DecodeAttemptRecord(bad); err == nil {
				t.Errorf("byte %d flipped: decodes", i)
			}
		}
		if _, err := records.DecodeAttemptRecord(v[:len(v)-1]); err == nil {
			t.Error("a record cut short decodes")
		}
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// attemptStore makes a store whose node n1 failed three times and then
// locked (its log: three FAILs and a PASS) and whose n2 failed twice and
// is pending.
func attemptStore(t *testing.T) (*harness, *Quest) {
	t.Helper()
	h := newHarness(t, Options{})
	q := h.quest(func(s *QuestSpec) {
		s.Provider, s.Mode, s.Limits.MaxTries, s.Limits.MaxStalled = ProviderExternal, ModeSolo, 5, 0
	})
	if _, err := h.e.Scan(q.ID, []string{"first idea", "second idea"}); err != nil {
		t.Fatal(err)
	}
	submit := func(node, raw string) {
		t.Helper()
		if _, err := h.e.Submit(context.Background(), q.ID, node, []byte(raw)); err != nil {
			t.Fatalf("submit %s: %v", node, err)
		}
	}
	for i := range 3 {
		submit("n1", fmt.Sprintf("no json here, try %d", i))
	}
	for i := range 2 {
		submit("n2", fmt.Sprintf("no json there, try %d", i))
	}
	submit("n1", answer("dead", "the first idea misreads every sample, checked twice"))
	return h, q
}

func nodeRaw(t *testing.T, s *Store, id string) []byte {
	t.Helper()
	var raw []byte
	err := s.view(func(tx *store.Tx) error {
		k, err := records.NodeKey(id)
		if err != nil {
			return err
		}
		raw = slices.Clone(tx.Nodes().Get(k))
		return nil
	})
	if err != nil || raw == nil {
		t.Fatalf("node %s: %v", id, err)
	}
	return raw
}

func outcomes(log []Attempt) string {
	var out []string
	for _, a := range log {
		out = append(out, a.Outcome)
	}
	return strings.Join(out, ",")
}

func TestAttemptLogOutOfTheRecord(t *testing.T) {
	h, _ := attemptStore(t)
	n1, n2 := h.node("n1"), h.node("n2")
	if !n1.Status.Terminal() || outcomes(n1.Attempts) != "FAIL,FAIL,FAIL,PASS" || outcomes(n2.Attempts) != "FAIL,FAIL" {
		t.Fatalf("n1 %s %s, n2 %s: want n1 locked with FAIL,FAIL,FAIL,PASS and n2 FAIL,FAIL", n1.Status, outcomes(n1.Attempts), outcomes(n2.Attempts))
	}
	if n1.Attempts[0].Feedback == "" || n1.Attempts[0].Facts == nil || !n1.Attempts[0].TryUsed {
		t.Errorf("n1's first attempt lost its fields: %+v", n1.Attempts[0])
	}
	var rec struct {
		Attempts []json.RawMessage `json:"attempts"`
		Count    int               `json:"attempt_count"`
		Last     *Attempt          `json:"last_attempt"`
	}
	raw := nodeRaw(t, h.store, "n1")
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Attempts != nil || rec.Count != 4 || rec.Last == nil || rec.Last.Outcome != "PASS" {
		t.Errorf("n1's record: %d attempts inline, count %d, last %+v; want none inline, 4, the PASS", len(rec.Attempts), rec.Count, rec.Last)
	}
	// n2's last attempt is its gate result: the record holds it once.
	if raw := nodeRaw(t, h.store, "n2"); strings.Count(string(raw), `"rule":"contract"`) != 1 || !strings.Contains(string(raw), `"last_as_node":true`) {
		t.Errorf("n2's record holds its facts %d times, want once:\n%s", strings.Count(string(raw), `"rule":"contract"`), raw)
	}
	if l := n2.Attempts[1]; len(l.Facts) != 1 || l.Feedback == "" || l.ClaimHash == "" {
		t.Errorf("n2's last attempt read back without its gate result: %+v", l)
	}
	var recs int
	_ = h.store.view(func(tx *store.Tx) error {
		recs = tx.Attempts().KeyN()
		return nil
	})
	if recs != 3+1 {
		t.Errorf("%d attempt records, want 4 (n1's three FAILs, n2's first)", recs)
	}
	// A read for a write does not read the log.
	_ = h.store.view(func(tx *store.Tx) error {
		n, err := records.ReadNode(tx, "n2")
		if err != nil || n.Attempts != nil || n.AttemptCount != 2 {
			t.Errorf("records.ReadNode n2: %v, %d attempts read, count %d; want none read, 2", err, len(n.Attempts), n.AttemptCount)
		}
		return nil
	})
	if rep, err := h.e.Verify(); err != nil {
		t.Fatalf("verify: %v %q", err, rep.Problems)
	}
	// A locked node's ledger hash binds its whole log: rewriting an
	// attempt record, checksum and all, fails verify.
	dir := copyStore(t, h.dir)
	rewriteAttempts(t, dir, func(b *store.Bucket) {
		_, v := b.Cursor().First()
		r, _ := records.DecodeAttemptRecord(v)
		r.Attempt.Feedback = "nothing was wrong"
		if err := b.Put(u64(1), records.AppendAttemptRecord(nil, r.Node, r.Prev, &r.Attempt)); err != nil {
			t.Fatal(err)
		}
	})
	s := mustOpenStore(t, dir)
	defer s.Close()
	if _, err := s.Verify(); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "node n1: its attempt records do not hash") {
		t.Errorf("verify after an attempt record was rewritten: %v; want corrupt, naming n1", err)
	}
}

// rewriteAttempts changes the attempts bucket of the store in dir with
// bbolt itself: the pages stay sound, the records do not.
func rewriteAttempts(t *testing.T, dir string, fn func(b *store.Bucket)) {
	t.Helper()
	db, err := store.OpenBare(filepath.Join(dir, StoreFile), false, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(func(tx *store.Tx) error { fn(tx.Attempts()); return nil }); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyAndSalvageABrokenAttemptChain(t *testing.T) {
	h, _ := attemptStore(t)
	want1, want2 := h.node("n1").Attempts, h.node("n2").Attempts
	for _, c := range []struct {
		name, problem string
		damage        func(b *store.Bucket)
		// kept are how many of n1's attempts salvage keeps.
		kept int
	}{
		{"a record lost", "node n1: its attempt record 2 is missing", func(b *store.Bucket) { _ = b.Delete(u64(2)) }, 2},
		{"a record rotten", "node n1: its attempt record 2 does not decode", func(b *store.Bucket) {
			v := slices.Clone(b.Get(u64(2)))
			v[len(v)/2] ^= 1
			_ = b.Put(u64(2), v)
		}, 2},
		{"another node's record", "node n1: its attempt record 2 is node n2's", func(b *store.Bucket) {
			// n1's chain is 4, 2, 1 (its PASS sent its third FAIL
			// out after n2's second FAIL sent n2's first, 3).
			_ = b.Put(u64(2), slices.Clone(b.Get(u64(3))))
		}, 2},
		{"a cycle", "names attempt record 3 before it (a cycle)", func(b *store.Bucket) {
			r, _ := records.DecodeAttemptRecord(b.Get(u64(2)))
			_ = b.Put(u64(2), records.AppendAttemptRecord(nil, r.Node, 3, &r.Attempt))
		}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := copyStore(t, h.dir)
			rewriteAttempts(t, dir, c.damage)
			s := mustOpenStore(t, dir)
			_, err := s.Verify()
			s.Close()
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.problem) {
				t.Fatalf("verify: %v; want corrupt, %q", err, c.problem)
			}
			rep, err := Salvage(dir, time.Now())
			if err != nil || rep.Verify != "ok" {
				t.Fatalf("salvage: %+v, %v; want a store that verifies", rep, err)
			}
			s = mustOpenStore(t, dir)
			defer s.Close()
			vr, err := s.Verify()
			if err != nil || !strings.Contains(strings.Join(vr.Notes, "\n"), "locked nodes n1 can no longer be proven") {
				t.Errorf("verify after salvage: %v, notes %q; want ok, n1 unproven", err, vr.Notes)
			}
			e, err := New(s, Options{})
			if err != nil {
				t.Fatal(err)
			}
			n1, err := e.Node("n1")
			if err != nil {
				t.Fatalf("n1 after salvage: %v", err)
			}
			n2, err := e.Node("n2")
			if err != nil {
				t.Fatalf("n2 after salvage: %v", err)
			}
			if !n1.Status.Terminal() || jsonOf(t, n1.Attempts) != jsonOf(t, want1[len(want1)-c.kept:]) || n1.AttemptCount != c.kept {
				t.Errorf("n1 after salvage: %s, %s (count %d); want locked with its last %d attempts of %s", n1.Status, outcomes(n1.Attempts), n1.AttemptCount, c.kept, outcomes(want1))
			}
			if jsonOf(t, n2.Attempts) != jsonOf(t, want2) {
				t.Errorf("n2 after salvage: %s, want %s untouched", outcomes(n2.Attempts), outcomes(want2))
			}
		})
	}
}

// An older store's node records hold their whole log: the upgrade moves
// the log of every node not locked out, and a read-only open reads it as
// it is.
func TestMigrationMovesTheAttemptLog(t *testing.T) {
	h, q := attemptStore(t)
	if _, err := h.e.Submit(context.Background(), q.ID, "n2", []byte("no json, a third time")); err != nil {
		t.Fatal(err)
	}
	want2 := h.node("n2").Attempts
	dir := copyStore(t, h.dir)
	// Schema 8: n2's record holds its log; its records are gone. (n1 is
	// locked: its ledger record binds its record as it is.)
	toSchema8(t, dir, map[string][]Attempt{"n2": want2})

	ro, err := OpenStore(dir, StoreOptions{ReadOnly: true, Check: true})
	if err != nil {
		t.Fatalf("read-only open of schema 8: %v", err)
	}
	if rep, err := ro.Verify(); err != nil || rep.Schema != 8 {
		t.Errorf("read-only verify of schema 8: %+v, %v", rep, err)
	}
	_ = ro.view(func(tx *store.Tx) error {
		n, err := records.ReadNodeLog(tx, "n2")
		if err != nil || jsonOf(t, n.Attempts) != jsonOf(t, want2) {
			t.Errorf("read-only n2: %v, %s; want %s", err, outcomes(n.Attempts), outcomes(want2))
		}
		return nil
	})
	ro.Close()

	s := mustOpenStore(t, dir)
	defer s.Close()
	if rep, err := s.Verify(); err != nil || rep.Schema != SchemaVersion {
		t.Fatalf("verify after the upgrade: %+v, %v", rep, err)
	}
	var rec Node
	if err := json.Unmarshal(nodeRaw(t, s, "n2"), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Attempts != nil || rec.AttemptCount != 3 || rec.AttemptSeq == 0 || rec.Sittings != 0 {
		t.Errorf("n2's record after the upgrade: %d inline, count %d, seq %d; want none inline, 3, a chain", len(rec.Attempts), rec.AttemptCount, rec.AttemptSeq)
	}
	e, err := New(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	n2, err := e.Node("n2")
	if err != nil || jsonOf(t, n2.Attempts) != jsonOf(t, want2) {
		t.Errorf("n2 after the upgrade: %v, %s; want %s", err, outcomes(n2.Attempts), outcomes(want2))
	}
	// The next attempt goes on the migrated chain.
	if _, err := e.Submit(context.Background(), q.ID, "n2", []byte("no json, a fourth time")); err != nil {
		t.Fatal(err)
	}
	if n2, _ = e.Node("n2"); outcomes(n2.Attempts) != "FAIL,FAIL,FAIL,FAIL" {
		t.Errorf("n2 after one more: %s", outcomes(n2.Attempts))
	}
	if _, err := e.Verify(); err != nil {
		t.Errorf("verify: %v", err)
	}
}

// toSchema8 makes the store in dir a schema-8 one whose nodes in logs
// hold their logs in their records, their attempt records gone.
func toSchema8(t *testing.T, dir string, logs map[string][]Attempt) {
	t.Helper()
	db, err := store.OpenBare(filepath.Join(dir, StoreFile), false, 0)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *store.Tx) error {
		for id, log := range logs {
			n := new(Node)
			k, _ := records.NodeKey(id)
			if err := json.Unmarshal(tx.Nodes().Get(k), n); err != nil {
				return err
			}
			b := tx.Attempts()
			for seq := n.AttemptSeq; seq != 0; {
				r, err := records.DecodeAttemptRecord(b.Get(u64(seq)))
				if err != nil {
					return err
				}
				if err := b.Delete(u64(seq)); err != nil {
					return err
				}
				seq = r.Prev
			}
			n.Attempts = log
			n.AttemptCount, n.AttemptSeq, n.AttemptSum, n.LastAttempt, n.Sittings = 0, 0, "", nil, 0
			if err := putJSON(tx.Nodes(), k, n); err != nil {
				return err
			}
		}
		return tx.Meta().Put(kSchema, u64(8))
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
}

// migrateKillChild is set in the subprocess of TestMigrationCommitsInParts.
const migrateKillChild = "QUESTBOX_ENGINE_MIGRATE_KILL_CHILD"

// Migration 8 commits in parts; a store left between two parts (the
// process killed with SIGKILL in its third part) is refused by a
// read-only open, which cannot finish it, and finished by the next
// writable open: every log whole, none moved twice.
func TestMigrationCommitsInParts(t *testing.T) {
	if dir := os.Getenv(migrateKillChild); dir != "" {
		migrateBudget = 1 // a node a part
		sch, parts := schema(), 0
		sch.Migrations[8] = func(tx *store.Tx) error {
			if parts++; parts == 3 {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
				for {
					runtime.Gosched() // until the signal lands
				}
			}
			return migrateAttempts(tx)
		}
		db, err := store.Open(dir, StoreOptions{}, sch)
		if err == nil {
			db.Close()
		}
		t.Fatalf("the open that was to be killed in its third part returned: %v", err)
	}
	h := newHarness(t, Options{})
	q := h.quest(func(s *QuestSpec) {
		s.Provider, s.Mode, s.Limits.MaxTries, s.Limits.MaxStalled = ProviderExternal, ModeSolo, 10, 0
	})
	if _, err := h.e.Scan(q.ID, []string{"idea a", "idea b", "idea c", "idea d", "idea e", "idea f"}); err != nil {
		t.Fatal(err)
	}
	logs, moved := map[string][]Attempt{}, 0
	for i := 1; i <= 6; i++ {
		id := fmt.Sprintf("n%d", i)
		for j := range 1 + i%3 {
			if _, err := h.e.Submit(context.Background(), q.ID, id, []byte(fmt.Sprintf("no json from %s, try %d", id, j))); err != nil {
				t.Fatal(err)
			}
		}
		logs[id] = h.node(id).Attempts
		moved += len(logs[id]) - 1
	}
	dir := copyStore(t, h.dir)
	toSchema8(t, dir, logs)

	cmd := exec.Command(os.Args[0], "-test.run=^TestMigrationCommitsInParts$", "-test.count=1")
	cmd.Env = append(os.Environ(), migrateKillChild+"="+dir)
	out, err := cmd.CombinedOutput()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the migrating child was not killed in its third part: %v\n%s", err, out)
	}
	db, err := store.OpenBare(filepath.Join(dir, StoreFile), false, 0)
	if err != nil {
		t.Fatal(err)
	}
	_ = db.View(func(tx *store.Tx) error {
		m := tx.Meta()
		if !bytes.Equal(m.Get(kSchema), u64(9)) || !bytes.Equal(m.Get(store.KeyMigrating), u64(8)) || m.Get(kMigrated) == nil {
			t.Errorf("between parts: schema %x, migrating %x, migrated to %x; want 9, 8, a node", m.Get(kSchema), m.Get(store.KeyMigrating), m.Get(kMigrated))
		}
		if got := tx.Attempts().KeyN(); got == 0 || got >= moved {
			t.Errorf("between parts: %d attempt records; want some of %d", got, moved)
		}
		return nil
	})
	db.Close()
	if ro, err := OpenStore(dir, StoreOptions{ReadOnly: true}); !errors.Is(err, ErrReadOnly) {
		if err == nil {
			ro.Close()
		}
		t.Fatalf("read-only open between parts: %v; want ErrReadOnly", err)
	}

	s := mustOpenStore(t, dir)
	defer s.Close()
	if rep, err := s.Verify(); err != nil || rep.Schema != SchemaVersion {
		t.Fatalf("verify after the resumed upgrade: %+v, %v", rep, err)
	}
	_ = s.view(func(tx *store.Tx) error {
		m := tx.Meta()
		if m.Get(store.KeyMigrating) != nil || m.Get(kMigrated) != nil {
			t.Errorf("after the upgrade: migrating %x, migrated to %x; want neither", m.Get(store.KeyMigrating), m.Get(kMigrated))
		}
		if got := tx.Attempts().KeyN(); got != moved {
			t.Errorf("after the upgrade: %d attempt records; want %d", got, moved)
		}
		for id, want := range logs {
			n, err := records.ReadNodeLog(tx, id)
			if err != nil || jsonOf(t, n.Attempts) != jsonOf(t, want) {
				t.Errorf("%s after the upgrade: %v, %s; want %s", id, err, outcomes(n.Attempts), outcomes(want))
			}
		}
		return nil
	})
}

// A planted copy of a node's log is its own chain.
func TestPlantedNodeHasItsOwnLog(t *testing.T) {
	h, q := attemptStore(t)
	src := h.node("n2")
	made, err := h.e.PlantNode(q.ID, Node{Role: RoleScout, Hypothesis: "a planted idea", Status: Pending, Tries: src.Tries, Attempts: src.Attempts}, "")
	if err != nil {
		t.Fatal(err)
	}
	got := h.node(made.ID)
	if jsonOf(t, got.Attempts) != jsonOf(t, src.Attempts) || got.AttemptSeq == src.AttemptSeq {
		t.Errorf("planted: %s (chain %d), want %s on its own chain (not %d)", outcomes(got.Attempts), got.AttemptSeq, outcomes(src.Attempts), src.AttemptSeq)
	}
	if rep, err := h.e.Verify(); err != nil {
		t.Errorf("verify: %v %q", err, rep.Problems)
	}
}
