package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
)

// prunedStore makes a store with quests, nodes and verdicts and then
// many free pages, as the outbox leaves after it is pruned of a burst of
// events (a broker away for days): 12 MiB written and deleted in one
// bucket stand for the burst. It returns the data dir, closed.
func prunedStore(t *testing.T, dir string) string {
	t.Helper()
	h := newHarness(t, Options{})
	if dir != "" {
		h.close()
		h.dir = dir
		h.open()
	}
	h.bulk(5, 20, func(s *QuestSpec) { s.Provider = ProviderExternal })
	err := h.store.db.Update(func(tx *store.Tx) error {
		b, err := tx.CreateBucket([]byte("burst"))
		if err != nil {
			return err
		}
		v := make([]byte, 3000)
		for i := range 4000 {
			if err := b.Put(binary.BigEndian.AppendUint64(nil, uint64(i)), v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.store.db.Update(func(tx *store.Tx) error { return tx.DeleteBucket([]byte("burst")) }); err != nil {
		t.Fatal(err)
	}
	h.close()
	return h.dir
}

// contents is a digest of every bucket, key, value and bucket sequence.
func contents(t *testing.T, s *Store) [32]byte {
	t.Helper()
	h := sha256.New()
	var walk func(path string, b *store.Bucket) error
	walk = func(path string, b *store.Bucket) error {
		h.Write(binary.BigEndian.AppendUint64([]byte(path+"\x00seq"), b.Sequence()))
		return b.ForEach(func(k, v []byte) error {
			if v == nil {
				return walk(path+"/"+string(k), b.Bucket(k))
			}
			h.Write([]byte(path + "\x00"))
			h.Write(binary.BigEndian.AppendUint32(nil, uint32(len(k))))
			h.Write(k)
			h.Write(binary.BigEndian.AppendUint32(nil, uint32(len(v))))
			h.Write(v)
			return nil
		})
	}
	err := s.db.View(func(tx *store.Tx) error {
		return tx.ForEach(func(name []byte, b *store.Bucket) error { return walk(string(name), b) })
	})
	if err != nil {
		t.Fatal(err)
	}
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum
}

func storeSize(t *testing.T, dir string) int64 {
	t.Helper()
	fi, err := os.Stat(filepath.Join(dir, StoreFile))
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestCompactionAtOpen: a daemon's open rewrites a store whose free pages
// are many, and nothing in it changes — every bucket, key, value and
// sequence, the ledger (verify) — while the file shrinks and commits stop
// writing the long free list. A store with few free pages is left alone,
// and a copy a crash left mid-compaction is removed.
func TestCompactionAtOpen(t *testing.T) {
	dir := prunedStore(t, "")
	s, err := OpenStore(dir, StoreOptions{Check: true})
	if err != nil {
		t.Fatal(err)
	}
	free, total, ok := s.db.ShouldCompact()
	want := contents(t, s)
	s.Close()
	if !ok {
		t.Fatalf("%d of %d pages free: the test store should call for a compaction", free, total)
	}
	before := storeSize(t, dir)
	stray := filepath.Join(dir, store.CompactTempPrefix+"123")
	if err := os.WriteFile(stray, []byte("half a copy"), 0o600); err != nil {
		t.Fatal(err)
	}

	s, err = OpenStore(dir, StoreOptions{Check: true, Compact: true})
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(s.Notes(), "; ")
	if !strings.Contains(notes, "compacted:") {
		t.Errorf("notes %q do not say the store was compacted", notes)
	}
	if got := contents(t, s); got != want {
		t.Error("the compacted store's contents differ")
	}
	if rep, err := s.Verify(); err != nil || len(rep.Problems) > 0 {
		t.Errorf("verify after compaction: %v %v", err, rep.Problems)
	}
	if f, _, ok := s.db.ShouldCompact(); ok || f > store.CompactMinFree/4 {
		t.Errorf("%d pages still free after compaction", f)
	}
	after := storeSize(t, dir)
	if after*10 > before*9 {
		t.Errorf("the file went from %d to %d bytes", before, after)
	}
	if _, err := os.Stat(stray); !os.IsNotExist(err) {
		t.Errorf("a stray copy stays after the open: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, store.CompactTempPrefix+"*")); len(left) > 0 {
		t.Errorf("copies left: %v", left)
	}
	// It is a working store: the engine opens it and writes.
	e, err := New(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	spec := e.NewQuestSpec("after", "after compaction")
	spec.Provider = ProviderExternal
	if _, err := e.NewQuest(spec); err != nil {
		t.Fatal(err)
	}
	e.Shutdown(0)
	s.Close()

	// Few free pages now: the next open leaves the file as it is.
	fi1, _ := os.Stat(filepath.Join(dir, StoreFile))
	s, err = OpenStore(dir, StoreOptions{Check: true, Compact: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fi2, _ := os.Stat(filepath.Join(dir, StoreFile))
	if !os.SameFile(fi1, fi2) || strings.Contains(strings.Join(s.Notes(), "; "), "compacted") {
		t.Errorf("a store with few free pages was rewritten: %v", s.Notes())
	}
}

// TestCompactionNeedsRoomForItsCopy: on a card without room for the copy
// and its headroom, the store opens as it was, working, and the note says
// why it was not compacted.
func TestCompactionNeedsRoomForItsCopy(t *testing.T) {
	if os.Getuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("this test mounts a tmpfs and needs root (CI runs as root)")
		}
		t.Skip("needs root to mount a tmpfs")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=40m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount a tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	prunedStore(t, dir)
	fi1, _ := os.Stat(filepath.Join(dir, StoreFile))
	s, err := OpenStore(dir, StoreOptions{Check: true, Compact: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fi2, _ := os.Stat(filepath.Join(dir, StoreFile))
	notes := strings.Join(s.Notes(), "; ")
	if !os.SameFile(fi1, fi2) || !strings.Contains(notes, "it was not compacted: the copy needs") {
		t.Errorf("without room for the copy: same file %v, notes %q", os.SameFile(fi1, fi2), notes)
	}
	e, err := New(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Shutdown(0)
	spec := e.NewQuestSpec("after", "not compacted")
	spec.Provider = ProviderExternal
	if _, err := e.NewQuest(spec); err != nil {
		t.Errorf("the store does not take a write: %v", err)
	}
}

// An upgrade rewrites records all over the file: it leaves few free
// pages (the parts reuse what each frees) but many part-empty ones, which
// bbolt never merges back and no later open's free-page rule would
// compact. The open that ran the upgrade compacts the store, and says so;
// the same store opened again without an upgrade is left as it is.
func TestCompactionAfterAnUpgrade(t *testing.T) {
	h := newHarness(t, Options{})
	h.bulk(4, 1000, func(s *QuestSpec) { s.Provider = ProviderExternal })
	h.close()
	dir := h.dir
	db, err := store.OpenBare(filepath.Join(dir, StoreFile), false, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Schema 8: every node holds a log of 6 attempts (~2 KiB) in its record.
	feedback := strings.Repeat("the answer was not JSON; ", 12)
	err = db.Update(func(tx *store.Tx) error {
		nb := appendOnly(tx.Nodes())
		c := nb.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			n := new(Node)
			if err := records.DecodeNode(v, n); err != nil {
				return err
			}
			for j := range 6 {
				n.Attempts = append(n.Attempts, Attempt{Outcome: "FAIL", Feedback: fmt.Sprintf("try %d: %s", j, feedback), TryUsed: true})
			}
			if err := putJSON(nb, bytes.Clone(k), n); err != nil {
				return err
			}
		}
		return tx.Meta().Put(kSchema, u64(8))
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}

	upgraded := copyStore(t, dir)
	s := mustOpenStore(t, upgraded) // the upgrade, without compaction
	free, total, _ := s.db.ShouldCompact()
	s.Close()
	if free*4 >= total {
		t.Fatalf("after the upgrade %d of %d pages are free; the test wants under a quarter", free, total)
	}
	s, err = OpenStore(upgraded, StoreOptions{Check: true, Compact: true})
	if err != nil {
		t.Fatal(err)
	}
	if notes := strings.Join(s.Notes(), "; "); strings.Contains(notes, "compacted") {
		t.Errorf("an open that upgraded nothing compacted a store with few free pages: %q", notes)
	}
	s.Close()

	s, err = OpenStore(dir, StoreOptions{Check: true, Compact: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if notes := strings.Join(s.Notes(), "; "); !strings.Contains(notes, "compacted after the upgrade:") {
		t.Errorf("notes %q: the open that upgraded the store did not compact it", notes)
	}
	if got, was := storeSize(t, dir), storeSize(t, upgraded); got*10 > was*9 {
		t.Errorf("the upgrade and its compaction left %d bytes; the upgrade alone %d", got, was)
	}
	if rep, err := s.Verify(); err != nil || rep.Schema != SchemaVersion {
		t.Errorf("verify: %+v, %v", rep, err)
	}
}
