package boltfile

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// build writes a bbolt file with a nested bucket, an inline bucket and a
// value large enough to need overflow pages.
func build(t *testing.T) (string, map[string]int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "x.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{}
	err = db.Update(func(tx *bolt.Tx) error {
		a, _ := tx.CreateBucket([]byte("a"))
		for i := range 500 {
			a.Put(fmt.Appendf(nil, "key%04d", i), bytes.Repeat([]byte{'v'}, 100))
		}
		want["a"] = 500
		n, _ := a.CreateBucket([]byte("nested"))
		n.Put([]byte("k"), []byte("v"))
		want["a/nested"] = 1
		b, _ := tx.CreateBucket([]byte("big"))
		b.Put([]byte("huge"), bytes.Repeat([]byte{'x'}, 3*os.Getpagesize()))
		want["big"] = 1
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	return path, want
}

func open(t *testing.T, path string) *File {
	t.Helper()
	fd, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fd.Close() })
	fi, _ := fd.Stat()
	f, err := Open(fd, fi.Size())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// walk counts the records of every bucket below page id.
func walk(t *testing.T, f *File, path string, id uint64, inline *Page, got map[string]int) {
	p := inline
	if p == nil {
		var err error
		if p, err = f.ReadPage(id); err != nil {
			t.Fatal(err)
		}
	}
	elems, err := p.Elems()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range elems {
		switch {
		case p.Flags == FlagBranch:
			walk(t, f, path, e.Child, nil, got)
		case e.Bucket:
			h, err := ParseBucket(e.Value)
			if err != nil {
				t.Fatal(err)
			}
			name := string(e.Key)
			if path != "" {
				name = path + "/" + name
			}
			walk(t, f, name, h.Root, h.Inline, got)
		default:
			got[path]++
		}
	}
}

func TestReadsWhatBboltWrote(t *testing.T) {
	path, want := build(t)
	f := open(t, path)
	m, i, err := f.Current()
	if err != nil {
		t.Fatal(err)
	}
	if f.PageSize != os.Getpagesize() || f.MetaErr != [2]error{} {
		t.Fatalf("page size %d, meta errors %v; want %d, none", f.PageSize, f.MetaErr, os.Getpagesize())
	}
	if m.Txid%2 != uint64(i) {
		t.Errorf("current meta is page %d with txid %d; bbolt writes txid t to page t%%2", i, m.Txid)
	}
	got := map[string]int{}
	walk(t, f, "", m.Root, nil, got)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("records per bucket: got %v, want %v", got, want)
	}
	fl, err := f.ReadPage(m.Freelist)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := fl.FreeIDs()
	if err != nil || slices.ContainsFunc(ids, func(id uint64) bool { return id < 2 || id >= m.HWM }) {
		t.Errorf("free ids %v, %v: want ids within [2, %d)", ids, err, m.HWM)
	}
}

func TestDamagedMetaPages(t *testing.T) {
	path, _ := build(t)
	ps := int64(os.Getpagesize())
	garbage := bytes.Repeat([]byte("\xde\xad\xbe\xef"), int(ps)/4)
	for _, tc := range []struct {
		name    string
		pages   []int64
		current int // -1: none valid
	}{
		{"meta 0", []int64{0}, 1},
		{"meta 1", []int64{1}, 0},
		{"both", []int64{0, 1}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, _ := os.ReadFile(path)
			for _, p := range tc.pages {
				copy(raw[p*ps:], garbage)
			}
			damaged := filepath.Join(t.TempDir(), "x.db")
			os.WriteFile(damaged, raw, 0o600)
			f := open(t, damaged)
			_, i, err := f.Current()
			if tc.current < 0 {
				if err == nil {
					t.Fatalf("both metas damaged: Current() = page %d, want an error", i)
				}
			} else if err != nil || i != tc.current {
				t.Fatalf("Current() = page %d, %v; want page %d", i, err, tc.current)
			}
			if f.PageSize != int(ps) {
				t.Errorf("page size %d, want %d (found without a valid meta page 0)", f.PageSize, ps)
			}
			if _, err := f.ReadPage(2); err != nil {
				t.Errorf("page 2 unreadable: %v", err)
			}
		})
	}
}

func TestGarbagePagesAreErrors(t *testing.T) {
	buf := bytes.Repeat([]byte{0xff}, 4096)
	p := &Page{ID: 9, Flags: FlagLeaf, Count: 3, Buf: buf}
	// Element 0 points past the end of the page.
	if _, err := p.Elems(); err == nil {
		t.Error("leaf with out-of-bounds elements: no error")
	}
	p.Count = 0xFFFF
	if _, err := p.Elems(); err == nil {
		t.Error("leaf whose elements do not fit: no error")
	}
	fl := &Page{ID: 9, Flags: FlagFreelist, Count: 0xFFFF, Buf: make([]byte, 4096)}
	ord.PutUint64(fl.Buf[HeaderSize:], 1<<62) // a count whose size in bytes overflows
	if _, err := fl.FreeIDs(); err == nil {
		t.Error("freelist with an impossible count: no error")
	}
	if _, err := ParseBucket([]byte{1, 2, 3}); err == nil {
		t.Error("short bucket header: no error")
	}
	if _, err := ParseMeta(buf); err != ErrNotMeta {
		t.Errorf("garbage meta: got %v, want ErrNotMeta", err)
	}
}
