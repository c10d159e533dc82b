package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/questbox/questbox/engine/storetest"
)

// mappedKiB is the resident size of this process's mappings of path, from
// /proc/self/smaps.
func mappedKiB(t testing.TB, path string) int64 {
	t.Helper()
	kib, err := storetest.MappedKiB(path)
	if err != nil {
		t.Fatal(err)
	}
	return kib
}

// bulkValue is the value stored under key i: distinct per key, so a page
// read from the wrong place shows.
func bulkValue(i int) []byte {
	return bytes.Repeat(fmt.Appendf(nil, "value %06d;", i), 250)
}

func putBulk(t testing.TB, s *DB, from, n int) {
	t.Helper()
	err := s.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("bulk"))
		if err != nil {
			return err
		}
		for i := from; i < from+n; i++ {
			if err := b.Put(binary.BigEndian.AppendUint64(nil, uint64(i)), bulkValue(i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// readBulk reads every value and checks it; it returns how many it read.
func readBulk(s *DB) (int, error) {
	n := 0
	err := s.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("bulk"))
		if b == nil {
			return fmt.Errorf("no bulk bucket")
		}
		return b.ForEach(func(k, v []byte) error {
			i := int(binary.BigEndian.Uint64(k))
			if !bytes.Equal(v, bulkValue(i)) {
				return fmt.Errorf("key %d: read %.40q…, want %.40q…", i, v, bulkValue(i))
			}
			n++
			return nil
		})
	})
	return n, err
}

// TestReleaseMappedDropsWhatReadsMapped: reading the store maps its pages
// into the process; ReleaseMapped takes them out of the process's resident
// set, and every value reads back the same afterwards (the pages come
// back from the page cache). (The engine releases after each commit: engine.Store.releaseMapped.)
func TestReleaseMappedDropsWhatReadsMapped(t *testing.T) {
	s, err := Open(t.TempDir(), Options{}, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	putBulk(t, s, 0, 2000) // 2,000 values of 3 KB: ~6 MB of pages
	if n, err := readBulk(s); err != nil || n != 2000 {
		t.Fatalf("read %d values, %v; want 2000", n, err)
	}
	read := mappedKiB(t, s.Path())
	if read < 4096 {
		t.Fatalf("after reading every value, %d KiB of the store mapped; want at least 4 MiB (is the map read at all?)", read)
	}
	if err := s.ReleaseMapped(); err != nil {
		t.Fatal(err)
	}
	if got := mappedKiB(t, s.Path()); got > read/10 {
		t.Errorf("after ReleaseMapped, %d KiB of the store mapped (%d before); want at most a tenth", got, read)
	}
	if n, err := readBulk(s); err != nil || n != 2000 {
		t.Fatalf("after ReleaseMapped: read %d values, %v; want 2000", n, err)
	}
}

// TestReleaseMappedWhileTheFileGrows: releases, reads and commits that
// grow the file (so bbolt maps it anew) run at once; every read sees
// every value it should, intact.
func TestReleaseMappedWhileTheFileGrows(t *testing.T) {
	s, err := Open(t.TempDir(), Options{}, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	putBulk(t, s, 0, 500)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 3)
	// untilStopped runs fn over and over until stop closes or fn fails.
	untilStopped := func(fn func() error) {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := fn(); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for range 2 {
		untilStopped(func() error { _, err := readBulk(s); return err })
	}
	untilStopped(s.ReleaseMapped)
	for i := range 20 { // 20 × 300 values of 3 KB: the file grows past bbolt's first maps
		putBulk(t, s, 500+i*300, 300)
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n, err := readBulk(s); err != nil || n != 6500 {
		t.Fatalf("read %d values, %v; want 6500", n, err)
	}
}

// BenchmarkReleaseMapped: one release of a store whose ~6 MB of pages a
// read mapped just before (the read is outside the timer); reports the
// mapped KiB each release dropped.
func BenchmarkReleaseMapped(b *testing.B) {
	s, err := Open(b.TempDir(), Options{}, testSchema)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	putBulk(b, s, 0, 2000)
	var dropped int64
	for b.Loop() {
		b.StopTimer()
		if _, err := readBulk(s); err != nil {
			b.Fatal(err)
		}
		dropped += mappedKiB(b, s.Path())
		b.StartTimer()
		if err := s.ReleaseMapped(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(dropped)/float64(b.N), "KiB-released/op")
}

// tickRead is a tick as the engine's (KeepMapped around its reads, in a
// write transaction): it reads and checks values [from, to).
func tickRead(t *testing.T, s *DB, from, to int) {
	t.Helper()
	err := s.Update(func(tx *bolt.Tx) error {
		done := s.KeepMapped(tx)
		defer done()
		b := tx.Bucket([]byte("bulk"))
		for i := from; i < to; i++ {
			if v := b.Get(binary.BigEndian.AppendUint64(nil, uint64(i))); !bytes.Equal(v, bulkValue(i)) {
				return fmt.Errorf("key %d: read %.40q…", i, v)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// presentNow is which pages of s's map are mapped now.
func presentNow(t *testing.T, s *DB) (kept []pageRange, kib int64) {
	t.Helper()
	err := s.View(func(tx *bolt.Tx) error {
		data, pages := s.mapped(tx)
		var err error
		kept, err = presentPages(nil, data, pages)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range kept {
		kib += int64(r.hi-r.lo) * int64(pageSize) / 1024
	}
	return kept, kib
}

// TestReleaseMappedKeepsWhatATickRead: the pages a tick (KeepMapped)
// mapped stay mapped through the releases after it, and every other page
// goes; ForgetMapped lets them go too. Read back the same throughout.
func TestReleaseMappedKeepsWhatATickRead(t *testing.T) {
	s, err := Open(t.TempDir(), Options{}, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	putBulk(t, s, 0, 2000) // ~6 MB of pages
	tickRead(t, s, 0, 500) // ~1.5 MB
	_, tick := presentNow(t, s)
	if tick < 1024 {
		t.Fatalf("after a tick read 1.5 MB, %d KiB of the map present; want at least 1 MiB", tick)
	}
	if n, err := readBulk(s); err != nil || n != 2000 {
		t.Fatalf("read %d values, %v; want 2000", n, err)
	}
	read := mappedKiB(t, s.Path())
	if err := s.ReleaseMapped(); err != nil {
		t.Fatal(err)
	}
	present, kib := presentNow(t, s)
	s.keep.mu.Lock()
	kept := slices.Clone(s.keep.ranges)
	s.keep.mu.Unlock()
	if !slices.Equal(present, kept) {
		t.Errorf("after the release, pages %v present; want exactly the tick's, %v", present, kept)
	}
	if kib < tick*9/10 || kib > read/2 {
		t.Errorf("after the release, %d KiB present; want the tick's %d KiB of %d read", kib, tick, read)
	}
	if n, err := readBulk(s); err != nil || n != 2000 {
		t.Fatalf("after the release: read %d values, %v; want 2000", n, err)
	}
	if err := s.ForgetMapped(); err != nil {
		t.Fatal(err)
	}
	if got := mappedKiB(t, s.Path()); got > read/10 {
		t.Errorf("after ForgetMapped, %d KiB of the store mapped (%d before); want at most a tenth", got, read)
	}
}

// TestKeepMappedStaysBounded: ticks that each read other pages do not
// make the kept pages grow past about twice a tick's: once past twice
// what a tick read from nothing, the next tick starts from nothing.
func TestKeepMappedStaysBounded(t *testing.T) {
	s, err := Open(t.TempDir(), Options{}, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	putBulk(t, s, 0, 4000)
	most, fresh := 0, 0
	for i := range 8 {
		tickRead(t, s, i*500, (i+1)*500) // ~1.5 MB each, each other pages
		if s.keep.fresh {
			fresh++
		}
		most = max(most, s.keep.n)
		if err := s.ReleaseMapped(); err != nil {
			t.Fatal(err)
		}
	}
	// A tick of 500 values maps ~370 pages (more with the kernel's
	// neighbours): kept is at most twice a tick's, plus one tick.
	if limit := s.keep.limit; most > limit+limit/2+64 || fresh < 2 {
		t.Errorf("8 ticks of other pages each: at most %d pages kept (limit %d), %d ticks from nothing; want within the limit plus a tick, and more than the first from nothing", most, limit, fresh)
	}
}

// TestKeepMappedWithoutPagemap: where the page table cannot be read,
// nothing is kept and a release releases everything, as before.
func TestKeepMappedWithoutPagemap(t *testing.T) {
	s, err := Open(t.TempDir(), Options{}, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	defer func(p string) { pagemapPath = p }(pagemapPath)
	pagemapPath = "/nonexistent/pagemap"
	putBulk(t, s, 0, 2000)
	tickRead(t, s, 0, 500)
	tickRead(t, s, 0, 2000)
	read := mappedKiB(t, s.Path())
	if err := s.ReleaseMapped(); err != nil {
		t.Fatal(err)
	}
	if got := mappedKiB(t, s.Path()); got > read/10 {
		t.Errorf("after ReleaseMapped without pagemap, %d KiB of the store mapped (%d before); want at most a tenth", got, read)
	}
}

// TestPresentPagesScanAndReadAgree: PAGEMAP_SCAN and the read of
// /proc/self/pagemap find the same pages mapped.
func TestPresentPagesScanAndReadAgree(t *testing.T) {
	s, err := Open(t.TempDir(), Options{}, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	putBulk(t, s, 0, 2000)
	if err := s.ReleaseMapped(); err != nil {
		t.Fatal(err)
	}
	tickRead(t, s, 300, 700)
	tickRead(t, s, 1500, 1600)
	err = s.View(func(tx *bolt.Tx) error {
		data, pages := s.mapped(tx)
		f, err := os.Open(pagemapPath)
		if err != nil {
			return err
		}
		defer f.Close()
		scanned, err := scanPresent(nil, f, data, pages)
		if err != nil {
			t.Skipf("no PAGEMAP_SCAN here (Linux < 6.7?): %v", err)
		}
		read, err := readPresent(nil, f, data, pages)
		if err != nil {
			return err
		}
		if len(read) == 0 || !slices.Equal(scanned, read) {
			t.Errorf("PAGEMAP_SCAN found %v, the read %v; want the same, not none", scanned, read)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
