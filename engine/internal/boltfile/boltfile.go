// Package boltfile reads the on-disk format of bbolt (go.etcd.io/bbolt
// v1.4, file format version 2) from a file with ordinary reads: no mmap and
// no unsafe, so a damaged page is an error here, never a fault or a panic.
// The engine uses it to check its store before bbolt maps it, and to
// salvage the records of a damaged one; everything else goes through bbolt.
//
// The layout, as bbolt writes it, in the machine's native byte order (the
// file is only portable between machines of the same endianness, as with
// bbolt itself):
//
//	page header (16 bytes): id u64, flags u16, count u16, overflow u32
//	meta page body: magic u32, version u32, page size u32, flags u32,
//	    root bucket {root page u64, sequence u64}, freelist page u64,
//	    high water mark u64, txid u64, checksum u64 (FNV-64a of the 56
//	    bytes before it)
//	branch element (16 bytes): pos u32, ksize u32, child page u64;
//	    the key is at the element's offset + pos
//	leaf element (16 bytes): flags u32 (1: a nested bucket), pos u32,
//	    ksize u32, vsize u32; the key is at the element's offset + pos,
//	    the value right after it
//	bucket value: root page u64, sequence u64, then, when root is 0, the
//	    bucket's only (inline) page
//	freelist page: count page ids (count 0xFFFF: the first id is the count)
//
// A page of id N starts at byte N*pageSize and spans 1+overflow pages.
package boltfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

// Format constants of bbolt's file format version 2.
const (
	Magic      = 0xED0CDAED
	Version    = 2
	HeaderSize = 16
	// NoFreelist is the freelist page id of a store that does not persist
	// its freelist (bbolt's NoFreelistSync).
	NoFreelist = ^uint64(0)

	FlagBranch   = 0x01
	FlagLeaf     = 0x02
	FlagMeta     = 0x04
	FlagFreelist = 0x10

	elemSize     = 16
	bucketHeader = 16
	metaBody     = 64
	bucketFlag   = 0x01
	maxPageSize  = 1 << 16
	minPageSize  = 1 << 10
)

var ord = binary.NativeEndian

// Meta is one of the two meta pages: the root of the store as of one
// transaction.
type Meta struct {
	PageSize uint32
	Flags    uint32
	Root     uint64 // page of the root bucket
	Sequence uint64 // the root bucket's sequence
	Freelist uint64 // page of the freelist, or NoFreelist
	HWM      uint64 // high water mark: pages [0, HWM) are in use or free
	Txid     uint64
}

// ErrNotMeta and the others describe why a meta page is not valid.
var (
	// ErrPastEOF is returned for a page that lies beyond the end of the
	// file (a file cut short).
	ErrPastEOF  = errors.New("the page lies past the end of the file")
	ErrNotMeta  = errors.New("not a bbolt meta page (bad magic)")
	ErrVersion  = errors.New("unknown bbolt file format version")
	ErrChecksum = errors.New("meta page checksum mismatch")
)

// ParseMeta parses a meta page (its header included) and validates it as
// bbolt does: magic, version, checksum; and, beyond bbolt, that its page
// size is a power of two bbolt can write and that its pages lie below the
// high water mark.
func ParseMeta(buf []byte) (Meta, error) {
	if len(buf) < HeaderSize+metaBody {
		return Meta{}, fmt.Errorf("meta page is %d bytes: %w", len(buf), io.ErrUnexpectedEOF)
	}
	b := buf[HeaderSize:]
	if ord.Uint32(b[0:]) != Magic {
		return Meta{}, ErrNotMeta
	}
	if v := ord.Uint32(b[4:]); v != Version {
		return Meta{}, fmt.Errorf("version %d: %w", v, ErrVersion)
	}
	h := fnv.New64a()
	h.Write(b[:56])
	if h.Sum64() != ord.Uint64(b[56:]) {
		return Meta{}, ErrChecksum
	}
	m := Meta{PageSize: ord.Uint32(b[8:]), Flags: ord.Uint32(b[12:]), Root: ord.Uint64(b[16:]), Sequence: ord.Uint64(b[24:]),
		Freelist: ord.Uint64(b[32:]), HWM: ord.Uint64(b[40:]), Txid: ord.Uint64(b[48:])}
	if m.PageSize < minPageSize || m.PageSize > maxPageSize || m.PageSize&(m.PageSize-1) != 0 {
		return Meta{}, fmt.Errorf("meta page has page size %d", m.PageSize)
	}
	if m.Root < 2 || m.Root >= m.HWM || (m.Freelist != NoFreelist && (m.Freelist < 2 || m.Freelist >= m.HWM)) {
		return Meta{}, fmt.Errorf("meta page points outside its pages (root %d, freelist %d, high water mark %d)", m.Root, m.Freelist, m.HWM)
	}
	return m, nil
}

// File is a bbolt file opened for reading.
type File struct {
	r    io.ReaderAt
	Size int64
	// PageSize is the page size of the valid meta page, or the size that
	// best explains the file's page headers when neither meta is valid.
	PageSize int
	Metas    [2]Meta
	// MetaErr says why meta page 0 or 1 is not valid (nil: valid).
	MetaErr [2]error
}

// Open reads the meta pages of the file r of size bytes. Damage is not an
// error of Open: it is reported in MetaErr and by Current. Open fails only
// for a file too short to hold two pages, or when r cannot be read.
func Open(r io.ReaderAt, size int64) (*File, error) {
	f := &File{r: r, Size: size}
	if size < 2*minPageSize {
		return nil, fmt.Errorf("the file has %d bytes, fewer than two bbolt pages", size)
	}
	buf := make([]byte, HeaderSize+metaBody)
	if _, err := r.ReadAt(buf, 0); err != nil {
		return nil, fmt.Errorf("read meta page 0: %w", err)
	}
	f.Metas[0], f.MetaErr[0] = ParseMeta(buf)
	f.PageSize = int(f.Metas[0].PageSize)
	if f.MetaErr[0] != nil {
		// Like bbolt: look for meta page 1 at each page size it can write.
		f.MetaErr[1] = ErrNotMeta
		for ps := int64(minPageSize); ps <= maxPageSize && 2*ps <= size; ps *= 2 {
			if _, err := r.ReadAt(buf, ps); err != nil {
				return nil, fmt.Errorf("read meta page 1: %w", err)
			}
			if m, err := ParseMeta(buf); err == nil && int64(m.PageSize) == ps {
				f.Metas[1], f.MetaErr[1], f.PageSize = m, nil, int(ps)
				break
			}
		}
		if f.PageSize == 0 || f.MetaErr[1] != nil {
			f.PageSize = f.guessPageSize()
		}
		return f, nil
	}
	if 2*int64(f.PageSize) > size {
		f.MetaErr[1] = fmt.Errorf("the file ends before meta page 1: %w", io.ErrUnexpectedEOF)
		return f, nil
	}
	if _, err := r.ReadAt(buf, int64(f.PageSize)); err != nil {
		return nil, fmt.Errorf("read meta page 1: %w", err)
	}
	f.Metas[1], f.MetaErr[1] = ParseMeta(buf)
	if f.MetaErr[1] == nil && int(f.Metas[1].PageSize) != f.PageSize {
		f.MetaErr[1] = fmt.Errorf("meta page 1 has page size %d, meta page 0 %d", f.Metas[1].PageSize, f.PageSize)
	}
	return f, nil
}

// Current returns the valid meta page with the higher transaction id, as
// bbolt chooses it, and its page number (0 or 1).
func (f *File) Current() (Meta, int, error) {
	i := -1
	for k := range 2 {
		if f.MetaErr[k] == nil && (i < 0 || f.Metas[k].Txid > f.Metas[i].Txid) {
			i = k
		}
	}
	if i < 0 {
		return Meta{}, -1, fmt.Errorf("both meta pages are damaged (page 0: %v; page 1: %v)", f.MetaErr[0], f.MetaErr[1])
	}
	return f.Metas[i], i, nil
}

// guessPageSize returns the page size under which most of the file's first
// pages carry their own id in their header.
func (f *File) guessPageSize() int {
	best, bestHits := os.Getpagesize(), 0
	for ps := minPageSize; ps <= maxPageSize; ps *= 2 {
		hits := 0
		for id := int64(2); id < 512 && (id+1)*int64(ps) <= f.Size; id++ {
			if h, err := f.header(uint64(id), ps); err == nil && h.ID == uint64(id) && validFlags(h.Flags) {
				hits++
			}
		}
		if hits > bestHits || (hits == bestHits && ps == os.Getpagesize()) {
			best, bestHits = ps, hits
		}
	}
	return best
}

// Pages is the number of whole pages in the file.
func (f *File) Pages() uint64 { return uint64(f.Size / int64(f.PageSize)) }

// Page is one page: its header, and its bytes (header included, overflow
// pages included; for an inline page, the rest of the bucket value).
type Page struct {
	ID       uint64
	Flags    uint16
	Count    uint16
	Overflow uint32
	Buf      []byte
}

// Type names the page's kind as bbolt does.
func (p *Page) Type() string {
	switch p.Flags {
	case FlagBranch:
		return "branch"
	case FlagLeaf:
		return "leaf"
	case FlagMeta:
		return "meta"
	case FlagFreelist:
		return "freelist"
	}
	return fmt.Sprintf("unknown<%02x>", p.Flags)
}

func validFlags(f uint16) bool {
	return f == FlagBranch || f == FlagLeaf || f == FlagMeta || f == FlagFreelist
}

func (f *File) header(id uint64, ps int) (Page, error) {
	var b [HeaderSize]byte
	off := int64(id) * int64(ps)
	if id >= uint64(f.Size)/uint64(ps) || off/int64(ps) != int64(id) {
		return Page{}, fmt.Errorf("page %d: %w (%d bytes)", id, ErrPastEOF, f.Size)
	}
	if _, err := f.r.ReadAt(b[:], off); err != nil {
		return Page{}, fmt.Errorf("read page %d: %w", id, err)
	}
	return parseHeader(b[:]), nil
}

func parseHeader(b []byte) Page {
	return Page{ID: ord.Uint64(b[0:]), Flags: ord.Uint16(b[8:]), Count: ord.Uint16(b[10:]), Overflow: ord.Uint32(b[12:])}
}

// Header reads the header of page id only.
func (f *File) Header(id uint64) (Page, error) { return f.header(id, f.PageSize) }

// ReadPage reads page id and its overflow pages. The header must carry
// the page's own id and a known type, and the overflow must lie within the
// file.
func (f *File) ReadPage(id uint64) (*Page, error) {
	h, err := f.Header(id)
	if err != nil {
		return nil, err
	}
	if h.ID != id {
		if h.ID >= f.Pages() {
			return nil, fmt.Errorf("page %d: garbage (its header is not a page header)", id)
		}
		return nil, fmt.Errorf("page %d: garbage (its header says page %d)", id, h.ID)
	}
	if !validFlags(h.Flags) {
		return nil, fmt.Errorf("page %d: garbage (type flags %#x)", id, h.Flags)
	}
	n := uint64(h.Overflow) + 1
	if id+n > f.Pages() {
		return nil, fmt.Errorf("page %d: its %d overflow pages run past the end of the file: %w", id, h.Overflow, ErrPastEOF)
	}
	h.Buf = make([]byte, n*uint64(f.PageSize))
	if _, err := f.r.ReadAt(h.Buf, int64(id)*int64(f.PageSize)); err != nil {
		return nil, fmt.Errorf("read page %d: %w", id, err)
	}
	return &h, nil
}

// InlinePage parses the inline page that follows a bucket header.
func InlinePage(buf []byte) (*Page, error) {
	if len(buf) < HeaderSize {
		return nil, fmt.Errorf("inline page has %d bytes", len(buf))
	}
	p := parseHeader(buf)
	p.Buf = buf
	if p.Flags != FlagLeaf {
		return nil, fmt.Errorf("inline page is %s, want leaf", p.Type())
	}
	return &p, nil
}

// Elem is one element of a branch or leaf page. Key and Value alias the
// page's bytes.
type Elem struct {
	Key []byte
	// Value and Bucket: a leaf element's value, and whether it is a
	// nested bucket's header.
	Value  []byte
	Bucket bool
	// Child is a branch element's child page.
	Child uint64
}

// Elems returns the elements of a branch or leaf page, each checked to lie
// within the page.
func (p *Page) Elems() ([]Elem, error) {
	if p.Flags != FlagBranch && p.Flags != FlagLeaf {
		return nil, fmt.Errorf("page %d is %s, not a branch or leaf page", p.ID, p.Type())
	}
	n := int64(p.Count)
	size := int64(len(p.Buf))
	if HeaderSize+n*elemSize > size {
		return nil, fmt.Errorf("page %d: %d elements do not fit in %d bytes", p.ID, n, size)
	}
	out := make([]Elem, n)
	for i := range n {
		off := HeaderSize + i*elemSize
		e := p.Buf[off : off+elemSize]
		if p.Flags == FlagBranch {
			pos, ksize := int64(ord.Uint32(e[0:])), int64(ord.Uint32(e[4:]))
			if off+pos+ksize > size {
				return nil, fmt.Errorf("page %d: branch element %d runs past the end of the page", p.ID, i)
			}
			out[i] = Elem{Key: p.Buf[off+pos : off+pos+ksize], Child: ord.Uint64(e[8:])}
			continue
		}
		flags, pos, ksize, vsize := ord.Uint32(e[0:]), int64(ord.Uint32(e[4:])), int64(ord.Uint32(e[8:])), int64(ord.Uint32(e[12:]))
		if flags&^bucketFlag != 0 {
			return nil, fmt.Errorf("page %d: leaf element %d has flags %#x", p.ID, i, flags)
		}
		if off+pos+ksize+vsize > size {
			return nil, fmt.Errorf("page %d: leaf element %d runs past the end of the page", p.ID, i)
		}
		k := off + pos
		out[i] = Elem{Key: p.Buf[k : k+ksize : k+ksize], Value: p.Buf[k+ksize : k+ksize+vsize : k+ksize+vsize], Bucket: flags&bucketFlag != 0}
	}
	return out, nil
}

// FreeIDs returns the page ids a freelist page lists.
func (p *Page) FreeIDs() ([]uint64, error) {
	if p.Flags != FlagFreelist {
		return nil, fmt.Errorf("page %d is %s, not the freelist", p.ID, p.Type())
	}
	idx, n := int64(0), int64(p.Count)
	if n == 0xFFFF {
		if len(p.Buf) < HeaderSize+8 {
			return nil, fmt.Errorf("freelist page %d is cut short", p.ID)
		}
		idx, n = 1, int64(ord.Uint64(p.Buf[HeaderSize:]))
	}
	if n < 0 || n > int64(len(p.Buf))/8 || HeaderSize+(idx+n)*8 > int64(len(p.Buf)) {
		return nil, fmt.Errorf("freelist page %d: %d ids do not fit in its %d bytes", p.ID, n, len(p.Buf))
	}
	ids := make([]uint64, n)
	for i := range n {
		ids[i] = ord.Uint64(p.Buf[HeaderSize+(idx+i)*8:])
	}
	return ids, nil
}

// BucketHeader is a nested bucket's value: its root page (0 when inline)
// and sequence, and its inline page.
type BucketHeader struct {
	Root     uint64
	Sequence uint64
	Inline   *Page
}

// ParseBucket parses a nested bucket's value.
func ParseBucket(v []byte) (BucketHeader, error) {
	if len(v) < bucketHeader {
		return BucketHeader{}, fmt.Errorf("bucket header has %d bytes, want at least %d", len(v), bucketHeader)
	}
	h := BucketHeader{Root: ord.Uint64(v[0:]), Sequence: ord.Uint64(v[8:])}
	if h.Root != 0 {
		return h, nil
	}
	p, err := InlinePage(v[bucketHeader:])
	if err != nil {
		return BucketHeader{}, err
	}
	h.Inline = p
	return h, nil
}
