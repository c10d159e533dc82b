package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
	"github.com/questbox/questbox/engine/storetest"
)

// Verify runs in a loop while writers commit without pause: it must never
// report a healthy store as damaged, nor crash (run with -race).
func TestVerifyWhileWritersCommit(t *testing.T) {
	h := newHarness(t, Options{})
	// The writer runs as long as the verifies do: no budget may stop it.
	q := h.quest(func(s *QuestSpec) {
		s.Provider = ProviderExternal
		s.Mode = ModeSolo
		s.Limits.MaxStalled = 0
		s.Limits.MaxAgentRuns = 1 << 30
	})
	var (
		commits atomic.Int64
		stop    = make(chan struct{})
		wg      sync.WaitGroup
		werr    = make(chan error, 2)
	)
	write := func(fn func(i int) error) {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := fn(i); err != nil {
					werr <- err
					return
				}
				commits.Add(1)
			}
		})
	}
	// Nodes are created and locked (pages split, freed and reused)...
	write(func(i int) error {
		res, err := h.e.Scan(q.ID, []string{fmt.Sprintf("hypothesis %d %s", i, strings.Repeat("padding ", 40))})
		if err != nil {
			return err
		}
		_, err = h.e.Submit(context.Background(), q.ID, res.Added[0], []byte(answer("dead", fmt.Sprintf("dead end number %d, checked", i))))
		return err
	})
	// ...while the event outbox grows.
	write(func(i int) error {
		return h.e.RecordDeviceEvent(DeviceEvent{What: DevicePress, Result: strings.Repeat("x", i%500)})
	})

	// On a loaded machine the writers may not have started yet when 40
	// quick verifies are done: go on (bounded) until one overlapped.
	overlapped := 0
	for i := 0; i < 40 || (overlapped == 0 && i < 4000); i++ {
		before := commits.Load()
		rep, err := h.e.Verify()
		if err != nil {
			close(stop)
			wg.Wait()
			t.Fatalf("verify %d under load: %v (problems: %q)", i, err, rep.Problems)
		}
		if commits.Load() > before {
			overlapped++
		}
	}
	close(stop)
	wg.Wait()
	select {
	case err := <-werr:
		t.Fatalf("writer: %v", err)
	default:
	}
	if overlapped == 0 {
		t.Fatal("no verify overlapped a commit: the test proved nothing")
	}
	t.Logf("%d commits; %d verifies overlapped commits", commits.Load(), overlapped)
}

// downgrade rewrites a schema-2 store as schema 1 wrote it: no node hashes
// in the ledger.
func downgrade(t *testing.T, dir string) {
	t.Helper()
	db, err := store.OpenBare(filepath.Join(dir, StoreFile), false, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *store.Tx) error {
		b, prev := tx.Ledger(), ""
		var keys [][]byte
		b.ForEach(func(k, _ []byte) error { keys = append(keys, k); return nil })
		for _, k := range keys {
			var r LedgerRecord
			if _, err := getJSON(b, k, &r); err != nil {
				return err
			}
			r.NodeHash, r.Prev = "", prev
			r.Hash = r.Digest()
			prev = r.Hash
			if err := putJSON(b, k, r); err != nil {
				return err
			}
		}
		if err := tx.Meta().Put(kLedgerHead, []byte(prev)); err != nil {
			return err
		}
		if err := tx.Meta().Delete(store.KeyLedgerSeal); err != nil {
			return err
		}
		return tx.Meta().Put(kSchema, u64(1))
	})
	if err != nil {
		t.Fatal(err)
	}
	// A box of schema 1 had no device key either: the first open that
	// signs makes it, and signs the upgraded head.
	if err := os.Remove(filepath.Join(dir, DeviceKeyFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
}

// A schema-1 store: read-only it is read as it is; the first writing open
// seals its locked nodes, after which a rewritten node is found.
func TestMigrationSealsLockedNodes(t *testing.T) {
	base := buildStore(t)
	downgrade(t, base)

	dir := copyStore(t, base)
	ro, err := OpenStore(dir, StoreOptions{ReadOnly: true, Check: true})
	if err != nil {
		t.Fatalf("read-only open of schema 1: %v", err)
	}
	rep, err := ro.Verify()
	ro.Close()
	if err != nil || rep.Schema != 1 || !strings.Contains(strings.Join(rep.Notes, "\n"), "schema v1") {
		t.Fatalf("read-only verify of schema 1: %+v, %v; want ok, noting schema v1", rep, err)
	}

	s, err := OpenStore(dir, StoreOptions{Check: true})
	if err != nil {
		t.Fatal(err)
	}
	rep, err = s.Verify()
	if err != nil || rep.Schema != SchemaVersion || rep.Locked != 40 {
		t.Fatalf("verify after the upgrade: %+v, %v; want ok with 40 locked nodes", rep, err)
	}
	seq, n := lockedNode(t, nodeRecords2(t, s))
	s.Close()
	damageFile(t, dir, func(f *storetest.File) error {
		return f.Rewrite(storetest.Seq(seq), []byte("dead end"), []byte("dead End"), "nodes")
	})
	s, err = OpenStore(dir, StoreOptions{Check: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Verify(); !errors.Is(err, ErrLedgerBroken) || !strings.Contains(err.Error(), "locked node "+n.ID+" was rewritten") {
		t.Errorf("a node rewritten after the upgrade: %v; want ErrLedgerBroken naming %s", err, n.ID)
	}
}

// A schema-1 ledger that is already broken is not sealed: the upgrade
// must not launder the break.
func TestMigrationDoesNotSealABrokenLedger(t *testing.T) {
	dir := buildStore(t)
	downgrade(t, dir)
	db, err := store.OpenBare(filepath.Join(dir, StoreFile), false, 0)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *store.Tx) error {
		var r LedgerRecord
		getJSON(tx.Ledger(), u64(3), &r)
		r.Outcome = "FAIL" // rewritten without re-hashing
		raw, _ := json.Marshal(r)
		return tx.Ledger().Put(u64(3), raw)
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	s, err := OpenStore(dir, StoreOptions{Check: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rep, err := s.Verify()
	if !errors.Is(err, ErrLedgerBroken) || !strings.Contains(err.Error(), "ledger record 3 ") || !strings.Contains(err.Error(), "carries no hash of the node") {
		t.Errorf("broken schema-1 ledger after the upgrade: %v; want record 3 named and unsealed nodes", err)
	}
	if len(rep.Problems) < 2 {
		t.Errorf("verify listed %d problems, want every one (record 3 and each unsealed node)", len(rep.Problems))
	}
}

func nodeRecords2(t *testing.T, s *Store) map[uint64][]byte {
	t.Helper()
	out := map[uint64][]byte{}
	err := s.view(func(tx *store.Tx) error {
		return tx.Nodes().ForEach(func(k, v []byte) error {
			out[seqOf(k)] = append([]byte(nil), v...)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Ledger records lost to a damaged page are recorded by salvage: the
// result verifies and says what was lost; a record removed by hand, with
// no such record, is a broken link.
func TestSalvageRecordsLostLedgerRecords(t *testing.T) {
	base := buildStore(t)
	dir := copyStore(t, base)
	damageFile(t, dir, func(f *storetest.File) error {
		leaf, err := f.LeafOf(storetest.Seq(10), "ledger")
		if err != nil {
			return err
		}
		return f.Garbage(leaf)
	})
	rep, err := Salvage(dir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verify != "ok" || !strings.Contains(strings.Join(rep.Rebuilt, "\n"), "ledger records") {
		t.Fatalf("salvage of a ledger page: verify %q, rebuilt %q", rep.Verify, rep.Rebuilt)
	}
	s, err := OpenStore(dir, StoreOptions{Check: true})
	if err != nil {
		t.Fatal(err)
	}
	vrep, err := s.Verify()
	s.Close()
	if err != nil || !strings.Contains(strings.Join(vrep.Notes, "\n"), "were lost") {
		t.Errorf("verify after salvage: %+v, %v; want ok, noting the lost records", vrep, err)
	}

	dir = copyStore(t, base)
	db, err := store.OpenBare(filepath.Join(dir, StoreFile), false, 0)
	if err != nil {
		t.Fatal(err)
	}
	db.Update(func(tx *store.Tx) error { return tx.Ledger().Delete(u64(10)) })
	db.Close()
	s, err = OpenStore(dir, StoreOptions{Check: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Verify(); !errors.Is(err, ErrLedgerBroken) || !strings.Contains(err.Error(), "ledger record 11: link to previous record broken") {
		t.Errorf("a ledger record removed by hand: %v, want the broken link at 11", err)
	}
}

// A torn write can bring back the ledger whole from an older commit (its
// pages, its sequence and its head) beside a nodes page from a newer one:
// a node locked in the newer commit then has no locking record, and the
// ledger shows no gap. Salvage must still name that node unproven, so that
// the salvaged store verifies and says what it can no longer prove
// (TestPowerLossCopies found it: salvage exited 0 and verify refused).
func TestSalvageNamesALockedNodeWhoseLedgerCameBackOlder(t *testing.T) {
	dir := copyStore(t, buildStore(t))
	var locked string
	err := editByHand(t, dir, func(tx *store.Tx) error {
		var err error
		locked, err = rollLedgerBack(tx)
		return err
	})
	if err != nil || locked == "" {
		t.Fatalf("rolling the ledger back: %v (locked node %q)", err, locked)
	}
	s := mustOpenStore(t, dir)
	if _, err := s.Verify(); !errors.Is(err, ErrLedgerBroken) || !strings.Contains(err.Error(), "locked node "+locked) {
		t.Fatalf("before salvage: verify says %v, want the locked node %s without its record", err, locked)
	}
	s.Close()

	rep := salvageEventsDamage(t, dir)
	if rep.Verify != "ok" {
		t.Fatalf("salvage: the salvaged store does not verify: %s\nrebuilt %q", rep.Verify, rep.Rebuilt)
	}
	s = mustOpenStore(t, dir)
	defer s.Close()
	vrep, err := s.Verify()
	if err != nil || !strings.Contains(strings.Join(vrep.Notes, "\n"), locked) {
		t.Errorf("verify after salvage: %+v, %v; want ok, naming %s unproven", vrep, err, locked)
	}
}

// The same roll-back of the ledger, with the locked index also from the
// older commit (what TestPowerLossCopies's torn copies showed): the store's
// own indexes disagree with its records, so verify names the store corrupt
// (listing the ledger's problem too) instead of a broken ledger, which
// would send the owner to a backup for what salvage repairs; salvage then
// rebuilds the index and records the node as unproven.
func TestVerifyCallsMixedCommitsCorrupt(t *testing.T) {
	dir := copyStore(t, buildStore(t))
	var locked string
	err := editByHand(t, dir, func(tx *store.Tx) error {
		var err error
		if locked, err = rollLedgerBack(tx); err != nil {
			return err
		}
		// The node's entry in the locked index, as the older commit had it:
		// not there yet.
		return dropFromLockedIndex(tx, locked)
	})
	if err != nil || locked == "" {
		t.Fatalf("rolling the ledger and the locked index back: %v (locked node %q)", err, locked)
	}
	s := mustOpenStore(t, dir)
	_, err = s.Verify()
	s.Close()
	if !errors.Is(err, ErrCorrupt) || errors.Is(err, ErrLedgerBroken) ||
		!strings.Contains(err.Error(), "locked node "+locked+" is missing from its quest's locked index") ||
		!strings.Contains(err.Error(), "locked node "+locked+" (aborted) has no ledger record") ||
		!strings.Contains(err.Error(), "questbox salvage") {
		t.Fatalf("verify: %v\nwant ErrCorrupt naming the index, the ledger's problem and salvage", err)
	}
	rep, err := Salvage(dir, time.Date(2026, 12, 3, 23, 0, 0, 0, time.UTC))
	if err != nil || rep.Healthy || rep.Verify != "ok" {
		t.Fatalf("salvage: %+v, %v; want the store rebuilt and verified", rep, err)
	}
	s = mustOpenStore(t, dir)
	defer s.Close()
	if vrep, err := s.Verify(); err != nil || !strings.Contains(strings.Join(vrep.Notes, "\n"), locked) {
		t.Errorf("verify after salvage: %+v, %v; want ok, naming %s unproven", vrep, err, locked)
	}
}

// Bit rot inside a locked node's record that leaves it valid JSON (here
// "lock_seq" becomes "lock_sXq") is a rewrite the ledger names; what the
// indexes then say of that node follows from the same change and is not
// index damage: verify says the ledger is broken, never corrupt, with or
// without the node in its locked index (salvage's rebuild leaves a node
// without a lock sequence out of it). TestRandomDamageNeverPanics found a
// salvaged store called corrupt again this way.
func TestVerifyRewrittenLockSeqIsNotIndexDamage(t *testing.T) {
	base := buildStore(t)
	for _, dropIndex := range []bool{false, true} {
		dir := copyStore(t, base)
		var id string
		err := editByHand(t, dir, func(tx *store.Tx) error {
			nb := tx.Nodes()
			c := nb.Cursor()
			for k, v := c.First(); k != nil; k, v = c.Next() {
				if bytes.Contains(v, []byte(`"status":"aborted"`)) && bytes.Contains(v, []byte(`"lock_seq":`)) {
					var n Node
					if err := json.Unmarshal(v, &n); err != nil {
						return err
					}
					id = n.ID
					if err := nb.Put(bytes.Clone(k), bytes.Replace(v, []byte(`"lock_seq":`), []byte(`"lock_sXq":`), 1)); err != nil {
						return err
					}
					break
				}
			}
			if !dropIndex {
				return nil
			}
			return dropFromLockedIndex(tx, id)
		})
		if err != nil || id == "" {
			t.Fatalf("rewriting a locked node: %v (node %q)", err, id)
		}
		s := mustOpenStore(t, dir)
		_, err = s.Verify()
		s.Close()
		if !errors.Is(err, ErrLedgerBroken) || errors.Is(err, ErrCorrupt) ||
			!strings.Contains(err.Error(), "locked node "+id+" was rewritten") || strings.Contains(err.Error(), "index") {
			t.Errorf("dropped from its index %v: verify says %v; want the ledger broken, naming %s rewritten and no index", dropIndex, err, id)
		}
	}
}

// editByHand changes the store file in dir in one bbolt transaction, as
// a hand (or a card) would: no engine, no checks.
func editByHand(t *testing.T, dir string, fn func(tx *store.Tx) error) error {
	t.Helper()
	db, err := store.OpenBare(filepath.Join(dir, StoreFile), false, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	return db.Update(fn)
}

// rollLedgerBack rolls the ledger back to before its last locking record,
// as an older commit had it (its records, sequence and head), and returns
// the node that record locked.
func rollLedgerBack(tx *store.Tx) (string, error) {
	lb := tx.Ledger()
	c := lb.Cursor()
	locked := ""
	for k, v := c.Last(); k != nil && locked == ""; k, v = c.Last() {
		var r LedgerRecord
		if err := json.Unmarshal(v, &r); err != nil {
			return "", err
		}
		if err := lb.Delete(k); err != nil {
			return "", err
		}
		if r.Status.Terminal() {
			locked = r.Node
		}
	}
	k, v := c.Last()
	var prev LedgerRecord
	if err := json.Unmarshal(v, &prev); err != nil {
		return "", err
	}
	if err := lb.SetSequence(seqOf(k)); err != nil {
		return "", err
	}
	return locked, tx.Meta().Put(kLedgerHead, []byte(prev.Hash))
}

// dropFromLockedIndex deletes node id's entries from every locked index.
func dropFromLockedIndex(tx *store.Tx, id string) error {
	return tx.Locked().ForEachBucket(func(q []byte) error {
		b := tx.Locked().Bucket(q)
		var del [][]byte
		_ = b.ForEach(func(k, v []byte) error {
			if string(v) == id {
				del = append(del, bytes.Clone(k))
			}
			return nil
		})
		for _, k := range del {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
}

// Write failures are ErrStoreFailed, with the cause kept; so is a store
// that cannot be opened or created.
func TestStoreFailures(t *testing.T) {
	h := newHarness(t, Options{})
	h.store.h.WriteFault = func() error { return syscall.ENOSPC }
	_, err := h.e.NewQuest(QuestSpec{Name: "n", Direction: "d", Mode: ModeSolo, Roles: []string{RoleScout}, Provider: ProviderExternal, Limits: domain.DefaultLimits()})
	if !errors.Is(err, ErrStoreFailed) || !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("a full disk: %v, want ErrStoreFailed wrapping ENOSPC", err)
	}
	h.store.h.WriteFault = nil

	notDir := filepath.Join(t.TempDir(), "file")
	os.WriteFile(notDir, nil, 0o600)
	if _, err := OpenStore(filepath.Join(notDir, "data"), StoreOptions{}); !errors.Is(err, ErrStoreFailed) {
		t.Errorf("a data directory that cannot be created: %v, want ErrStoreFailed", err)
	}
	dirStore := t.TempDir()
	os.Mkdir(filepath.Join(dirStore, StoreFile), 0o700)
	if _, err := OpenStore(dirStore, StoreOptions{}); !errors.Is(err, ErrStoreFailed) {
		t.Errorf("a store file that cannot be opened: %v, want ErrStoreFailed", err)
	}
	if os.Geteuid() != 0 { // root reads and writes whatever the mode says
		locked := t.TempDir()
		mustOpenStore(t, locked).Close()
		os.Chmod(filepath.Join(locked, StoreFile), 0)
		if _, err := OpenStore(locked, StoreOptions{}); !errors.Is(err, ErrStoreFailed) || !errors.Is(err, os.ErrPermission) {
			t.Errorf("permission denied: %v, want ErrStoreFailed", err)
		}
	}
}

// An empty file is corrupt, never a new store; only a missing file is.
func TestEmptyFileIsNotANewStore(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, StoreFile), nil, 0o600)
	if _, err := OpenStore(dir, StoreOptions{}); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "empty") {
		t.Errorf("empty file: %v, want ErrCorrupt", err)
	}
	if fi, _ := os.Stat(filepath.Join(dir, StoreFile)); fi.Size() != 0 {
		t.Errorf("the open wrote %d bytes into the empty file", fi.Size())
	}
	fresh := t.TempDir()
	s, err := OpenStore(fresh, StoreOptions{Check: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if m, _ := filepath.Glob(filepath.Join(fresh, "*.new-*")); len(m) > 0 {
		t.Errorf("creating a store left %v", m)
	}
}

// A quest whose counts disagree with its nodes (a quest page of another
// commit) is store damage: verify names the quest and the status, and
// salvage counts again from the nodes. A quest with a run in flight, its
// count laid over its record by the running entry, is counted as the
// engine reads it and is not damage.
func TestVerifyComparesQuestCountsWithNodes(t *testing.T) {
	// Its agent answers when the run is cancelled (the harness's close).
	waits := funcProvider(func(ctx context.Context, req agent.Request) (agent.Reply, error) {
		<-ctx.Done()
		return agent.Reply{}, ctx.Err()
	})
	h := newHarness(t, Options{Providers: map[string]Provider{"p": waits}})
	q := h.quest(func(s *QuestSpec) { s.Provider, s.Mode = "p", ModeSolo })
	if rep, err := h.e.Tick(context.Background()); err != nil || len(rep.Dispatched) != 1 {
		t.Fatalf("tick: %v, %v", rep, err)
	}
	if rep, err := h.e.Verify(); err != nil {
		t.Fatalf("a run in flight: verify %v, problems %q", err, rep.Problems)
	}
	h.close()
	st := mustOpenStore(t, h.dir)
	err := st.db.Update(func(tx *store.Tx) error {
		got, ok, err := records.GetQuestRecord(tx.Quests(), q.ID)
		if err != nil || !ok {
			return fmt.Errorf("quest %s: %v %v", q.ID, ok, err)
		}
		got.Counts.Inc(Deferred) // a deferred node the quest does not have
		return records.PutQuest(tx.Quests(), got)
	})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := st.Verify()
	want := fmt.Sprintf("quest %s counts 1 deferred nodes, but 0 of its nodes are deferred", q.ID)
	if !errors.Is(err, ErrCorrupt) || len(rep.Problems) != 1 || rep.Problems[0] != want {
		t.Errorf("verify: %v, problems %q, want %q", err, rep.Problems, want)
	}
	st.Close()
	if _, err := Salvage(h.dir, h.clock.Now()); err != nil {
		t.Fatal(err)
	}
	h.open() // verified clean at cleanup
	if got := h.questNow(q.ID); got.Counts.Get(Deferred) != 0 {
		t.Errorf("after salvage: counts %v", got.Counts)
	}
}
