package engine

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// storeMappedKiB is the resident size of this process's mappings of the
// store's file, from /proc/self/smaps.
func storeMappedKiB(t *testing.T, s *Store) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var kib int64
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if fields := strings.Fields(l); len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			in = len(fields) == 6 && fields[5] == s.Path()
			continue
		}
		if v, ok := strings.CutPrefix(l, "Rss:"); in && ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("smaps: %q: %v", l, err)
			}
			kib += n
		}
	}
	if err := sc.Err(); err != nil {
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
	value := func(i int) []byte { return bytes.Repeat(fmt.Appendf(nil, "bulk %05d;", i), 300) }
	err := s.update(func(tx *bolt.Tx) error {
		for i := range 2000 { // ~6 MB of pages
			if err := tx.Bucket(bMeta).Put(fmt.Appendf(nil, "bulk-%05d", i), value(i)); err != nil {
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
		err := s.view(func(tx *bolt.Tx) error {
			for i := range 2000 {
				if got := tx.Bucket(bMeta).Get(fmt.Appendf(nil, "bulk-%05d", i)); !bytes.Equal(got, value(i)) {
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
		{"group commit", func() error { return s.batch(put("k", "group"), nil) }},
		{"update", func() error { return s.update(put("k", "update")) }},
	} {
		readAll()
		read := storeMappedKiB(t, s)
		if read < 4096 {
			t.Fatalf("%s: after reading every value, %d KiB of the store mapped; want at least 4 MiB (is the map read at all?)", c.name, read)
		}
		if err := c.write(); err != nil {
			t.Fatal(err)
		}
		if got := storeMappedKiB(t, s); got > read/10 {
			t.Errorf("%s: after the commit, %d KiB of the store mapped (%d before); want at most a tenth", c.name, got, read)
		}
	}
	readAll()
}
