package store

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	bolt "go.etcd.io/bbolt"

	"github.com/questbox/questbox/engine/internal/boltfile"
)

// The store check reads the bbolt file with ordinary reads through
// internal/boltfile, never through bbolt's memory map: a garbage page is a
// named problem instead of a panic in bbolt's assertions or a fault on the
// map, and checking a large store does not leave it resident in memory.
//
// It walks the page tree of one meta page: every branch and leaf page of
// every bucket, nested buckets included; it checks each page's header,
// element bounds and key order, that no page is used twice or is both used
// and free, that the freelist lists only pages of the store, and that every
// page is either used or free. bbolt's own Tx.Check does the same walk in a
// goroutine of its own, where a panic on a damaged page cannot be
// recovered, so questbox never calls it.

// walker walks the page tree of one meta page of a file.
type walker struct {
	f   *boltfile.File
	hwm uint64
	// free is the set of pages the freelist lists (nil: unknown).
	free map[uint64]bool
	// seen holds every page reached so far (overflow pages included);
	// pages in outer (nil: none) count as reached too.
	seen     map[uint64]bool
	outer    map[uint64]bool
	problems []string
	pastEOF  []uint64 // pages the tree names that the file does not hold
	pages    int      // pages in use, overflow included
	keys     int      // key/value records (nested bucket entries excluded)

	// Salvage hooks (nil in a check).
	onRecord func(path []string, k, v []byte)
	onBucket func(path []string, seq uint64)
	onDamage func(path []string, id uint64, lo, hi []byte, err error)
}

func newWalker(f *boltfile.File, hwm uint64) *walker {
	return &walker{f: f, hwm: hwm, seen: map[uint64]bool{}}
}

func (w *walker) problem(format string, args ...any) {
	w.problems = append(w.problems, fmt.Sprintf(format, args...))
}

// bucketName renders a bucket path for messages.
func bucketName(path []string) string {
	if len(path) == 0 {
		return "the root bucket"
	}
	return "bucket " + strings.Join(path, "/")
}

// ShowKey renders a key for messages: text as is, an 8-byte sequence
// number in decimal, anything else in hex.
func ShowKey(k []byte) string {
	printable := len(k) > 0
	for _, r := range string(k) {
		if r == unicode.ReplacementChar || !unicode.IsPrint(r) {
			printable = false
			break
		}
	}
	switch {
	case printable:
		return strconv.Quote(string(k))
	case len(k) == 8:
		return "#" + strconv.FormatUint(SeqOf(k), 10)
	}
	return fmt.Sprintf("%x", k)
}

// readFreelist loads the freelist of meta m. A damaged freelist is a
// problem, and leaves the set of free pages unknown.
func (w *walker) readFreelist(m boltfile.Meta) {
	if m.Freelist == boltfile.NoFreelist {
		return
	}
	p, err := w.f.ReadPage(m.Freelist)
	if err != nil {
		w.problem("the freelist (page %d) is unreadable: %v", m.Freelist, err)
		w.seen[m.Freelist] = true
		return
	}
	ids, err := p.FreeIDs()
	if err != nil {
		w.problem("the freelist (page %d) is damaged: %v", m.Freelist, err)
		w.seen[m.Freelist] = true
		return
	}
	for i := uint64(0); i <= uint64(p.Overflow); i++ {
		w.seen[m.Freelist+i] = true
	}
	w.pages += int(p.Overflow) + 1
	free := make(map[uint64]bool, len(ids))
	var outside, twice []uint64
	for _, id := range ids {
		switch {
		case id < 2 || id >= w.hwm:
			outside = append(outside, id)
		case free[id]:
			twice = append(twice, id)
		}
		free[id] = true
	}
	if len(outside) > 0 {
		w.problem("the freelist (page %d) is damaged: it lists %d pages outside the store's %d pages (%s)", m.Freelist, len(outside), w.hwm, pageRanges(outside))
	}
	if len(twice) > 0 {
		w.problem("the freelist (page %d) lists %d pages twice (%s)", m.Freelist, len(twice), pageRanges(twice))
	}
	w.free = free
}

// bucket walks a bucket whose header is h.
func (w *walker) bucket(path []string, h boltfile.BucketHeader) {
	if w.onBucket != nil {
		w.onBucket(path, h.Sequence)
	}
	if h.Inline != nil {
		w.leaf(path, h.Inline, nil, nil, "its inline page")
		return
	}
	w.tree(path, h.Root, nil, nil)
}

// tree walks the subtree of page id, whose keys must lie in [lo, hi) (nil:
// unbounded).
func (w *walker) tree(path []string, id uint64, lo, hi []byte) {
	switch {
	case id < 2 || id >= w.hwm:
		w.damage(path, id, lo, hi, fmt.Errorf("%s names page %d, outside the store's %d pages", bucketName(path), id, w.hwm))
		return
	case w.seen[id] || w.outer[id]:
		w.damage(path, id, lo, hi, fmt.Errorf("%s names page %d, which is already used elsewhere", bucketName(path), id))
		return
	}
	w.seen[id] = true
	p, err := w.f.ReadPage(id)
	if errors.Is(err, boltfile.ErrPastEOF) {
		w.pastEOF = append(w.pastEOF, id)
		if w.onDamage != nil {
			w.onDamage(path, id, lo, hi, err)
		}
		return
	}
	if err != nil {
		w.damage(path, id, lo, hi, err)
		return
	}
	for i := uint64(0); i <= uint64(p.Overflow); i++ {
		if i > 0 && w.seen[id+i] {
			w.problem("%s: page %d overlaps page %d, which is used elsewhere", bucketName(path), id, id+i)
		}
		w.seen[id+i] = true
		if w.free[id+i] {
			w.problem("%s: page %d is in use and also listed in the freelist: the next write would overwrite it", bucketName(path), id+i)
		}
	}
	if id+uint64(p.Overflow) >= w.hwm {
		w.problem("%s: page %d overflows past the store's %d pages", bucketName(path), id, w.hwm)
	}
	w.pages += int(p.Overflow) + 1
	switch p.Flags {
	case boltfile.FlagBranch:
		w.branch(path, p, lo, hi)
	case boltfile.FlagLeaf:
		w.leaf(path, p, lo, hi, fmt.Sprintf("page %d", id))
	default:
		w.damage(path, id, lo, hi, fmt.Errorf("page %d is a %s page where a branch or leaf page belongs", id, p.Type()))
	}
}

func (w *walker) damage(path []string, id uint64, lo, hi []byte, err error) {
	w.problem("%s: %v", bucketName(path), err)
	if w.onDamage != nil {
		w.onDamage(path, id, lo, hi, err)
	}
}

func (w *walker) branch(path []string, p *boltfile.Page, lo, hi []byte) {
	elems, err := p.Elems()
	if err == nil && len(elems) == 0 {
		err = fmt.Errorf("page %d: an empty branch page", p.ID)
	}
	if err == nil {
		err = keyOrder(p.ID, elems, lo, hi)
	}
	if err != nil {
		w.damage(path, p.ID, lo, hi, err)
		return
	}
	for i, e := range elems {
		next := hi
		if i+1 < len(elems) {
			next = elems[i+1].Key
		}
		w.tree(path, e.Child, e.Key, next)
	}
}

func (w *walker) leaf(path []string, p *boltfile.Page, lo, hi []byte, where string) {
	elems, err := p.Elems()
	if err == nil {
		err = keyOrder(p.ID, elems, lo, hi)
	}
	if err != nil {
		w.damage(path, p.ID, lo, hi, fmt.Errorf("%s: %w", where, err))
		return
	}
	for _, e := range elems {
		if !e.Bucket {
			w.keys++
			if w.onRecord != nil {
				w.onRecord(path, e.Key, e.Value)
			}
			continue
		}
		sub := append(slices.Clip(path), string(e.Key))
		h, err := boltfile.ParseBucket(e.Value)
		if err != nil {
			w.damage(sub, 0, nil, nil, fmt.Errorf("its header (in %s of %s) is damaged: %w", where, bucketName(path), err))
			continue
		}
		w.bucket(sub, h)
	}
}

// keyOrder checks that the keys of a page increase strictly and lie in
// [lo, hi).
func keyOrder(id uint64, elems []boltfile.Elem, lo, hi []byte) error {
	for i, e := range elems {
		switch {
		case i > 0 && bytes.Compare(elems[i-1].Key, e.Key) >= 0:
			return fmt.Errorf("page %d: key %d (%s) is out of order", id, i, ShowKey(e.Key))
		case lo != nil && bytes.Compare(e.Key, lo) < 0, hi != nil && bytes.Compare(e.Key, hi) >= 0:
			return fmt.Errorf("page %d: key %d (%s) lies outside the range its parent page gives it", id, i, ShowKey(e.Key))
		}
	}
	return nil
}

// finish reports the pages the tree named past the end of the file, and
// the pages that are neither used nor free.
func (w *walker) finish(m boltfile.Meta, meta string) {
	if len(w.pastEOF) > 0 {
		w.problem("%d pages of the store lie past the end of the file (%s): the file was cut short", len(w.pastEOF), pageRanges(w.pastEOF))
	}
	if w.free == nil && m.Freelist != boltfile.NoFreelist {
		return // a damaged freelist was reported; which pages are free is unknown
	}
	var lost []uint64
	for id := uint64(2); id < w.hwm; id++ {
		if !w.seen[id] && !w.free[id] {
			lost = append(lost, id)
		}
	}
	if len(lost) > 0 && m.Freelist != boltfile.NoFreelist {
		w.problem("%d pages are neither in use nor listed in the freelist (page %d, from %s): %s", len(lost), m.Freelist, meta, pageRanges(lost))
	}
}

// pageRanges renders sorted or unsorted page ids as "3-7, 9, 12-13".
func pageRanges(ids []uint64) string {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	var b strings.Builder
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		if j == i {
			fmt.Fprintf(&b, "%d", ids[i])
		} else {
			fmt.Fprintf(&b, "%d-%d", ids[i], ids[j])
		}
		i = j + 1
	}
	return "pages " + b.String()
}

// fileCheck is what a check of a store file found.
type fileCheck struct {
	meta     boltfile.Meta
	metaPage int // the meta page the store is read from (0 or 1)
	// damagedMeta is the meta page found damaged while the other one is
	// good (-1: none). bbolt reads the good one, and its next commit
	// rewrites the damaged one.
	damagedMeta int
	metaErr     error // why damagedMeta is damaged
	notes       []string
	problems    []string
	pages, keys int
}

// checkMetas reads the meta pages of f, and that the file holds every page
// the current one names. It is cheap: a few small reads.
func checkMetas(f *boltfile.File) (fileCheck, error) {
	c := fileCheck{damagedMeta: -1}
	m, i, err := f.Current()
	if err != nil {
		return c, err
	}
	c.meta, c.metaPage = m, i
	if other := 1 - i; f.MetaErr[other] != nil {
		c.damagedMeta, c.metaErr = other, f.MetaErr[other]
		c.notes = append(c.notes, fmt.Sprintf("meta page %d is damaged (%v); the store is read from meta page %d (transaction %d), as bbolt does after an interrupted commit", other, f.MetaErr[other], i, m.Txid))
	}
	if need := int64(m.HWM) * int64(f.PageSize); f.Size < need {
		return c, fmt.Errorf("the file is cut short: it has %d bytes, its meta page %d names %d pages of %d bytes (%d bytes)", f.Size, i, m.HWM, f.PageSize, need)
	}
	return c, nil
}

// checkFile runs the full check of f from its current meta page.
func checkFile(f *boltfile.File) (fileCheck, error) {
	c, err := checkMetas(f)
	if err != nil {
		return c, err
	}
	walkMeta(f, &c)
	return c, nil
}

// walkMeta walks the page tree of c.meta into c.
func walkMeta(f *boltfile.File, c *fileCheck) {
	w := newWalker(f, c.meta.HWM)
	w.readFreelist(c.meta)
	w.tree(nil, c.meta.Root, nil, nil)
	w.finish(c.meta, fmt.Sprintf("meta page %d", c.metaPage))
	c.problems = append(c.problems, w.problems...)
	c.pages, c.keys = w.pages, w.keys
}

// checkQuick is what every open checks before bbolt maps the file: the
// meta pages, the file's length, and the two pages bbolt reads at open
// (the freelist and the root), so that opening never faults.
func checkQuick(f *boltfile.File) (fileCheck, error) {
	c, err := checkMetas(f)
	if err != nil {
		return c, err
	}
	w := newWalker(f, c.meta.HWM)
	w.readFreelist(c.meta)
	if p, err := f.ReadPage(c.meta.Root); err != nil {
		w.problem("the root bucket: %v", err)
	} else if p.Flags != boltfile.FlagBranch && p.Flags != boltfile.FlagLeaf {
		w.problem("the root bucket: page %d is a %s page", p.ID, p.Type())
	} else if _, err := p.Elems(); err != nil {
		w.problem("the root bucket: %v", err)
	}
	c.problems = w.problems
	return c, nil
}

// snapshot runs fn on one consistent state of the store: a read
// transaction, and the meta page it reads from. bbolt keeps every page of
// that state — its freelist page included — unchanged until the read
// transaction ends: a page a later commit frees is reused only once every
// older read transaction has ended. So the check runs beside writers,
// which keep committing, and never reports their work in progress as
// damage (bbolt's Tx.Check, run in a read transaction, compares the old
// tree with the live freelist and does).
//
// To learn which meta page that state is, snapshot holds writers off for a
// moment: it begins a write transaction (waiting for a commit in
// progress), reads the meta pages from the file, begins the read
// transaction and rolls the write transaction back — nothing is written,
// no fsync. Caveat: a commit that must grow bbolt's memory map waits until
// the read transaction ends (bbolt remaps only between read transactions).
func (s *DB) snapshot(fn func(tx *bolt.Tx, f *boltfile.File, c fileCheck) error) error {
	return s.guard(func() error {
		var wtx *bolt.Tx
		if !s.readOnly {
			var err error
			if wtx, err = s.db.Begin(true); err != nil {
				return fmt.Errorf("questbox store %s: %w: %w", s.path, ErrStoreFailed, err)
			}
			defer wtx.Rollback()
		}
		f, err := s.file()
		if err != nil {
			return err
		}
		c, err := checkMetas(f)
		if err != nil {
			return corrupt(s.dir, s.path, err.Error())
		}
		rtx, err := s.db.Begin(false)
		if err != nil {
			return fmt.Errorf("questbox store %s: %w: %w", s.path, ErrStoreFailed, err)
		}
		defer rtx.Rollback()
		if wtx != nil {
			wtx.Rollback() // writers go on; rtx keeps its state
		}
		if uint64(rtx.ID()) != c.meta.Txid {
			return fmt.Errorf("BUG: questbox store %s: bbolt reads transaction %d, the file's meta page %d is transaction %d", s.path, rtx.ID(), c.metaPage, c.meta.Txid)
		}
		return fn(rtx, f, c)
	})
}

// PageCheck is what a walk of every page of a snapshot found.
type PageCheck struct {
	// Pages and Keys are the pages in use and the records in them.
	Pages, Keys int
	// Problems names every damage found; Err is then ErrCorrupt naming
	// them all and the salvage command.
	Problems []string
	Err      error
	// Notes are findings that are not damage and that the open did not
	// already say (a damaged meta page found since).
	Notes []string
}

// Snapshot walks every page of one consistent state of the store (see
// snapshot) and runs fn on that state's read transaction with what the
// walk found. It is safe while others write.
func (s *DB) Snapshot(fn func(tx *Tx, pc PageCheck) error) error {
	return s.snapshot(func(tx *bolt.Tx, f *boltfile.File, c fileCheck) error {
		walkMeta(f, &c)
		pc := PageCheck{Pages: c.pages, Keys: c.keys, Problems: c.problems}
		if c.damagedMeta >= 0 && !slices.ContainsFunc(s.notes, func(n string) bool { return strings.HasPrefix(n, fmt.Sprintf("meta page %d ", c.damagedMeta)) }) {
			pc.Notes = c.notes // not yet said at open
		}
		if len(c.problems) > 0 {
			pc.Err = corrupt(s.dir, s.path, c.problems...)
		}
		return fn(txOf(tx), pc)
	})
}

// Check walks every page of the store — each bucket, nested buckets
// included — on a consistent snapshot (see snapshot), and returns
// ErrCorrupt naming every problem found. It is safe while the engine
// writes.
func (s *DB) Check() error {
	return s.snapshot(func(_ *bolt.Tx, f *boltfile.File, c fileCheck) error {
		walkMeta(f, &c)
		if len(c.problems) > 0 {
			return corrupt(s.dir, s.path, c.problems...)
		}
		return nil
	})
}
