package store_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sync"
	"testing"

	"github.com/questbox/questbox/engine/store"
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

func putBulk(t testing.TB, s *store.DB, from, n int) {
	t.Helper()
	err := s.Update(func(tx *store.Tx) error {
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
func readBulk(s *store.DB) (int, error) {
	n := 0
	err := s.View(func(tx *store.Tx) error {
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
// back from the page cache). (The engine releases after each commit: engine/commit, Store.releaseMapped.)
func TestReleaseMappedDropsWhatReadsMapped(t *testing.T) {
	s, err := store.Open(t.TempDir(), store.Options{}, mappedSchema)
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
	s, err := store.Open(t.TempDir(), store.Options{}, mappedSchema)
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
	s, err := store.Open(b.TempDir(), store.Options{}, mappedSchema)
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

// mappedSchema is a store of buckets and no domain: these tests only map
// pages.
var mappedSchema = store.Schema{Version: 1, Migrations: []func(*store.Tx) error{store.CreateBuckets}}
