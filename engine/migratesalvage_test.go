package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
	"github.com/questbox/questbox/engine/storetest"
)

// errStopUpgrade stops the upgrade of halfUpgraded between two parts.
var errStopUpgrade = errors.New("the upgrade stopped here by the test")

// halfUpgraded makes a store left between two parts of the 8 -> 9
// upgrade, as a kill or a power cut leaves it: 30 pending nodes whose
// logs (1 to 3 attempts) were in their records at schema 8, the upgrade
// run a node a part and stopped in part moved+1, so that n1..n<moved>
// hold their logs as chains and the rest still hold them inline. It
// returns the closed store's directory and each node's whole log.
func halfUpgraded(t *testing.T, moved int) (string, map[string][]Attempt) {
	t.Helper()
	h := newHarness(t, Options{})
	q := h.quest(func(s *QuestSpec) {
		s.Provider, s.Mode, s.Limits.MaxTries, s.Limits.MaxStalled, s.Limits.MaxAgentRuns = ProviderExternal, ModeSolo, 10, 0, 1000
	})
	var hyps []string
	for i := range 30 {
		hyps = append(hyps, fmt.Sprintf("idea %02d: %s", i, strings.Repeat("long enough to fill pages ", 12)))
	}
	res, err := h.e.Scan(q.ID, hyps)
	if err != nil || len(res.Added) != 30 {
		t.Fatalf("scan: %d added, %v", len(res.Added), err)
	}
	logs := map[string][]Attempt{}
	for i, id := range res.Added {
		for j := range 1 + i%3 {
			if _, err := h.e.Submit(context.Background(), q.ID, id, []byte(fmt.Sprintf("no json from %s, try %d: %s", id, j, strings.Repeat("padding ", 20)))); err != nil {
				t.Fatal(err)
			}
		}
		logs[id] = h.node(id).Attempts
	}
	// And a locked node: the ledger then seals node hashes, so a salvage
	// that lost the schema key restores it as the newest.
	locked, err := h.e.Scan(q.ID, []string{"an idea that dies"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.e.Submit(context.Background(), q.ID, locked.Added[0], []byte(answer("dead", "it misreads every sample, checked twice"))); err != nil {
		t.Fatal(err)
	}
	h.close()
	dir := copyStore(t, h.dir)
	toSchema8(t, dir, logs)

	budget := migrateBudget
	migrateBudget = 1 // a node a part
	defer func() { migrateBudget = budget }()
	sch, parts := schema(), 0
	sch.Migrations[8] = func(tx *store.Tx) error {
		if parts++; parts > moved {
			return errStopUpgrade // this part rolls back; the ones before it committed
		}
		return migrateAttempts(tx)
	}
	if db, err := store.Open(dir, StoreOptions{}, sch); !errors.Is(err, errStopUpgrade) {
		if err == nil {
			db.Close()
		}
		t.Fatalf("the upgrade to stop in part %d: %v", moved+1, err)
	}
	return dir, logs
}

// upgradeState reads the schema and the unfinished upgrade's keys of the
// closed store in dir.
func upgradeState(t *testing.T, dir string) (schemaKey, migrating, migratedTo []byte) {
	t.Helper()
	db, err := store.OpenBare(filepath.Join(dir, StoreFile), true, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_ = db.View(func(tx *store.Tx) error {
		m := tx.Meta()
		schemaKey, migrating, migratedTo = bytes.Clone(m.Get(kSchema)), bytes.Clone(m.Get(store.KeyMigrating)), bytes.Clone(m.Get(kMigrated))
		return nil
	})
	return
}

// checkUpgraded checks the store in dir finished the upgrade and verifies,
// and that every node of logs but those in lost is there; whole names the
// nodes whose log must be whole, and every other node's log must end as
// its whole log does (a chain that broke keeps the attempts after the
// break).
func checkUpgraded(t *testing.T, dir string, logs map[string][]Attempt, lost map[string]bool, whole func(id string) bool) {
	t.Helper()
	if sk, mg, mt := upgradeState(t, dir); !bytes.Equal(sk, u64(SchemaVersion)) || mg != nil || mt != nil {
		t.Errorf("after salvage: schema %x, migrating %x, migrated to %x; want %d and neither key", sk, mg, mt, SchemaVersion)
	}
	s := mustOpenStore(t, dir)
	defer s.Close()
	if rep, err := s.Verify(); err != nil || rep.Schema != SchemaVersion {
		t.Fatalf("verify after salvage: %+v, %v", rep, err)
	}
	_ = s.view(func(tx *store.Tx) error {
		for id, want := range logs {
			n, err := records.ReadNodeLog(tx, id)
			switch {
			case lost[id]:
				if err == nil {
					t.Errorf("%s: its page was damaged, yet it came back", id)
				}
			case err != nil:
				t.Errorf("%s after salvage: %v; want it (its page was sound)", id, err)
			case whole(id) && jsonOf(t, n.Attempts) != jsonOf(t, want):
				t.Errorf("%s after salvage: %s; want its whole log %s", id, outcomes(n.Attempts), outcomes(want))
			case len(n.Attempts) == 0 || len(n.Attempts) > len(want) || jsonOf(t, n.Attempts) != jsonOf(t, want[len(want)-len(n.Attempts):]):
				t.Errorf("%s after salvage: %s; want the end of %s", id, outcomes(n.Attempts), outcomes(want))
			}
		}
		// No node holds its log in its record any more: the upgrade
		// ran over every node salvage brought back.
		return tx.Nodes().ForEach(func(k, v []byte) error {
			if bytes.Contains(v, []byte(`"attempts":`)) {
				t.Errorf("node %s still holds its log in its record after salvage", domain.NodeID(seqOf(k)))
			}
			return nil
		})
	})
}

// A store left between two parts of the 8 -> 9 upgrade, intact or
// damaged there: verify (read-only) says the upgrade was interrupted and
// what finishes it; salvage loses no node and no attempt it can read, and
// its store has finished the upgrade and verifies.
func TestSalvageBetweenUpgradeParts(t *testing.T) {
	const moved = 10
	base, logs := halfUpgraded(t, moved)
	if sk, mg, mt := upgradeState(t, base); !bytes.Equal(sk, u64(9)) || !bytes.Equal(mg, u64(8)) || mt == nil {
		t.Fatalf("between parts: schema %x, migrating %x, migrated to %x; want 9, 8, a node", sk, mg, mt)
	}
	isMoved := func(id string) bool { return records.NodeOrder(id) <= moved }
	all := func(string) bool { return true }
	nodeLeaf := func(f *storetest.File, id string) (uint64, map[string]bool, error) {
		k, _ := records.NodeKey(id)
		leaf, err := f.LeafOf(k, "nodes")
		if err != nil {
			return 0, nil, err
		}
		keys, err := f.Keys(leaf)
		lost := map[string]bool{}
		for _, k := range keys {
			lost[domain.NodeID(seqOf(k))] = true
		}
		return leaf, lost, err
	}

	t.Run("verify", func(t *testing.T) {
		dir := copyStore(t, base)
		ro, err := OpenStore(dir, StoreOptions{ReadOnly: true, Check: true})
		if err == nil {
			ro.Close()
		}
		if !errors.Is(err, ErrReadOnly) || !strings.Contains(err.Error(), fmt.Sprintf("its upgrade from v8 to v%d was interrupted", SchemaVersion)) || !strings.Contains(err.Error(), "questbox run") {
			t.Errorf("read-only open between parts: %v; want ErrReadOnly saying the upgrade was interrupted and what finishes it", err)
		}
	})
	t.Run("intact", func(t *testing.T) {
		dir := copyStore(t, base)
		rep, err := Salvage(dir, time.Now())
		if err != nil || !rep.Healthy || rep.Verify != "ok" {
			t.Fatalf("salvage: %+v, %v; want healthy, verify ok", rep, err)
		}
		if notes := strings.Join(rep.Notes, "\n"); !strings.Contains(notes, fmt.Sprintf("upgrade from v8 to v%d, interrupted", SchemaVersion)) || !strings.Contains(notes, "was finished") {
			t.Errorf("salvage notes %q; want them to say the interrupted upgrade was finished", rep.Notes)
		}
		checkUpgraded(t, dir, logs, nil, all)
	})
	for _, c := range []struct {
		name string
		node string // a node on the damaged leaf
	}{
		{"a node page of the moved part damaged", "n3"},
		{"a node page of the part not yet moved damaged", "n25"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := copyStore(t, base)
			var lost map[string]bool
			damageFile(t, dir, func(f *storetest.File) error {
				leaf, l, err := nodeLeaf(f, c.node)
				lost = l
				return errors.Join(err, f.Garbage(leaf))
			})
			if len(lost) == 0 || len(lost) > 20 {
				t.Fatalf("the damaged leaf holds %d nodes", len(lost))
			}
			rep, err := Salvage(dir, time.Now())
			if err != nil || rep.Healthy || rep.Verify != "ok" {
				t.Fatalf("salvage: %+v, %v; want salvaged, verify ok", rep, err)
			}
			checkUpgraded(t, dir, logs, lost, all)
		})
	}
	t.Run("an attempts page damaged", func(t *testing.T) {
		dir := copyStore(t, base)
		damageFile(t, dir, func(f *storetest.File) error {
			root, err := f.BucketRoot("attempts")
			if err != nil {
				return err
			}
			if !f.IsBranch(root) {
				return fmt.Errorf("the attempts bucket's root page %d is its one leaf: damage one of several", root)
			}
			leaf, err := f.LeafOf(u64(1), "attempts")
			return errors.Join(err, f.Garbage(leaf))
		})
		rep, err := Salvage(dir, time.Now())
		if err != nil || rep.Healthy || rep.Verify != "ok" {
			t.Fatalf("salvage: %+v, %v; want salvaged, verify ok", rep, err)
		}
		// The nodes not yet moved held their logs in their records.
		checkUpgraded(t, dir, logs, nil, func(id string) bool { return !isMoved(id) })
	})
	t.Run("a node record rotten in the part not yet moved", func(t *testing.T) {
		dir := copyStore(t, base)
		k, _ := records.NodeKey("n20")
		damageFile(t, dir, func(f *storetest.File) error {
			return f.Rewrite(k, []byte(`"outcome":`), []byte(`"outcome"!`), "nodes")
		})
		// The start names the damage and the salvage command, as for any
		// record that does not decode.
		if s, err := OpenStore(dir, StoreOptions{Check: true}); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "questbox salvage") {
			if err == nil {
				s.Close()
			}
			t.Fatalf("open: %v; want ErrCorrupt naming salvage", err)
		}
		rep, err := Salvage(dir, time.Now())
		if err != nil || rep.Healthy || rep.Verify != "ok" {
			t.Fatalf("salvage: %+v, %v; want salvaged, verify ok", rep, err)
		}
		checkUpgraded(t, dir, logs, map[string]bool{"n20": true}, all)
	})
	t.Run("the root page lost", func(t *testing.T) {
		dir := copyStore(t, base)
		damageFile(t, dir, func(f *storetest.File) error { return f.Garbage(f.Root()) })
		rep, err := Salvage(dir, time.Now())
		if err != nil || rep.Healthy || rep.Verify != "ok" {
			t.Fatalf("salvage: %+v, %v; want salvaged, verify ok", rep, err)
		}
		if rebuilt := strings.Join(rep.Rebuilt, "\n"); !strings.Contains(rebuilt, fmt.Sprintf("the schema version was lost: set to v%d", SchemaVersion)) || !strings.Contains(rebuilt, "the upgrade runs again") {
			t.Errorf("rebuilt %q; want the schema restored as v%d and the upgrade run again", rep.Rebuilt, SchemaVersion)
		}
		checkUpgraded(t, dir, logs, nil, all)
	})
}
