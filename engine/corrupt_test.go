package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/store"
	"github.com/questbox/questbox/engine/storetest"
)

// buildStore makes a store through the engine API: two quests, 330
// nodes, 40 of them locked by a verdict and 10 failed once. The last
// commit is a device event, so that falling back to the meta page before
// it loses no node. It returns the data directory, closed.
func buildStore(t *testing.T) string {
	t.Helper()
	h := newHarness(t, Options{})
	q := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal; s.Mode = ModeSolo })
	var hyps []string
	for i := range 300 {
		hyps = append(hyps, fmt.Sprintf("hypothesis %03d: %s", i, strings.Repeat("a long enough text to fill pages ", 6)))
	}
	res, err := h.e.Scan(q.ID, hyps)
	if err != nil || len(res.Added) != 300 {
		t.Fatalf("scan: %d added, %v", len(res.Added), err)
	}
	for i, id := range res.Added[:50] {
		raw := answer("dead", fmt.Sprintf("node %s is a dead end: evidence number %d, checked twice", id, i))
		if i >= 40 {
			raw = "no json here for " + id
		}
		if _, err := h.e.Submit(context.Background(), q.ID, id, []byte(raw)); err != nil {
			t.Fatal(err)
		}
		h.clock.Advance(time.Second) // copies of a node differ in their update time
	}
	q2 := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal; s.Mode = ModeSolo })
	if _, err := h.e.Scan(q2.ID, hyps[:30]); err != nil {
		t.Fatal(err)
	}
	if err := h.e.RecordDeviceEvent(DeviceEvent{What: DevicePress, Result: "the last commit"}); err != nil {
		t.Fatal(err)
	}
	h.close()
	return h.dir
}

// copyStore copies the store of dir into a new directory.
func copyStore(t *testing.T, dir string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, StoreFile))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := os.WriteFile(filepath.Join(out, StoreFile), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	copyDeviceKey(t, dir, out)
	return out
}

// copyDeviceKey copies the device key of the data directory from into
// to, if from has one: a store copied with its box's key reads as that
// box's (engine/commit/seal.go).
func copyDeviceKey(t testing.TB, from, to string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(from, DeviceKeyFile))
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(to, DeviceKeyFile), raw, 0o600)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// nodeRecords returns the stored node records of the store in dir, by
// sequence.
func nodeRecords(t *testing.T, dir string) map[uint64][]byte {
	t.Helper()
	s, err := OpenStore(dir, StoreOptions{ReadOnly: true, Check: true})
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	defer s.Close()
	out := map[uint64][]byte{}
	err = s.view(func(tx *store.Tx) error {
		return tx.Nodes().ForEach(func(k, v []byte) error {
			out[seqOf(k)] = bytes.Clone(v)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// olderCopy reports whether v is an older version of the node record cur.
func olderCopy(v, cur []byte) bool {
	var a, b Node
	return json.Unmarshal(v, &a) == nil && json.Unmarshal(cur, &b) == nil && a.ID == b.ID && a.Updated.Before(b.Updated)
}

// lockedNode returns the id and stored record of a locked node.
func lockedNode(t *testing.T, recs map[uint64][]byte) (uint64, *Node) {
	t.Helper()
	for _, seq := range slices.Sorted(maps.Keys(recs)) {
		var n Node
		if err := json.Unmarshal(recs[seq], &n); err != nil {
			t.Fatal(err)
		}
		if n.Status.Terminal() && seq > 20 {
			return seq, &n
		}
	}
	t.Fatal("no locked node")
	return 0, nil
}

func damageFile(t *testing.T, dir string, fn func(f *storetest.File) error) {
	t.Helper()
	f, err := storetest.Open(filepath.Join(dir, StoreFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := fn(f); err != nil {
		t.Fatal(err)
	}
}

// TestDamagedStores damages a copy of a real store in each way a card or
// a hand can, and checks for each: no panic; the start-up check refuses it
// naming the damage (or opens it, for one damaged meta page); verify names
// the damage; salvage recovers every record outside the damaged pages,
// byte for byte, and its result verifies.
func TestDamagedStores(t *testing.T) {
	base := buildStore(t)
	all := nodeRecords(t, base)
	if len(all) < 330 {
		t.Fatalf("fixture has %d nodes, want at least 330", len(all))
	}
	every := func(map[uint64][]byte) map[uint64]bool {
		m := map[uint64]bool{}
		for k := range all {
			m[k] = true
		}
		return m
	}

	type tc struct {
		name string
		// damage breaks the store in dir and returns the nodes salvage
		// must recover (at least; exactly when exact is set).
		damage func(t *testing.T, dir string) map[uint64]bool
		exact  bool
		opens  bool   // the start-up check still opens it
		named  string // the damage as the check and verify name it
		ledger bool   // a page-sound rewrite: only the ledger finds it
	}
	cases := []tc{
		{name: "garbage in the current meta page", opens: true, exact: true, named: "meta page",
			damage: func(t *testing.T, dir string) map[uint64]bool {
				damageFile(t, dir, func(f *storetest.File) error { return f.GarbageMeta(f.MetaPage) })
				return every(all)
			}},
		{name: "garbage in the other meta page", opens: true, exact: true, named: "meta page",
			damage: func(t *testing.T, dir string) map[uint64]bool {
				damageFile(t, dir, func(f *storetest.File) error { return f.GarbageMeta(1 - f.MetaPage) })
				return every(all)
			}},
		{name: "garbage in both meta pages", exact: true, named: "both meta pages are damaged",
			damage: func(t *testing.T, dir string) map[uint64]bool {
				damageFile(t, dir, func(f *storetest.File) error {
					return errors.Join(f.GarbageMeta(0), f.GarbageMeta(1))
				})
				return every(all)
			}},
		{name: "freelist count zeroed", exact: true, named: "neither in use nor listed in the freelist",
			damage: func(t *testing.T, dir string) map[uint64]bool {
				damageFile(t, dir, func(f *storetest.File) error { return f.ZeroFreelistCount() })
				return every(all)
			}},
		{name: "garbage branch page", exact: true, named: "bucket nodes: page",
			damage: func(t *testing.T, dir string) map[uint64]bool {
				damageFile(t, dir, func(f *storetest.File) error {
					root, err := f.BucketRoot("nodes")
					if err != nil {
						return err
					}
					if !f.IsBranch(root) {
						return fmt.Errorf("the nodes bucket's root page %d is not a branch page", root)
					}
					return f.Garbage(root)
				})
				return every(all)
			}},
		{name: "garbage leaf page", exact: true, named: "bucket nodes: page",
			damage: func(t *testing.T, dir string) map[uint64]bool {
				seq, _ := lockedNode(t, all)
				want := every(all)
				damageFile(t, dir, func(f *storetest.File) error {
					leaf, err := f.LeafOf(storetest.Seq(seq), "nodes")
					if err != nil {
						return err
					}
					keys, err := f.Keys(leaf)
					for _, k := range keys {
						delete(want, seqOf(k))
					}
					return errors.Join(err, f.Garbage(leaf))
				})
				if len(want) == len(all) || len(want) < len(all)-20 {
					t.Fatalf("the damaged leaf held %d nodes", len(all)-len(want))
				}
				return want
			}},
		{name: "truncated to half", named: "cut short",
			damage: func(t *testing.T, dir string) map[uint64]bool {
				path := filepath.Join(dir, StoreFile)
				want := map[uint64]bool{}
				var cut int64
				damageFile(t, dir, func(f *storetest.File) error {
					pages := f.HWM()
					cut = int64(pages/2) * int64(f.PageSize())
					for seq := range all {
						ids, err := f.Pages(storetest.Seq(seq), "nodes")
						if err != nil {
							return err
						}
						if ids[len(ids)-1] < pages/2 {
							want[seq] = true // its leaf (and overflow) lies before the cut
						}
					}
					return nil
				})
				if err := os.Truncate(path, cut); err != nil {
					t.Fatal(err)
				}
				return want
			}},
		{name: "truncated to 0 bytes", exact: true, named: "the file is empty",
			damage: func(t *testing.T, dir string) map[uint64]bool {
				if err := os.Truncate(filepath.Join(dir, StoreFile), 0); err != nil {
					t.Fatal(err)
				}
				return map[uint64]bool{}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := copyStore(t, base)
			want := c.damage(t, dir)

			// The start-up check.
			s, err := OpenStore(dir, StoreOptions{Check: true})
			switch {
			case c.opens && err != nil:
				t.Fatalf("start-up check: %v; want the store to open", err)
			case c.opens:
				if notes := strings.Join(s.Notes(), "; "); !strings.Contains(notes, c.named) {
					t.Errorf("notes %q do not name the damage (%q)", notes, c.named)
				}
				s.Close()
			case !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.named) || !strings.Contains(err.Error(), "questbox salvage --data "+dir):
				t.Fatalf("start-up check: %v; want ErrCorrupt naming %q and the salvage command", err, c.named)
			}

			// verify: an open without the full check, then Verify.
			if !c.opens {
				dir := copyStore(t, dir)
				s, err := OpenStore(dir, StoreOptions{})
				if err == nil {
					var rep VerifyReport
					rep, err = s.Verify()
					s.Close()
					if len(rep.Problems) == 0 {
						t.Errorf("verify failed without listing problems: %v", err)
					}
				}
				if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.named) {
					t.Errorf("verify: %v; want ErrCorrupt naming %q", err, c.named)
				}
			}

			rep, err := Salvage(dir, time.Date(2026, 12, 3, 4, 5, 6, 0, time.UTC))
			if err != nil {
				t.Fatalf("salvage: %v", err)
			}
			if rep.Healthy != c.opens {
				t.Errorf("salvage says healthy=%v, want %v", rep.Healthy, c.opens)
			}
			if !c.opens {
				if rep.Moved != filepath.Join(dir, StoreFile)+".corrupt-20261203T040506Z" {
					t.Errorf("damaged file moved to %q", rep.Moved)
				}
				if _, err := os.Stat(rep.Moved); err != nil {
					t.Errorf("the damaged file is not kept: %v", err)
				}
			}
			if rep.Verify != "ok" {
				t.Errorf("the salvaged store does not verify: %s\nsalvage report: %+v", rep.Verify, rep)
			}
			if matches, _ := filepath.Glob(filepath.Join(dir, "*.salvage")); len(matches) > 0 {
				t.Errorf("salvage left %v behind", matches)
			}
			got := nodeRecords(t, dir)
			for seq := range want {
				if got[seq] == nil {
					t.Errorf("node #%d was outside the damaged pages but was not recovered", seq)
				}
			}
			for seq, v := range got {
				if !want[seq] && olderCopy(v, all[seq]) {
					continue // its live page was lost: an older copy came back
				}
				if !bytes.Equal(v, all[seq]) {
					t.Errorf("node #%d was recovered with different bytes", seq)
				}
			}
			if c.exact && len(got) != len(want) {
				t.Errorf("recovered %d nodes, want exactly %d", len(got), len(want))
			}
			t.Logf("recovered %d of %d nodes (%d required); lost: %q", len(got), len(all), len(want), rep.Lost)

			// The engine runs on the result, and it verifies.
			h := &harness{t: t, dir: dir, clock: newFakeClock()}
			h.open()
			defer h.close()
			for _, q := range []string{"q1", "q2"} {
				if _, err := h.e.Nodes(q); err != nil && !errors.Is(err, ErrNotFound) {
					t.Errorf("nodes of %s after salvage: %v", q, err)
				}
			}
			spec := h.e.NewQuestSpec("after", "salvage")
			spec.Provider = ProviderExternal
			if _, err := h.e.NewQuest(spec); err != nil {
				t.Errorf("new quest after salvage: %v", err)
			}
		})
	}
}

// A rewrite of a locked node's stored record that keeps the page sound —
// by hand in the file, same length, or through bbolt, any length — is not
// page damage: the store opens, and verify names the node.
func TestRewrittenLockedNodeFailsVerify(t *testing.T) {
	base := buildStore(t)
	all := nodeRecords(t, base)
	seq, n := lockedNode(t, all)
	for _, tc := range []struct {
		name    string
		rewrite func(t *testing.T, dir string)
	}{
		{"same length, in the file", func(t *testing.T, dir string) {
			damageFile(t, dir, func(f *storetest.File) error {
				return f.Rewrite(storetest.Seq(seq), []byte("dead end"), []byte("DEAD END"), "nodes")
			})
		}},
		{"one byte of a key name, in the file", func(t *testing.T, dir string) {
			damageFile(t, dir, func(f *storetest.File) error {
				return f.Rewrite(storetest.Seq(seq), []byte(`"evidence"`), []byte(`"Evidence"`), "nodes")
			})
		}},
		{"longer, through bbolt", func(t *testing.T, dir string) {
			db, err := store.OpenBare(filepath.Join(dir, StoreFile), false, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			n2 := *n
			n2.Evidence += " and then some more evidence nobody gave"
			raw, _ := json.Marshal(n2)
			if err := db.Update(func(tx *store.Tx) error { return tx.Nodes().Put(u64(seq), raw) }); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyStore(t, base)
			tc.rewrite(t, dir)
			s, err := OpenStore(dir, StoreOptions{Check: true})
			if err != nil {
				t.Fatalf("a page-sound rewrite: open: %v", err)
			}
			rep, err := s.Verify()
			s.Close()
			if !errors.Is(err, ErrLedgerBroken) || !strings.Contains(err.Error(), "locked node "+n.ID+" was rewritten") {
				t.Fatalf("verify: %v; want ErrLedgerBroken naming node %s", err, n.ID)
			}
			if len(rep.Problems) != 1 {
				t.Errorf("problems %q, want the one rewritten node", rep.Problems)
			}
			srep, err := Salvage(dir, time.Now())
			if err != nil || !srep.Healthy || !strings.Contains(srep.Verify, n.ID) {
				t.Errorf("salvage of a rewritten node: %+v, %v; want healthy, verify naming %s", srep, err, n.ID)
			}
		})
	}
}

// Salvage leaves nothing behind where it fails, at whatever step: the
// temporary file is removed and the damaged store stays in place, as it was.
func TestSalvageLeavesNoPartialFile(t *testing.T) {
	base := buildStore(t)
	for _, at := range []string{"written", "verified", "linked"} {
		t.Run(at, func(t *testing.T) {
			dir := copyStore(t, base)
			damageFile(t, dir, func(f *storetest.File) error {
				root, _ := f.BucketRoot("nodes")
				return f.Garbage(root)
			})
			before, _ := os.ReadFile(filepath.Join(dir, StoreFile))
			reached := false
			_, err := salvage(dir, time.Now(), func(step string) error {
				if step == at {
					reached = true
					return syscall.EIO
				}
				return nil
			})
			if !reached || !errors.Is(err, syscall.EIO) {
				t.Fatalf("salvage failing after %q: %v (step reached: %v)", at, err, reached)
			}
			after, _ := os.ReadFile(filepath.Join(dir, StoreFile))
			if !bytes.Equal(before, after) {
				t.Error("a failed salvage changed the store")
			}
			if m, _ := filepath.Glob(filepath.Join(dir, StoreFile+".*")); len(m) > 0 {
				t.Errorf("a failed salvage left %v", m)
			}
		})
	}
	// An old temporary file from a salvage that was killed is replaced.
	dir := copyStore(t, base)
	damageFile(t, dir, func(f *storetest.File) error { return f.GarbageMeta(0) })
	damageFile(t, dir, func(f *storetest.File) error { return f.GarbageMeta(1) })
	os.WriteFile(filepath.Join(dir, StoreFile+".salvage"), []byte("half a file"), 0o600)
	if rep, err := Salvage(dir, time.Now()); err != nil || rep.Verify != "ok" {
		t.Fatalf("salvage over an old temporary file: %+v, %v", rep, err)
	}
	if _, err := os.Stat(filepath.Join(dir, StoreFile+".salvage")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temporary file is still there: %v", err)
	}
}

// Bytes flipped at random anywhere in the file: whatever they hit, the
// check, verify, every read and salvage return errors, never panic or
// fault, and salvage's result opens and verifies. The seeds are fixed, so
// a failure is reproducible.
func TestRandomDamageNeverPanics(t *testing.T) {
	base := buildStore(t)
	raw, err := os.ReadFile(filepath.Join(base, StoreFile))
	if err != nil {
		t.Fatal(err)
	}
	for seed := range uint64(12) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 7))
			dir := t.TempDir()
			b := bytes.Clone(raw)
			for range 1 + r.IntN(8) {
				b[r.IntN(len(b))] ^= byte(1 + r.IntN(255))
			}
			if err := os.WriteFile(filepath.Join(dir, StoreFile), b, 0o600); err != nil {
				t.Fatal(err)
			}
			if s, err := OpenStore(dir, StoreOptions{Check: true}); err == nil {
				s.Close()
			} else if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("check: %v", err)
			}
			if s, err := OpenStore(copyStore(t, dir), StoreOptions{}); err == nil {
				s.Verify()
				if e, err := New(s, Options{ReadOnly: true}); err == nil {
					qs, _ := e.Quests()
					for _, q := range qs {
						e.Nodes(q.ID)
						e.Next(q.ID)
					}
					e.Events(0, 0)
				}
				s.Close()
			}
			rep, err := Salvage(dir, time.Now())
			if err != nil {
				t.Fatalf("salvage: %v", err)
			}
			s, err := OpenStore(dir, StoreOptions{Check: true})
			if err != nil {
				t.Fatalf("the salvaged store does not open: %v (report %+v)", err, rep)
			}
			defer s.Close()
			if vrep, err := s.Verify(); err != nil && !errors.Is(err, ErrLedgerBroken) {
				t.Errorf("the salvaged store: %v (%q)", err, vrep.Problems)
			}
		})
	}
}

// A ledger record that does not decode is store damage (bit rot, or a
// page of another bucket's records where the tree names a ledger page, as
// TestPowerLossCopies's torn copies showed with outbox groups), not a
// rewrite: verify names the store corrupt and salvage, which drops the
// record, records it lost, and verifies.
func TestRottenLedgerRecordIsCorrupt(t *testing.T) {
	base := buildStore(t)
	for _, c := range []struct{ name, old, new string }{
		{"not JSON", `"seq":`, "\"seq\"\x00"},
		// Valid JSON whose time does not parse: salvage must drop what
		// verify cannot decode (TestRandomDamageNeverPanics found one).
		{"a time that does not parse", `"time":"2026-12-02T`, `"time":"2026-12-02i`},
	} {
		t.Run(c.name, func(t *testing.T) { rottenLedgerRecord(t, base, c.old, c.new) })
	}
}

func rottenLedgerRecord(t *testing.T, base, old, new string) {
	dir := copyStore(t, base)
	const seq = 12
	damageFile(t, dir, func(f *storetest.File) error {
		return f.Rewrite(storetest.Seq(seq), []byte(old), []byte(new), "ledger")
	})
	s := mustOpenStore(t, dir)
	_, err := s.Verify()
	s.Close()
	if !errors.Is(err, ErrCorrupt) || errors.Is(err, ErrLedgerBroken) || !strings.Contains(err.Error(), fmt.Sprintf("ledger record %d does not decode", seq)) {
		t.Fatalf("verify: %v; want the store corrupt, naming ledger record %d", err, seq)
	}
	rep, err := Salvage(dir, time.Now())
	if err != nil || rep.Healthy || rep.Verify != "ok" {
		t.Fatalf("salvage: %+v, %v; want the record dropped and a store that verifies", rep, err)
	}
	s = mustOpenStore(t, dir)
	defer s.Close()
	if vrep, err := s.Verify(); err != nil || !strings.Contains(strings.Join(vrep.Notes, "\n"), fmt.Sprintf("ledger records %d were lost", seq)) {
		t.Errorf("verify after salvage: %+v, %v; want ok, noting record %d lost", vrep, err, seq)
	}
}

// Bit rot inside a value, on a sound page: the store opens, verify names
// the record, and salvage drops it — recording the loss — so that the
// result verifies and every other record is kept.
func TestSalvageDropsARottenRecord(t *testing.T) {
	base := buildStore(t)
	all := nodeRecords(t, base)
	dir := copyStore(t, base)
	const seq = 200 // a pending node
	damageFile(t, dir, func(f *storetest.File) error {
		return f.Rewrite(storetest.Seq(seq), []byte(`"hypothesis":`), []byte("\"hypothesis\"\x00"), "nodes")
	})
	s, err := OpenStore(dir, StoreOptions{Check: true})
	if err != nil {
		t.Fatalf("pages are sound: %v", err)
	}
	_, err = s.Verify()
	s.Close()
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "node record "+domain.NodeID(seq)+" does not decode") || !strings.Contains(err.Error(), "questbox salvage") {
		t.Fatalf("verify: %v; want the store corrupt, the rotten node named and salvage", err)
	}
	rep, err := Salvage(dir, time.Now())
	if err != nil || rep.Healthy || rep.Verify != "ok" {
		t.Fatalf("salvage: %+v, %v; want the record dropped and a store that verifies", rep, err)
	}
	got := nodeRecords(t, dir)
	if got[seq] != nil || len(got) != len(all)-1 {
		t.Errorf("after salvage: %d nodes (node %d present: %v), want %d without it", len(got), seq, got[seq] != nil, len(all)-1)
	}
}

// A status name damaged into one no questbox knows, in a quest's counts
// or in a node, is named by verify, and salvage drops the record (a quest
// record comes back as a placeholder holding its nodes): never a count
// dropped in silence.
func TestAnUnknownStatusIsNamed(t *testing.T) {
	base := buildStore(t)
	for _, c := range []struct {
		name, bucket string
		key          []byte
		old, new     string
		verify, note string
	}{
		{"quest", "quests", []byte("q2"), "\x07pending", "\x07pendinx",
			`quest record q2 does not decode (malformed record: Counts: unknown node status "pendinx")`, "quest q2 was lost: recreated as a stopped placeholder"},
		{"node", "nodes", storetest.Seq(200), `"status":"pending"`, `"status":"pendinx"`,
			"of its nodes are pendinx", `as node ` + domain.NodeID(200) + ` (unknown status "pendinx"): dropped`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := copyStore(t, base)
			db, err := store.OpenBare(filepath.Join(dir, StoreFile), false, 0)
			if err != nil {
				t.Fatal(err)
			}
			err = db.Update(func(tx *store.Tx) error {
				b := tx.Bucket([]byte(c.bucket))
				v := b.Get(c.key)
				if !bytes.Contains(v, []byte(c.old)) {
					return fmt.Errorf("record %x holds no %q", c.key, c.old)
				}
				return b.Put(c.key, bytes.Replace(v, []byte(c.old), []byte(c.new), 1))
			})
			db.Close()
			if err != nil {
				t.Fatal(err)
			}
			s, err := OpenStore(dir, StoreOptions{Check: true})
			if err != nil {
				t.Fatalf("pages are sound: %v", err)
			}
			_, err = s.Verify()
			s.Close()
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.verify) {
				t.Fatalf("verify: %v; want the store corrupt and %q", err, c.verify)
			}
			rep, err := Salvage(dir, time.Now())
			if err != nil || rep.Healthy || rep.Verify != "ok" || !strings.Contains(strings.Join(rep.Rebuilt, "\n"), c.note) {
				t.Fatalf("salvage: %+v, %v; want %q noted and a store that verifies", rep, err, c.note)
			}
		})
	}
}
