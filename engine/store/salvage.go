package store

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/questbox/questbox/engine/internal/boltfile"
)

// SalvageReport says what Salvage did.
type SalvageReport struct {
	// Store is the store file.
	Store string `json:"store"`
	// Healthy is set when the store passed its check: Salvage changed
	// nothing then (but a damaged meta page the open rewrote; see Notes).
	Healthy bool `json:"healthy"`
	// Damage is what the check found: why the store was salvaged.
	Damage []string `json:"damage,omitempty"`
	// Moved is where the damaged file now is (questbox.db.corrupt-<UTC time>).
	Moved string `json:"corrupt_file,omitempty"`
	// Buckets and Keys count what was copied into the new store.
	Buckets int `json:"buckets"`
	Keys    int `json:"keys"`
	// Lost lists what could not be copied: each damaged page with the
	// bucket and key range it held, and what was recovered beneath it.
	Lost []string `json:"lost"`
	// Rebuilt lists what Salvage derived again from the records it
	// copied: indexes, counts, sequences, placeholders, the ledger's
	// record of the loss.
	Rebuilt []string `json:"rebuilt,omitempty"`
	// Notes are findings that are not damage.
	Notes []string `json:"notes,omitempty"`
	// Verify is "ok", or why the salvaged store does not verify (the
	// verdict ledger can prove nothing about what was lost unrecorded).
	Verify string `json:"verify"`
}

// Salvage recovers every readable record of the damaged store in dir
// into a new store that replaces it; the damaged file is kept beside it as
// questbox.db.corrupt-<now in UTC>.
//
// It reads the damaged file page by page (internal/boltfile), not through
// bbolt: it walks the tree from the newest valid meta page (or, with both
// meta pages damaged, from the newest root page it can find), takes every
// record of every readable leaf, and skips each damaged page alone, so a
// garbage leaf loses only its own records. The pages below a damaged
// branch page are found again among the pages that are neither reachable
// nor free, and their records are put back where the key ranges say they
// belong; without a sound freelist to tell live pages from stale ones (a
// file cut short, both meta pages damaged), the unreachable leaf pages are
// searched for questbox's own records instead (see deepScan). Records
// damaged inside a sound page (that do not decode) are dropped. It then rebuilds what the engine derives from the records (the
// per-quest indexes, the quests' counts, bucket sequences), and appends a
// SALVAGED record to the verdict ledger naming the ledger records and the
// locked nodes that were lost, so that the result verifies while the loss
// stays on record.
//
// The result is written to a temporary file, fsynced, checked and
// verified, and only then renamed over questbox.db (the damaged file is
// hard-linked aside first, so questbox.db never goes missing), and the
// directory is fsynced. On any error the temporary file is removed and
// the store is left as it was.
//
// A store whose pages pass the full check and whose records all decode is
// left alone (Healthy): a record rewritten by hand is the ledger's to
// report, not salvage's to hide. Errors: ErrInUse
// when another process holds the store; an error wrapping fs.ErrNotExist
// when there is no store; ErrStoreFailed when the directory cannot be
// written.
func Salvage(dir string, now time.Time, rec Records) (SalvageReport, error) {
	return SalvageSteps(dir, now, rec, nil)
}

// Records is what salvage needs of the domain that owns the records.
type Records struct {
	Schema Schema
	// Damaged names every record of tx that does not decode: records
	// damaged inside sound pages.
	Damaged func(tx *Tx) []string
	// Verify checks an open store as `questbox verify` does.
	Verify func(db *DB) (notes []string, err error)
	// Probes recognise the records found on pages the tree does not reach.
	Probes []Probe
	// Rebuild derives again, inside tx, what the domain keeps in step with
	// the records salvage copied, and says what it did, one line each.
	// seqKnown says whether salvage read a top-level bucket's header.
	Rebuild func(tx *Tx, now time.Time, seqKnown func(bucket []byte) bool) ([]string, error)
}

// SalvageSteps is Salvage; fail, when set (tests), is asked after each
// step that leaves something on disk, and its error stops salvage there.
func SalvageSteps(dir string, now time.Time, rec Records, fail func(step string) error) (SalvageReport, error) {
	sv := &salvageRun{dir: dir, path: filepath.Join(dir, FileName), now: now, rec: rec, fail: fail}
	sv.rep = SalvageReport{Store: sv.path, Lost: []string{}}
	if _, err := os.Stat(sv.path); err != nil {
		return sv.rep, fmt.Errorf("salvage: questbox store %s: %w", sv.path, err)
	}
	if healthy, err := sv.healthy(); healthy || err != nil {
		return sv.rep, err
	}
	f, fi, err := sv.lock()
	if err != nil {
		return sv.rep, err
	}
	defer f.Close()
	got := sv.read(f, fi)
	tmp := sv.path + ".salvage"
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return sv.rep, fmt.Errorf("salvage: remove an old %s: %w: %w", tmp, ErrStoreFailed, err)
	}
	installed := false
	defer func() {
		if !installed {
			os.Remove(tmp)
		}
	}()
	if err := sv.write(tmp, got); err != nil {
		return sv.rep, err
	}
	if err := sv.install(tmp, fi); err != nil {
		return sv.rep, err
	}
	installed = true
	if err := syncDir(dir); err != nil {
		return sv.rep, fmt.Errorf("salvage: sync %s (the salvaged store is in place): %w: %w", dir, ErrStoreFailed, err)
	}
	return sv.rep, nil
}

// salvageRun is one salvage, its steps the methods below in their order.
type salvageRun struct {
	dir, path string
	now       time.Time
	rec       Records
	fail      func(step string) error
	rep       SalvageReport
}

// step asks the test hook after a step that left something on disk.
func (sv *salvageRun) step(name string) error {
	if sv.fail == nil {
		return nil
	}
	if err := sv.fail(name); err != nil {
		return fmt.Errorf("salvage: %s: %w", name, err)
	}
	return nil
}

// healthy opens the store as the daemon would. A store whose pages pass
// the full check and whose records all decode is left alone; sound pages
// can still hold records damaged inside (bit rot), which are salvaged. An
// error other than ErrCorrupt (in use, a newer schema, permissions) ends
// the salvage: it would not help.
func (sv *salvageRun) healthy() (bool, error) {
	st, err := Open(sv.dir, Options{Check: true}, sv.rec.Schema)
	if err == nil {
		var bad []string
		err = st.View(func(tx *Tx) error {
			bad = sv.rec.Damaged(tx)
			return nil
		})
		if err == nil && len(bad) == 0 {
			defer st.Close()
			sv.rep.Healthy, sv.rep.Notes = true, st.Notes()
			sv.rep.Verify = "ok"
			if _, err := sv.rec.Verify(st); err != nil {
				sv.rep.Verify = err.Error()
			}
			return true, nil
		}
		st.Close()
		sv.rep.Damage = bad
	}
	if err != nil && !errors.Is(err, ErrCorrupt) {
		return false, fmt.Errorf("salvage: %w", err)
	}
	return false, nil
}

// lock opens the damaged file and takes its exclusive lock.
func (sv *salvageRun) lock() (*os.File, os.FileInfo, error) {
	f, err := os.Open(sv.path)
	if err != nil {
		return nil, nil, fmt.Errorf("salvage: %w: %w", ErrStoreFailed, err)
	}
	fi, err := sv.lockFile(f)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

func (sv *salvageRun) lockFile(f *os.File) (os.FileInfo, error) {
	if err := lockFile(f, true, 3*time.Second); err != nil {
		if errors.Is(err, errLockTimeout) {
			return nil, fmt.Errorf("salvage: %w", inUse(sv.dir))
		}
		return nil, fmt.Errorf("salvage: lock %s: %w: %w", sv.path, ErrStoreFailed, err)
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("salvage: %w: %w", ErrStoreFailed, err)
	}
	return fi, stillThere(sv.path, fi)
}

// read reads every record it can from the damaged file.
func (sv *salvageRun) read(f *os.File, fi os.FileInfo) *salvaged {
	bf, err := boltfile.Open(f, fi.Size())
	if err != nil {
		sv.rep.Damage = append(sv.rep.Damage, err.Error())
		sv.rep.Lost = append(sv.rep.Lost, fmt.Sprintf("everything: %v", err))
		return &salvaged{root: newSBucket()}
	}
	if c, err := checkFile(bf); err != nil {
		sv.rep.Damage = append(sv.rep.Damage, err.Error())
	} else {
		sv.rep.Damage, sv.rep.Notes = append(sv.rep.Damage, c.problems...), c.notes
	}
	return readSalvage(bf, &sv.rep, sv.rec.Probes)
}

// write writes what was read to tmp, then opens the result as the daemon
// would (full check, migrations), verifies it and syncs it, all before it
// replaces anything.
func (sv *salvageRun) write(tmp string, got *salvaged) error {
	if err := writeSalvage(tmp, got, sv.now, &sv.rep, sv.rec.Rebuild); err != nil {
		return err
	}
	if err := sv.step("written"); err != nil {
		return err
	}
	ns, err := openDB(sv.dir, tmp, Options{Check: true}, sv.rec.Schema)
	if err != nil {
		return fmt.Errorf("salvage: the salvaged store does not open: %w", err)
	}
	vnotes, verr := sv.rec.Verify(ns)
	if cerr := ns.Close(); cerr != nil {
		return fmt.Errorf("salvage: close %s: %w: %w", tmp, ErrStoreFailed, cerr)
	}
	sv.rep.Notes = append(sv.rep.Notes, vnotes...)
	sv.rep.Verify = "ok"
	if verr != nil {
		sv.rep.Verify = verr.Error()
	}
	if err := syncFile(tmp); err != nil {
		return fmt.Errorf("salvage: sync %s: %w: %w", tmp, ErrStoreFailed, err)
	}
	return sv.step("verified")
}

// install keeps the damaged file as questbox.db.corrupt-<time> (a hard
// link first, so questbox.db never goes missing) and renames tmp over it.
func (sv *salvageRun) install(tmp string, fi os.FileInfo) error {
	stamp := sv.now.UTC().Format("20060102T150405Z")
	moved := fmt.Sprintf("%s.corrupt-%s", sv.path, stamp)
	for i := 2; ; i++ {
		if _, err := os.Lstat(moved); errors.Is(err, fs.ErrNotExist) {
			break
		}
		moved = fmt.Sprintf("%s.corrupt-%s-%d", sv.path, stamp, i)
	}
	if err := stillThere(sv.path, fi); err != nil {
		return err
	}
	if err := os.Link(sv.path, moved); err != nil {
		return fmt.Errorf("salvage: keep the damaged store as %s: %w: %w", moved, ErrStoreFailed, err)
	}
	err := sv.step("linked")
	if err == nil {
		if err = os.Rename(tmp, sv.path); err != nil {
			err = fmt.Errorf("salvage: install the salvaged store: %w: %w", ErrStoreFailed, err)
		}
	}
	if err != nil {
		os.Remove(moved) // the damaged store is still questbox.db
		return err
	}
	sv.rep.Moved = moved
	return nil
}

// stillThere checks that path is still the file salvage locked and read:
// a salvage that ran meanwhile has replaced it.
func stillThere(path string, fi os.FileInfo) error {
	now, err := os.Stat(path)
	if err != nil || !os.SameFile(now, fi) {
		return fmt.Errorf("salvage: %s was replaced while salvage waited for it (another salvage?); run salvage again: %w", path, ErrInUse)
	}
	return nil
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// sbucket is a bucket as salvage read it.
type sbucket struct {
	seq    uint64
	hasSeq bool
	keys   map[string][]byte
	subs   map[string]*sbucket
}

func newSBucket() *sbucket {
	return &sbucket{keys: map[string][]byte{}, subs: map[string]*sbucket{}}
}

func (b *sbucket) at(path []string) *sbucket {
	for _, name := range path {
		s := b.subs[name]
		if s == nil {
			s = newSBucket()
			b.subs[name] = s
		}
		b = s
	}
	return b
}

// salvaged is what salvage read from the damaged file.
type salvaged struct {
	root *sbucket
}

// spot is a damaged page: the bucket and key range it held.
type spot struct {
	path      []string
	page      uint64
	lo, hi    []byte
	err       error
	recovered int // records found again below it
	orphans   int // pages found again below it
}

// readSalvage reads every record it can from f.
func readSalvage(f *boltfile.File, rep *SalvageReport, probes []Probe) *salvaged {
	got := &salvaged{root: newSBucket()}
	m, hwm, trustFree, ok := salvageMeta(f, rep)
	if !ok {
		return got
	}
	var spots []*spot
	w := newWalker(f, hwm)
	w.onRecord = func(path []string, k, v []byte) { got.root.at(path).keys[string(k)] = bytes.Clone(v) }
	w.onBucket = func(path []string, seq uint64) {
		b := got.root.at(path)
		b.seq, b.hasSeq = seq, true
	}
	w.onDamage = func(path []string, id uint64, lo, hi []byte, err error) {
		got.root.at(path)
		spots = append(spots, &spot{path: slices.Clone(path), page: id, lo: lo, hi: hi, err: err})
	}
	if trustFree {
		w.readFreelist(m)
		trustFree = w.free != nil || m.Freelist == boltfile.NoFreelist
	}
	if err := rootSound(f, m.Root); err != nil {
		// The meta page names a root page that is not one: its write was
		// lost (a card that lied about an fsync) or it was damaged. The
		// buckets' own pages are still in the file; the headers are not.
		rep.Lost = append(rep.Lost, fmt.Sprintf("the root page (page %d) was lost (%v): what it alone held cannot be known — every bucket's header and sequence, "+
			"and the small buckets kept inside it (the schema version and ledger head, and any of quests, runs, edges, cursors and indexes small enough to live there)", m.Root, err))
		if found := deepScan(f, w, got, rep, probes); found != "" {
			rep.Lost = append(rep.Lost, found)
		} else {
			rep.Lost = append(rep.Lost, "no record was found on the file's other pages either")
		}
		return got
	}
	w.tree(nil, m.Root, nil, nil)
	if len(spots) > 0 && trustFree && m.Freelist != boltfile.NoFreelist {
		recoverOrphans(f, w, got, spots, rep)
	}
	// With a sound freelist every page is reachable or free: pages that
	// are neither hold what the tree lost its way to (a stale page where a
	// branch or the root belonged).
	unreached := 0
	if trustFree {
		for id := uint64(2); id < min(w.hwm, f.Pages()); id++ {
			if !w.seen[id] && !w.free[id] {
				unreached++
			}
		}
	}
	deep := ""
	if unreached > 0 || slices.ContainsFunc(spots, func(s *spot) bool { return s.orphans == 0 }) {
		deep = deepScan(f, w, got, rep, probes)
	}
	if unreached > 0 {
		rep.Lost = append(rep.Lost, fmt.Sprintf("%d pages of the file are neither reachable from its root nor free: the tree lost its way to them (a lost page write); their records were searched for, and what else they held cannot be known", unreached))
	}
	reportSpots(spots, deep != "", rep)
	if deep != "" {
		rep.Lost = append(rep.Lost, deep)
	}
	return got
}

// salvageMeta is the meta page to read the damaged file from, its high
// water mark, and whether its freelist may be trusted; with both meta
// pages damaged, the newest root page found in the file stands in (ok is
// false when there is none: everything is lost).
func salvageMeta(f *boltfile.File, rep *SalvageReport) (m boltfile.Meta, hwm uint64, trustFree, ok bool) {
	m, _, err := f.Current()
	if err == nil {
		return m, m.HWM, true, true
	}
	root, n := findRoot(f)
	if root == 0 {
		rep.Lost = append(rep.Lost, fmt.Sprintf("everything: %v, and no root page could be found among the file's %d pages", err, f.Pages()))
		return m, 0, false, false
	}
	rep.Notes = append(rep.Notes, fmt.Sprintf("%v: read from page %d, the newest of %d root pages found in the file", err, root, n))
	return boltfile.Meta{Root: root}, f.Pages(), false, true
}

// reportSpots says, for each damaged page, what it held and what of it
// was recovered; searched says the search of unreachable pages ran.
func reportSpots(spots []*spot, searched bool, rep *SalvageReport) {
	for _, s := range spots {
		msg := fmt.Sprintf("%s: %v", bucketName(s.path), s.err)
		if s.lo != nil || s.hi != nil {
			msg += fmt.Sprintf(" (keys from %s to %s)", keyOrEnd(s.lo, "the start"), keyOrEnd(s.hi, "the end"))
		}
		switch {
		case s.orphans > 0:
			msg += fmt.Sprintf("; %d records below it were recovered from %d pages found again", s.recovered, s.orphans)
		case searched:
			msg += "; its records are lost but for what the search below found"
		default:
			msg += "; its records are lost"
		}
		rep.Lost = append(rep.Lost, msg)
	}
}

func keyOrEnd(k []byte, end string) string {
	if k == nil {
		return end
	}
	return ShowKey(k)
}

// findRoot looks for the store's root page when both meta pages are
// damaged: a leaf page of bucket headers only, naming questbox's nodes and
// meta buckets. Copy-on-write leaves older roots behind in free pages; the
// newest has the highest bucket sequences (every change bumps one), so
// that one is taken. It returns 0 when there is none, and how many there
// were.
func findRoot(f *boltfile.File) (uint64, int) {
	var best, bestScore uint64
	n := 0
	for id := uint64(2); id < f.Pages(); id++ {
		h, err := f.Header(id)
		if err != nil || h.ID != id || h.Flags != boltfile.FlagLeaf {
			continue
		}
		p, err := f.ReadPage(id)
		if err != nil {
			continue
		}
		elems, err := p.Elems()
		if err != nil || len(elems) == 0 {
			continue
		}
		var score uint64
		names := map[string]bool{}
		ok := true
		for _, e := range elems {
			bh, err := boltfile.ParseBucket(e.Value)
			if !e.Bucket || err != nil {
				ok = false
				break
			}
			score += bh.Sequence
			names[string(e.Key)] = true
		}
		if !ok || !names[string(Nodes)] || !names[string(Meta)] {
			continue
		}
		n++
		if best == 0 || score > bestScore || (score == bestScore && id > best) {
			best, bestScore = id, score
		}
	}
	return best, n
}

// rootSound checks that page id is a root page: a leaf of bucket headers
// naming only questbox's buckets, the nodes and meta buckets among them,
// or a branch over such leaves (inline buckets can make the root outgrow
// one page). A page whose write was lost holds an older page's bytes —
// a leaf of records, a freelist, zeros — and fails this.
func rootSound(f *boltfile.File, id uint64) error {
	names := map[string]bool{}
	var walk func(id uint64, depth int) error
	walk = func(id uint64, depth int) error {
		p, err := f.ReadPage(id)
		if err != nil {
			return err
		}
		elems, err := p.Elems()
		if err != nil {
			return err
		}
		for _, e := range elems {
			if p.Flags == boltfile.FlagBranch {
				if depth > 3 {
					return fmt.Errorf("page %d: a root bucket of questbox's few buckets is never this deep", id)
				}
				if err := walk(e.Child, depth+1); err != nil {
					return err
				}
				continue
			}
			if !e.Bucket {
				return fmt.Errorf("page %d holds records, not bucket headers", id)
			}
			if !slices.ContainsFunc(Buckets, func(b []byte) bool { return string(b) == string(e.Key) }) {
				return fmt.Errorf("page %d names a bucket questbox does not have (%s)", id, ShowKey(e.Key))
			}
			names[string(e.Key)] = true
		}
		return nil
	}
	if err := walk(id, 0); err != nil {
		return err
	}
	if !names[string(Nodes)] || !names[string(Meta)] {
		return fmt.Errorf("page %d lacks the nodes or the meta bucket", id)
	}
	return nil
}

// recoverOrphans finds the pages that are neither reachable nor free —
// with a sound freelist, exactly the pages below damaged ones — and puts
// each orphan subtree's records back into the damaged spot whose bucket
// and key range take it, when exactly one does.
func recoverOrphans(f *boltfile.File, w *walker, got *salvaged, spots []*spot, rep *SalvageReport) {
	trees, unplaced, stray := orphanTrees(f, w, spots)
	u, st := placeTrees(w, got, spots, trees)
	unplaced, stray = unplaced+u, stray+st
	if unplaced > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d unreachable subtrees (%d pages) fit no single damaged page (or overlap one another): not placed by key range", unplaced, stray))
	}
}

// orphanTree is a subtree of pages neither reachable nor free, with the
// records it holds, their key range and the damaged spot it fits.
type orphanTree struct {
	min, max []byte
	rec      *sbucket
	pages    map[uint64]bool
	sp       *spot
}

// orphanPages are the sound branch and leaf pages neither reachable nor
// free.
func orphanPages(f *boltfile.File, w *walker) map[uint64]*boltfile.Page {
	orphans := map[uint64]*boltfile.Page{}
	for id := uint64(2); id < w.hwm; id++ {
		if w.seen[id] || w.free[id] {
			continue
		}
		if p, err := f.ReadPage(id); err == nil && (p.Flags == boltfile.FlagBranch || p.Flags == boltfile.FlagLeaf) {
			if _, err := p.Elems(); err == nil {
				orphans[id] = p
			}
		}
	}
	return orphans
}

// orphanTrees reads every orphan subtree from its top page and finds the
// one damaged spot whose bucket and key range take it; it counts the
// subtrees that fit none or several, and their pages.
func orphanTrees(f *boltfile.File, w *walker, spots []*spot) (trees []*orphanTree, unplaced, stray int) {
	orphans := orphanPages(f, w)
	child := map[uint64]bool{}
	for _, p := range orphans {
		if p.Flags == boltfile.FlagBranch {
			elems, _ := p.Elems()
			for _, e := range elems {
				child[e.Child] = true
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(orphans)) {
		if child[id] {
			continue
		}
		t := readOrphan(f, w, id)
		if t == nil {
			continue
		}
		var fits []*spot
		for _, s := range spots {
			inRange := (s.lo == nil || bytes.Compare(t.min, s.lo) >= 0) && (s.hi == nil || bytes.Compare(t.max, s.hi) < 0)
			// Nothing is placed in the root bucket: a subtree of bucket
			// headers alone is as likely a bucket of per-quest buckets
			// as the root (the search for records handles a lost root).
			if inRange && len(s.path) > 0 {
				fits = append(fits, s)
			}
		}
		if len(fits) != 1 {
			unplaced++
			stray += len(t.pages)
			continue
		}
		t.sp = fits[0]
		trees = append(trees, t)
	}
	return trees, unplaced, stray
}

// readOrphan reads the subtree of orphan page id: nil when it holds no key.
func readOrphan(f *boltfile.File, w *walker, id uint64) *orphanTree {
	t := &orphanTree{rec: newSBucket()}
	ow := newWalker(f, w.hwm)
	ow.outer, ow.free = w.seen, w.free
	var keys [][]byte
	ow.onRecord = func(path []string, k, v []byte) {
		t.rec.at(path).keys[string(k)] = bytes.Clone(v)
		if len(path) == 0 {
			keys = append(keys, k)
		}
	}
	ow.onBucket = func(path []string, seq uint64) {
		b := t.rec.at(path)
		b.seq, b.hasSeq = seq, true
		if len(path) == 1 {
			keys = append(keys, []byte(path[0]))
		}
	}
	ow.tree(nil, id, nil, nil)
	t.pages = ow.seen
	if len(keys) == 0 {
		return nil
	}
	t.min, t.max = slices.MinFunc(keys, bytes.Compare), slices.MaxFunc(keys, bytes.Compare)
	return t
}

// placeTrees merges each spot's subtrees into it, unless two of them
// overlap (an older copy of the same records): then none of that spot's
// are placed, and they are counted with their pages.
func placeTrees(w *walker, got *salvaged, spots []*spot, trees []*orphanTree) (unplaced, stray int) {
	for _, s := range spots {
		var mine []*orphanTree
		for _, t := range trees {
			if t.sp == s {
				mine = append(mine, t)
			}
		}
		slices.SortFunc(mine, func(a, b *orphanTree) int { return bytes.Compare(a.min, b.min) })
		overlap := false
		for i := 1; i < len(mine); i++ {
			if bytes.Compare(mine[i].min, mine[i-1].max) <= 0 {
				overlap = true
			}
		}
		if overlap {
			for _, t := range mine {
				unplaced++
				stray += len(t.pages)
			}
			continue
		}
		for _, t := range mine {
			s.recovered += merge(got.root.at(s.path), t.rec)
			s.orphans += len(t.pages)
			maps.Copy(w.seen, t.pages)
		}
	}
	return unplaced, stray
}

// Probe recognises a record of one of the domain's buckets by its key
// and value alone, and says which of two copies of it is the newer.
type Probe struct {
	Bucket []byte
	Match  func(k, v []byte) bool
	Newer  func(a, b []byte) bool // nil: records never change once written
	// Nest, when set, names the nested bucket of Bucket the record v
	// belongs in ("": unknown, the record is left out), from the records
	// found: lookup(bucket, key) is the value found there, or nil.
	Nest func(v []byte, lookup func(bucket, key []byte) []byte) string
}

// deepScan is the last resort when records sit below damaged pages that
// no sound freelist lets us place (a file cut short, both meta pages
// damaged, a damaged freelist): it reads every leaf page the walk did not
// reach and takes the records of questbox's main buckets — nodes, quests,
// runs, events, ledger — recognised by their key and value, where the
// walk found none under that key. Such pages may be stale copies
// (copy-on-write leaves old versions in free pages), so of several copies
// the newest wins (nodes and quests by their update time, runs by their
// end); ledger records and events never change once written. A record
// whose live page was lost may thus come back in an older version; the
// report says how many records came from this scan.
func deepScan(f *boltfile.File, w *walker, got *salvaged, rep *SalvageReport, probes []Probe) string {
	sc := &pageScan{probes: probes, found: map[string]map[string][]byte{}}
	for id := uint64(2); id < min(w.hwm, f.Pages()); id++ {
		if !w.seen[id] && !w.free[id] {
			sc.page(f, id)
		}
	}
	parts := sc.place(got, rep)
	parts = append(parts, sc.placeNested(got, rep)...)
	if len(parts) == 0 {
		rep.Notes = append(rep.Notes, "no further record was found on the pages the walk could not reach")
		return ""
	}
	return fmt.Sprintf("records below the damaged pages were searched for on the %d unreachable pages that hold some: recovered %s records; where the newest copy of a record was lost, an older one may have come back (indexes and other buckets are not recognised this way; the indexes are rebuilt)", sc.pages, strings.Join(parts, ", "))
}

// pageScan is what deepScan found: per bucket the newest copy of each
// record the probes recognise, and the nested records (a quest's edges)
// whose bucket the records found will tell.
type pageScan struct {
	probes []Probe
	found  map[string]map[string][]byte
	nested []nestedRecord
	pages  int // pages that held a record found
}

type nestedRecord struct {
	pr   *Probe
	k, v []byte
}

// page reads leaf page id, if it is one, and keeps every record a probe
// recognises, those of the small buckets kept inline in it included.
func (sc *pageScan) page(f *boltfile.File, id uint64) {
	h, err := f.Header(id)
	if err != nil || h.ID != id || h.Flags != boltfile.FlagLeaf {
		return
	}
	p, err := f.ReadPage(id)
	if err != nil {
		return
	}
	elems, err := p.Elems()
	if err != nil {
		return
	}
	for _, e := range elems {
		if !e.Bucket {
			continue
		}
		if h, err := boltfile.ParseBucket(e.Value); err == nil && h.Inline != nil {
			if inner, err := h.Inline.Elems(); err == nil {
				elems = append(elems, inner...)
			}
		}
	}
	used := false
	for _, e := range elems {
		if !e.Bucket {
			used = sc.record(e.Key, e.Value) || used
		}
	}
	if used {
		sc.pages++
	}
}

// record keeps k, v if a probe recognises it: the newer of two copies.
func (sc *pageScan) record(k, v []byte) bool {
	for i := range sc.probes {
		pr := &sc.probes[i]
		if !pr.Match(k, v) {
			continue
		}
		if pr.Nest != nil {
			sc.nested = append(sc.nested, nestedRecord{pr, bytes.Clone(k), bytes.Clone(v)})
			return true
		}
		b := sc.found[string(pr.Bucket)]
		if b == nil {
			b = map[string][]byte{}
			sc.found[string(pr.Bucket)] = b
		}
		if old, ok := b[string(k)]; !ok || (pr.Newer != nil && pr.Newer(v, old)) {
			b[string(k)] = bytes.Clone(v)
		}
		return true
	}
	return false
}

// place puts the records found into got: where the tree gave none, or
// gave a damaged or older copy (the tree itself may be a stale one: a lost
// root or branch write left an older page that still reads as one). It
// returns what it added, per bucket.
func (sc *pageScan) place(got *salvaged, rep *SalvageReport) []string {
	var parts []string
	replaced := 0
	for _, name := range slices.Sorted(maps.Keys(sc.found)) {
		pr := probeOf(sc.probes, name)
		dst := got.root.at([]string{name})
		n := 0
		for k, v := range sc.found[name] {
			old, ok := dst.keys[k]
			switch {
			case !ok:
				dst.keys[k] = v
				n++
			case !pr.Match([]byte(k), old) || (pr.Newer != nil && pr.Newer(v, old)):
				dst.keys[k] = v
				replaced++
			}
		}
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, name))
		}
	}
	if replaced > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d records the tree gave were older or damaged copies of records found on unreachable pages: the newer copies were kept", replaced))
	}
	return parts
}

// placeNested puts each nested record where the records found say it
// belongs, and says how many it placed per bucket.
func (sc *pageScan) placeNested(got *salvaged, rep *SalvageReport) []string {
	lookup := func(bucket, key []byte) []byte {
		if b := got.root.subs[string(bucket)]; b != nil {
			return b.keys[string(key)]
		}
		return nil
	}
	placed, unplaced := map[string]int{}, 0
	for _, r := range sc.nested {
		name := r.pr.Nest(r.v, lookup)
		if name == "" {
			unplaced++
			continue
		}
		dst := got.root.at([]string{string(r.pr.Bucket), name})
		if _, ok := dst.keys[string(r.k)]; !ok {
			dst.keys[string(r.k)] = r.v
			placed[string(r.pr.Bucket)]++
		}
	}
	if unplaced > 0 {
		rep.Lost = append(rep.Lost, fmt.Sprintf("%d records were found whose bucket could not be told (the records they name were lost too)", unplaced))
	}
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(placed)) {
		parts = append(parts, fmt.Sprintf("%d %s", placed[name], name))
	}
	return parts
}

// probeOf is the first probe of bucket name.
func probeOf(probes []Probe, name string) *Probe {
	for i := range probes {
		if string(probes[i].Bucket) == name {
			return &probes[i]
		}
	}
	return nil
}

// merge adds src's records and nested buckets to dst and counts the
// records added.
func merge(dst, src *sbucket) int {
	n := 0
	for k, v := range src.keys {
		if _, ok := dst.keys[k]; !ok {
			dst.keys[k] = v
			n++
		}
	}
	for name, s := range src.subs {
		d := dst.at([]string{name})
		if s.hasSeq && (!d.hasSeq || s.seq > d.seq) {
			d.seq, d.hasSeq = s.seq, true
		}
		n += merge(d, s)
	}
	return n
}

// writeSalvage writes what was read into a new bbolt file at tmp, and
// rebuilds what the engine derives from it, in one transaction.
func writeSalvage(tmp string, got *salvaged, now time.Time, rep *SalvageReport, rebuild func(*Tx, time.Time, func([]byte) bool) ([]string, error)) error {
	db, err := bolt.Open(tmp, 0o600, &bolt.Options{Timeout: time.Second, FreelistType: freelistType})
	if err != nil {
		return fmt.Errorf("salvage: create %s: %w: %w", tmp, ErrStoreFailed, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, name := range slices.Sorted(maps.Keys(got.root.subs)) {
			if name == "" {
				rep.Lost = append(rep.Lost, nameless(got.root.subs[name]))
				continue
			}
			b, err := tx.CreateBucketIfNotExists([]byte(name))
			if err != nil {
				return err
			}
			if err := copyInto(b, got.root.subs[name], rep); err != nil {
				return fmt.Errorf("bucket %s: %w", name, err)
			}
		}
		if len(got.root.keys) > 0 {
			rep.Lost = append(rep.Lost, fmt.Sprintf("%d records found outside any bucket: not copied", len(got.root.keys)))
		}
		rebuilt, err := rebuild(txOf(tx), now, func(b []byte) bool {
			sb := got.root.subs[string(b)]
			return sb != nil && sb.hasSeq
		})
		rep.Rebuilt = append(rep.Rebuilt, rebuilt...)
		return err
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("salvage: write %s: %w", tmp, err)
	}
	return nil
}

// copyInto writes src into the bucket b, nested buckets included.
func copyInto(b *bolt.Bucket, src *sbucket, rep *SalvageReport) error {
	b.FillPercent = 0.9
	rep.Buckets++
	if src.hasSeq {
		if err := b.SetSequence(src.seq); err != nil {
			return err
		}
	}
	for _, k := range slices.Sorted(maps.Keys(src.keys)) {
		if src.subs[k] != nil {
			continue // a bucket of that name wins; its value was a stale copy
		}
		if err := b.Put([]byte(k), src.keys[k]); err != nil {
			if !unstorable(err) {
				return err
			}
			rep.Lost = append(rep.Lost, fmt.Sprintf("a record (%d-byte key, %d-byte value) that no bucket can hold: %v", len(k), len(src.keys[k]), err))
			continue
		}
		rep.Keys++
	}
	for _, name := range slices.Sorted(maps.Keys(src.subs)) {
		if name == "" {
			rep.Lost = append(rep.Lost, nameless(src.subs[name]))
			continue
		}
		nb, err := b.CreateBucketIfNotExists([]byte(name))
		if err != nil {
			return err
		}
		if err := copyInto(nb, src.subs[name], rep); err != nil {
			return fmt.Errorf("%s: %w", strings.TrimSpace(name), err)
		}
	}
	return nil
}

// nameless says what was lost with a bucket whose name read back empty
// (damage to its key's length): bbolt cannot name a bucket so, and the
// engine knows no such bucket.
func nameless(b *sbucket) string {
	return fmt.Sprintf("a bucket whose name was lost (%d records, %d nested buckets): not copied", len(b.keys), len(b.subs))
}

// unstorable reports whether err is bbolt refusing a record for its
// key's or value's size, which only damage can give one: the record is
// lost, the salvage goes on.
func unstorable(err error) bool {
	return errors.Is(err, berrors.ErrKeyRequired) || errors.Is(err, berrors.ErrKeyTooLarge) || errors.Is(err, berrors.ErrValueTooLarge)
}
