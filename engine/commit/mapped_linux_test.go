package commit

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/questbox/questbox/engine/store"
	"github.com/questbox/questbox/engine/storetest"
)

// storeMappedKiB is the resident size of this process's mappings of the
// store's file, from /proc/self/smaps.
func storeMappedKiB(t *testing.T, s *Store) int64 {
	t.Helper()
	kib, err := storetest.MappedKiB(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	return kib
}

// TestCommitsReleaseTheMappedStore: the pages reads mapped leave the
// daemon's resident memory at the next commit, a group commit's or a
// lone update's, and read back the same after it.
func TestCommitsReleaseTheMappedStore(t *testing.T) {
	s := mustOpenStore(t, "")
	t.Cleanup(func() { s.Close() })
	// No release while the test reads; a moment after each commit under
	// test (the wait for quiet has its own test).
	s.ReleaseGap = time.Hour
	value := func(i int) []byte { return bytes.Repeat(fmt.Appendf(nil, "bulk %05d;", i), 300) }
	err := s.Update(func(tx *store.Tx) error {
		for i := range 2000 { // ~6 MB of pages
			if err := tx.Meta().Put(fmt.Appendf(nil, "bulk-%05d", i), value(i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	readAll := func() {
		t.Helper()
		n := 0
		err := s.View(func(tx *store.Tx) error {
			for i := range 2000 {
				if got := tx.Meta().Get(fmt.Appendf(nil, "bulk-%05d", i)); !bytes.Equal(got, value(i)) {
					return fmt.Errorf("bulk-%05d: read %.30q…, want %.30q…", i, got, value(i))
				}
				n++
			}
			return nil
		})
		if err != nil || n != 2000 {
			t.Fatalf("read %d values, %v; want 2000", n, err)
		}
	}
	for _, c := range []struct {
		name  string
		write func() error
	}{
		{"group commit", func() error { return s.Batch(put("k", "group"), nil) }},
		{"update", func() error { return s.Update(put("k", "update")) }},
	} {
		readAll()
		read := storeMappedKiB(t, s)
		if read < 4096 {
			t.Fatalf("%s: after reading every value, %d KiB of the store mapped; want at least 4 MiB (is the map read at all?)", c.name, read)
		}
		s.ReleaseGap = time.Millisecond
		if err := c.write(); err != nil {
			t.Fatal(err)
		}
		waitMapped(t, s, c.name+": the release after the commit", func(kib int64) bool { return kib <= read/10 })
		s.ReleaseGap = time.Hour
	}
	readAll()
}

// waitMapped waits until the store's mapped size satisfies ok: the release
// runs on a timer after the last commit. A release that never comes fails
// the test (its deadline), never passes it.
func waitMapped(t *testing.T, s *Store, what string, ok func(kib int64) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		kib := storeMappedKiB(t, s)
		if ok(kib) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still %d KiB of the store mapped after 30 s", what, kib)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestReleaseWaitsForQuiet: commits that keep coming push the release
// back (each release costs the reads after it a fault per page), so a
// busy store stays mapped; once no commit came for the gap, it is
// released.
func TestReleaseWaitsForQuiet(t *testing.T) {
	s := mustOpenStore(t, "")
	t.Cleanup(func() { s.Close() })
	s.ReleaseGap = time.Hour
	writeBulk(t, s)
	read := readAllMapped(t, s)
	s.releaseMu.Lock()
	s.released = time.Now().Add(time.Hour) // not yet due while busy (TestReleaseWhileBusy)
	s.releaseMu.Unlock()
	for i := range 3 {
		if err := s.Update(put("k", fmt.Sprint("busy ", i))); err != nil {
			t.Fatal(err)
		}
	}
	if got := storeMappedKiB(t, s); got < read/2 {
		t.Errorf("commits within the gap released the map: %d KiB mapped, %d before", got, read)
	}
	s.releaseMu.Lock()
	s.release.Reset(time.Millisecond) // the gap has passed with no commit
	s.releaseMu.Unlock()
	waitMapped(t, s, "the release once quiet", func(kib int64) bool { return kib <= read/10 })
}

// TestReleaseWhileBusy: commits that keep coming push the quiet release
// back, but once every releaseBusy a commit releases the map itself, so a
// busy cycle does not hold every page it read until the box goes quiet.
func TestReleaseWhileBusy(t *testing.T) {
	s := mustOpenStore(t, "")
	t.Cleanup(func() { s.Close() })
	s.ReleaseGap = time.Hour // only the busy release under test
	writeBulk(t, s)
	due := func(at time.Time) {
		s.releaseMu.Lock()
		s.released = at
		s.releaseMu.Unlock()
	}
	for i, c := range []struct {
		name     string
		released time.Time // the last busy release
		kept     bool      // the commit leaves the map as it was
	}{
		{"a commit less than releaseBusy after the last release", time.Now().Add(time.Hour), true},
		{"a commit releaseBusy after the last release", time.Now().Add(-releaseBusy), false},
	} {
		read := readAllMapped(t, s)
		due(c.released)
		if err := s.Batch(put("k", fmt.Sprint("busy ", i)), nil); err != nil {
			t.Fatal(err)
		}
		// The leader releases before it returns: no wait here.
		got := storeMappedKiB(t, s)
		if c.kept && got < read/2 {
			t.Errorf("%s: %d KiB mapped after it, %d before; want the map kept", c.name, got, read)
		}
		if !c.kept && got > read/10 {
			t.Errorf("%s: %d KiB mapped after it, %d before; want it released", c.name, got, read)
		}
	}
}

// writeBulk fills the store with ~6 MB of values.
func writeBulk(t *testing.T, s *Store) {
	t.Helper()
	err := s.Update(func(tx *store.Tx) error {
		for i := range 2000 {
			if err := tx.Meta().Put(fmt.Appendf(nil, "bulk-%05d", i), bytes.Repeat([]byte("x"), 3000)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// readAllMapped reads every value of the store and returns how much of it
// is mapped then: at least the 4 MiB writeBulk wrote.
func readAllMapped(t *testing.T, s *Store) int64 {
	t.Helper()
	if err := s.View(func(tx *store.Tx) error {
		return tx.Meta().ForEach(func(k, v []byte) error { return nil })
	}); err != nil {
		t.Fatal(err)
	}
	read := storeMappedKiB(t, s)
	if read < 4096 {
		t.Fatalf("after reading every value, %d KiB of the store mapped; want at least 4 MiB", read)
	}
	return read
}
