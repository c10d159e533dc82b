// Package storetest damages store files the way a failing SD card, a power
// cut or a hand edit would, for tests of the engine's store check, verify
// and salvage. It reads bbolt's file format with engine/internal/boltfile
// and knows nothing of the engine's buckets beyond their names. It also
// fills records for the codecs' round-trip tests (FillEvery, fill.go), which
// the engine's tests and the records layer's share.
package storetest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	"github.com/questbox/questbox/engine/internal/boltfile"
)

// File is a store file and its current meta page.
type File struct {
	path string
	fd   *os.File
	bf   *boltfile.File
	meta boltfile.Meta
	// MetaPage is the meta page (0 or 1) the store is read from.
	MetaPage int
}

// Open opens the store file at path, which must have a valid meta page.
// Close it before the engine opens the file again.
func Open(path string) (*File, error) {
	fd, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	fi, err := fd.Stat()
	if err != nil {
		fd.Close()
		return nil, err
	}
	bf, err := boltfile.Open(fd, fi.Size())
	if err != nil {
		fd.Close()
		return nil, err
	}
	m, i, err := bf.Current()
	if err != nil {
		fd.Close()
		return nil, err
	}
	return &File{path: path, fd: fd, bf: bf, meta: m, MetaPage: i}, nil
}

// Close closes the file.
func (f *File) Close() error { return f.fd.Close() }

// PageSize is the file's page size.
func (f *File) PageSize() int { return f.bf.PageSize }

// HWM is the number of pages the store uses or has freed (its high water
// mark); the file may be longer.
func (f *File) HWM() uint64 { return f.meta.HWM }

// BucketRoot returns the root page of the bucket at path (nested names
// after the top-level one). It is an error for an inline bucket.
func (f *File) BucketRoot(path ...string) (uint64, error) {
	id := f.meta.Root
	for i, name := range path {
		v, err := f.get(id, []byte(name), true)
		if err != nil {
			return 0, fmt.Errorf("bucket %q: %w", path[:i+1], err)
		}
		h, err := boltfile.ParseBucket(v)
		if err != nil {
			return 0, err
		}
		if h.Root == 0 {
			return 0, fmt.Errorf("bucket %q is inline: it has no page of its own", path[:i+1])
		}
		id = h.Root
	}
	return id, nil
}

// get finds key in the tree rooted at id and returns its value.
func (f *File) get(id uint64, key []byte, bucket bool) ([]byte, error) {
	leaf, err := f.leafFor(id, key)
	if err != nil {
		return nil, err
	}
	p, _ := f.bf.ReadPage(leaf)
	elems, _ := p.Elems()
	for _, e := range elems {
		if bytes.Equal(e.Key, key) && e.Bucket == bucket {
			return e.Value, nil
		}
	}
	return nil, errors.New("not found")
}

// leafFor returns the leaf page below id whose range holds key.
func (f *File) leafFor(id uint64, key []byte) (uint64, error) {
	return f.walkTo(id, key, nil)
}

// walkTo descends from id to the leaf whose range holds key, calling
// visit with every page on the way (the leaf included).
func (f *File) walkTo(id uint64, key []byte, visit func(*boltfile.Page)) (uint64, error) {
	for {
		p, err := f.bf.ReadPage(id)
		if err != nil {
			return 0, err
		}
		if visit != nil {
			visit(p)
		}
		if p.Flags == boltfile.FlagLeaf {
			return id, nil
		}
		elems, err := p.Elems()
		if err != nil {
			return 0, err
		}
		next := elems[0].Child
		for _, e := range elems {
			if bytes.Compare(e.Key, key) <= 0 {
				next = e.Child
			}
		}
		id = next
	}
}

// LeafOf returns the leaf page of the bucket at path that holds key.
func (f *File) LeafOf(key []byte, path ...string) (uint64, error) {
	root, err := f.BucketRoot(path...)
	if err != nil {
		return 0, err
	}
	return f.leafFor(root, key)
}

// Pages returns every page a reader passes through to reach key in the
// bucket at path, from the root bucket's page down to the key's leaf,
// overflow pages included.
func (f *File) Pages(key []byte, path ...string) ([]uint64, error) {
	var ids []uint64
	visit := func(p *boltfile.Page) {
		for i := uint64(0); i <= uint64(p.Overflow); i++ {
			ids = append(ids, p.ID+i)
		}
	}
	id := f.meta.Root
	for _, name := range path {
		leaf, err := f.walkTo(id, []byte(name), visit)
		if err != nil {
			return nil, err
		}
		p, _ := f.bf.ReadPage(leaf)
		elems, _ := p.Elems()
		id = 0
		for _, e := range elems {
			if e.Bucket && string(e.Key) == name {
				h, err := boltfile.ParseBucket(e.Value)
				if err != nil {
					return nil, err
				}
				id = h.Root
			}
		}
		if id == 0 {
			return ids, nil // inline or missing: the parent's leaf holds it
		}
	}
	_, err := f.walkTo(id, key, visit)
	return ids, err
}

// Keys returns the keys of a leaf page.
func (f *File) Keys(page uint64) ([][]byte, error) {
	p, err := f.bf.ReadPage(page)
	if err != nil {
		return nil, err
	}
	if p.Flags != boltfile.FlagLeaf {
		return nil, fmt.Errorf("page %d is a %s page", page, p.Type())
	}
	elems, err := p.Elems()
	var keys [][]byte
	for _, e := range elems {
		keys = append(keys, bytes.Clone(e.Key))
	}
	return keys, err
}

// IsBranch reports whether page is a branch page.
func (f *File) IsBranch(page uint64) bool {
	p, err := f.bf.ReadPage(page)
	return err == nil && p.Flags == boltfile.FlagBranch
}

// Garbage overwrites page with a garbage pattern.
func (f *File) Garbage(page uint64) error {
	_, err := f.fd.WriteAt(bytes.Repeat([]byte("\xde\xad\xbe\xef"), f.bf.PageSize/4), int64(page)*int64(f.bf.PageSize))
	return err
}

// GarbageMeta overwrites meta page i (0 or 1) with garbage.
func (f *File) GarbageMeta(i int) error { return f.Garbage(uint64(i)) }

// ZeroFreelistCount sets the count of the freelist page to 0, as a torn
// write of its header would: the data stay intact, every free page leaks.
func (f *File) ZeroFreelistCount() error {
	var zero [2]byte
	_, err := f.fd.WriteAt(zero[:], int64(f.meta.Freelist)*int64(f.bf.PageSize)+10)
	return err
}

// Rewrite replaces, in place, the bytes old with new (of the same length)
// in the value stored under key in the bucket at path, as a hand edit of
// the file would.
func (f *File) Rewrite(key, old, new []byte, path ...string) error {
	if len(old) != len(new) {
		return errors.New("storetest: Rewrite keeps the length; use bbolt for other edits")
	}
	leaf, err := f.LeafOf(key, path...)
	if err != nil {
		return err
	}
	p, err := f.bf.ReadPage(leaf)
	if err != nil {
		return err
	}
	elems, err := p.Elems()
	if err != nil {
		return err
	}
	for _, e := range elems {
		if !bytes.Equal(e.Key, key) {
			continue
		}
		i := bytes.Index(e.Value, old)
		if i < 0 {
			return fmt.Errorf("storetest: %q is not in the value", old)
		}
		at := bytes.Index(p.Buf, append(bytes.Clone(e.Key), e.Value...))
		off := int64(leaf)*int64(f.bf.PageSize) + int64(at+len(e.Key)+i)
		_, err := f.fd.WriteAt(new, off)
		return err
	}
	return fmt.Errorf("storetest: key %x not found on page %d", key, leaf)
}

// Seq is the 8-byte big-endian key of sequence n, as the engine keys its
// nodes, events and ledger records.
func Seq(n uint64) []byte { return binary.BigEndian.AppendUint64(nil, n) }

// Root is the page of the root bucket (the top-level bucket headers) of
// the current meta page.
func (f *File) Root() uint64 { return f.meta.Root }

// CopyPage writes page of src (a whole store file's bytes) over the same
// page of the file: what a card that lost the write of that page leaves
// (zeros where src is too short).
func (f *File) CopyPage(page uint64, src []byte) error {
	buf := make([]byte, f.bf.PageSize)
	if off := int(page) * f.bf.PageSize; off < len(src) {
		copy(buf, src[off:])
	}
	_, err := f.fd.WriteAt(buf, int64(page)*int64(f.bf.PageSize))
	return err
}
