package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"testing"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/prompt"
	"github.com/questbox/questbox/engine/store"
)

// evidenceIndexOf is quest's evidence index: lock sequence -> node id.
func evidenceIndexOf(t *testing.T, s *Store, quest string) map[uint64]string {
	t.Helper()
	got := map[uint64]string{}
	err := s.view(func(tx *store.Tx) error {
		if tx.Evidence() == nil {
			return errors.New("no evidence index")
		}
		b := subRO(tx, bEvidence, quest)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			got[seqOf(k)] = string(v)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// plant plants node n in quest and fails the test on an error.
func plant(t *testing.T, h *harness, quest string, n Node) *Node {
	t.Helper()
	made, err := h.e.PlantNode(quest, n, "")
	if err != nil {
		t.Fatalf("plant %+v: %v", n, err)
	}
	return made
}

// plantedLocks plants, in quest, a locked node with evidence, a dead end
// without, a council member's vote and a proposal, and returns the
// evidence index they call for (only the first).
func plantedLocks(t *testing.T, h *harness, quest string) map[uint64]string {
	t.Helper()
	shown := plant(t, h, quest, Node{Role: RoleScout, Hypothesis: "a lead with evidence", Status: Explored, Verdict: "promising", Evidence: "the lead holds on every sample"})
	plant(t, h, quest, Node{Role: RoleScout, Hypothesis: "a dead end", Status: Aborted})
	plant(t, h, quest, Node{Role: RoleReviewer, Hypothesis: "a vote", Status: Explored, Verdict: "advice", Evidence: `{"dissent":""}`})
	plant(t, h, quest, Node{Role: RoleScout, Hypothesis: "a proposal", Status: Proposed, Evidence: "not locked yet"})
	return map[uint64]string{shown.LockSeq: shown.ID}
}

// The evidence index names the locked nodes whose evidence the owner's
// prompt shows, as they lock: by an agent's answer judged by the tick's
// path, planted, not an abort, a dead end or a council member's vote.
func TestEvidenceIndexFollowsTheLocks(t *testing.T) {
	worker := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		return reply(answer("promising", "the scout found a lead worth weighing")), nil
	})
	h := localHarness(t, Options{Providers: map[string]Provider{"w": worker}})
	q := h.quest(func(s *QuestSpec) { s.Provider, s.Mode = "w", ModeSolo })
	want := plantedLocks(t, h, q.ID)
	if _, err := h.e.Scan(q.ID, []string{"an idea to abort"}); err != nil {
		t.Fatal(err)
	}

	// The tick dispatches the quest's first pending node; its answer
	// locks it with evidence.
	rep := h.tick()
	h.e.Wait()
	if len(rep.Dispatched) != 1 {
		t.Fatalf("dispatched %v, want one node", rep.Dispatched)
	}
	answered := h.node(rep.Dispatched[0])
	if !answered.Status.Terminal() || answered.Evidence == "" {
		t.Fatalf("node %s after its answer: %s, evidence %q; want locked with evidence", answered.ID, answered.Status, answered.Evidence)
	}
	want[answered.LockSeq] = answered.ID

	// An abort locks a node without evidence.
	pending := h.nodesByStatus(q.ID)[Pending]
	if len(pending) == 0 {
		t.Fatal("no pending node left to abort")
	}
	for _, id := range pending {
		if _, err := h.e.AbortNode(id, "test"); err != nil {
			t.Fatal(err)
		}
	}
	if got := evidenceIndexOf(t, h.store, q.ID); !maps.Equal(got, want) {
		t.Errorf("evidence index %v, want %v", got, want)
	}
	if rep, err := h.e.Verify(); err != nil {
		t.Errorf("verify: %v (%q)", err, rep.Problems)
	}
}

// Verify names an evidence index out of step with the nodes (store
// damage), and salvage rebuilds it from the nodes.
func TestVerifyNamesAWrongEvidenceIndex(t *testing.T) {
	cases := []struct {
		name    string
		damage  func(b *store.Bucket, shown, dead, member *Node) error
		problem string // %[1]s shown, %[2]s dead, %[3]s member, %[4]s quest
	}{
		{"an entry missing", func(b *store.Bucket, shown, _, _ *Node) error { return b.Delete(u64(shown.LockSeq)) },
			"locked node %[1]s has evidence but is missing from its quest's evidence index"},
		{"a dead end named", func(b *store.Bucket, _, dead, _ *Node) error { return b.Put(u64(dead.LockSeq), []byte(dead.ID)) },
			"the evidence index of quest %[4]s names node %[2]s, which is not a locked node with evidence in the store"},
		{"a member named", func(b *store.Bucket, _, _, member *Node) error {
			return b.Put(u64(member.LockSeq), []byte(member.ID))
		}, "the evidence index of quest %[4]s names node %[3]s, which is not a locked node with evidence in the store"},
		{"a node missing from the store", func(b *store.Bucket, _, _, _ *Node) error { return b.Put(u64(999), []byte("n999")) },
			"the evidence index of quest %[4]s names node n999, which is not a locked node with evidence in the store"},
		{"an entry under another sequence", func(b *store.Bucket, shown, _, _ *Node) error { return b.Put(u64(999), []byte(shown.ID)) },
			"the evidence index of quest %[4]s names node %[1]s under lock sequence 999; its record says quest %[4]s, lock sequence 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, Options{})
			q := h.quest(func(s *QuestSpec) { s.Provider, s.Mode = ProviderExternal, ModeSolo })
			shown := plant(t, h, q.ID, Node{Role: RoleScout, Hypothesis: "a lead with evidence", Status: Explored, Verdict: "promising", Evidence: "the lead holds on every sample"})
			dead := plant(t, h, q.ID, Node{Role: RoleScout, Hypothesis: "a dead end", Status: Aborted})
			member := plant(t, h, q.ID, Node{Role: RoleJudge, Hypothesis: "a vote", Status: Explored, Verdict: "pass", Evidence: `{"verdict":"pass"}`})
			want := evidenceIndexOf(t, h.store, q.ID)
			if !maps.Equal(want, map[uint64]string{shown.LockSeq: shown.ID}) || shown.LockSeq != 1 {
				t.Fatalf("evidence index before the damage %v, want %s under 1", want, shown.ID)
			}
			h.close()

			st := mustOpenStore(t, h.dir)
			err := st.db.Update(func(tx *store.Tx) error {
				return c.damage(subRO(tx, bEvidence, q.ID), shown, dead, member)
			})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := st.Verify()
			problem := fmt.Sprintf(c.problem, shown.ID, dead.ID, member.ID, q.ID)
			if !errors.Is(err, ErrCorrupt) || len(rep.Problems) != 1 || rep.Problems[0] != problem {
				t.Errorf("verify: %v, problems %q; want ErrCorrupt and %q", err, rep.Problems, problem)
			}
			st.Close()
			if _, err := Salvage(h.dir, h.clock.Now()); err != nil {
				t.Fatal(err)
			}
			h.open() // verified clean at cleanup
			if got := evidenceIndexOf(t, h.store, q.ID); !maps.Equal(got, want) {
				t.Errorf("evidence index after salvage %v, want %v", got, want)
			}
		})
	}
}

// A store of schema 6 reads as it is (the owner's material walks the
// locked index) and migrates to schema 7 with its evidence index built;
// the owner's material is the same both ways.
func TestMigrationBuildsTheEvidenceIndex(t *testing.T) {
	h := newHarness(t, Options{})
	q := h.quest(func(s *QuestSpec) { s.Provider, s.Mode = ProviderExternal, ModeSolo })
	want := plantedLocks(t, h, q.ID)
	material := func(s *Store) *prompt.Material {
		t.Helper()
		var m *prompt.Material
		err := s.view(func(tx *store.Tx) error {
			qq, _, err := getQuest(tx, q.ID)
			if err != nil {
				return err
			}
			m, err = prompt.ReadMaterial(promptRecords(), tx, qq, DefaultEvidenceCap)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	was := material(h.store)
	if !strings.Contains(was.LockedPart(), "the lead holds on every sample") || strings.Contains(was.LockedPart(), "dissent") {
		t.Fatalf("owner's material at schema 7:\n%s", was.LockedPart())
	}
	h.close()

	// Back to schema 6: no evidence index.
	st := mustOpenStore(t, h.dir)
	err := st.db.Update(func(tx *store.Tx) error {
		if err := tx.DeleteBucket(bEvidence); err != nil {
			return err
		}
		return tx.Meta().Put(kSchema, u64(6))
	})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()

	ro, err := OpenStore(h.dir, StoreOptions{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open of schema 6: %v", err)
	}
	if got := material(ro); !reflect.DeepEqual(got, was) {
		t.Errorf("schema 6 read as it is: material\n%+v\nwant\n%+v", got, was)
	}
	if rep, err := ro.Verify(); err != nil || rep.Schema != 6 {
		t.Errorf("verify of schema 6 read as it is: schema %d, %v (%q)", rep.Schema, err, rep.Problems)
	}
	ro.Close()

	h.open() // migrates; verified at cleanup
	if got := evidenceIndexOf(t, h.store, q.ID); !maps.Equal(got, want) {
		t.Errorf("evidence index after the migration %v, want %v", got, want)
	}
	if got := material(h.store); !reflect.DeepEqual(got, was) {
		t.Errorf("after the migration: material\n%+v\nwant\n%+v", got, was)
	}
}

// The owner's material read through the evidence index is, byte for
// byte, what the walk over the locked index read: the same nodes, cut
// the same way, and the same note that older nodes were left out, which
// the walk wrote when the cap ran out with any older locked node left,
// with evidence or not.
func TestOwnerMaterialWithAndWithoutTheEvidenceIndex(t *testing.T) {
	h := newHarness(t, Options{})
	ev := func(i int) string {
		return fmt.Sprintf("evidence %d: %s", i, strings.Repeat("measured and confirmed ", 4))
	}
	type step struct {
		role string
		st   Status
		ev   bool
	}
	dead, shown, vote := step{RoleScout, Aborted, false}, step{RoleScout, Explored, true}, step{RoleReviewer, Explored, true}
	cases := []struct {
		name  string
		steps []step // oldest first
		cap   int
		more  bool
	}{
		{"cap out, dead ends older", []step{dead, dead, shown, vote, shown, dead, shown, shown, dead}, 200, true},
		{"cap out, nothing older", []step{shown, vote, shown, dead, shown, shown, dead}, 200, false},
		{"cap out, evidence older", []step{shown, dead, shown, shown, shown, shown}, 200, true},
		{"cap out at the last", []step{shown, shown, shown, shown}, 200, false},
		{"within the cap", []step{dead, shown, vote, dead, shown, dead}, DefaultEvidenceCap, false},
		{"dead ends only", []step{dead, dead, vote}, DefaultEvidenceCap, false},
		{"none locked", nil, DefaultEvidenceCap, false},
	}
	for _, c := range cases {
		q := h.quest(func(s *QuestSpec) { s.Provider, s.Mode, s.Name = ProviderExternal, ModeSolo, c.name })
		for i, s := range c.steps {
			n := Node{Role: s.role, Hypothesis: fmt.Sprintf("%s node %d", s.role, i), Status: s.st}
			if s.ev {
				n.Evidence, n.Verdict = ev(i), "promising"
			}
			plant(t, h, q.ID, n)
		}
		plant(t, h, q.ID, Node{Role: RoleScout, Hypothesis: "a proposal", Status: Proposed})
		var indexed, walked *prompt.Material
		err := h.store.view(func(tx *store.Tx) error {
			qq, _, err := getQuest(tx, q.ID)
			if err != nil {
				return err
			}
			indexed, err = prompt.ReadMaterial(promptRecords(), tx, qq, c.cap)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		// The same without the index, as a store before schema 7 is read,
		// in a transaction that is rolled back.
		errRollback := errors.New("rolled back")
		err = h.store.db.Update(func(tx *store.Tx) error {
			if err := tx.DeleteBucket(bEvidence); err != nil {
				return err
			}
			qq, _, err := getQuest(tx, q.ID)
			if err != nil {
				return err
			}
			if walked, err = prompt.ReadMaterial(promptRecords(), tx, qq, c.cap); err != nil {
				return err
			}
			return errRollback
		})
		if !errors.Is(err, errRollback) {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(indexed, walked) {
			t.Errorf("%s: through the evidence index\n%s\nwalking the locked index\n%s", c.name, indexed.LockedPart(), walked.LockedPart())
		}
		if got := strings.Contains(indexed.LockedPart(), "(older locked nodes left out"); got != c.more {
			t.Errorf("%s: older nodes left out said %v, want %v:\n%s", c.name, got, c.more, indexed.LockedPart())
		}
	}
}
