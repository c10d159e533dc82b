// Package runlog keeps the logs of agent runs (docs/design.md, "Runs and
// their logs"): one file per run, <dir>/<run>.log, holding what the run wrote
// (a command provider's stderr as it came, then the answer and how the run
// ended).
//
// The logs are bounded twice. A run keeps at most PerRun bytes: its first
// half goes to the file as it comes (append-only, never synced before the
// run ends), its last half is held in memory and appended at the end after
// a line that says how many bytes were cut between them. All logs together
// keep at most Total bytes: every run in flight reserves PerRun, and
// creating a log deletes the oldest closed ones (lowest run number) until
// the reservation fits.
//
// Durability: a closed log is durable once a [Dir.Sync] that began after
// its Close has returned. On Linux Close does not sync: Sync makes every
// log closed since the last Sync durable with one syncfs(2) of the
// directory's file system, so the results of a busy tick, committed
// together, share one sync instead of one fsync each. The engine calls
// Sync before the group commit that records those runs' results, so a
// result is committed only after its log is durable. Elsewhere Close syncs
// its own file, as before, and Sync has nothing to do. A crash loses at
// most the tail of the runs in flight (and of closed runs whose results
// are not committed yet): the head they had written is in the file.
//
// They are files, not store records, so that the store stays small.
//
// A [*Dir] and its [*Log]s are safe for concurrent use. No file I/O
// happens under the Dir's lock: creating one run's log never waits for
// another run's file operations. A Log's Write never blocks on readers: a
// follower that falls behind the memory it holds is told how many bytes it
// missed.
package runlog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// ErrNotFound is returned when a run has no log (it never had one, or it
// was dropped to keep the total under its bound).
var ErrNotFound = errors.New("no log for this run")

// MinPerRun is the least a run's log may keep.
const MinPerRun = 4 << 10

// markerRoom is what PerRun leaves for the cut marker.
const markerRoom = 64

// chunk is the most a follower reads at once.
const chunk = 32 << 10

// CutMarker is the line that stands for n bytes cut from a log.
func CutMarker(n int64) string {
	return "\n[… " + strconv.FormatInt(n, 10) + " bytes cut …]\n"
}

// Dir is a directory of run logs.
type Dir struct {
	path string

	mu sync.Mutex // guards perRun, total, live, closed, closedSum, removing and unsynced
	// perRun and total are the bounds (Open, SetLimits); 0 on a
	// read-only Dir.
	perRun, total int64
	live          map[string]*Log  // run id -> its open log
	closed        map[string]int64 // run id -> size of its closed log
	// removing holds the closed logs a Create is deleting (outside mu).
	removing map[string]bool
	// unsynced counts the logs closed since the last Sync began (only
	// where Close leaves the sync to Sync: closeSyncs is false).
	unsynced int
	// syncMu serialises Sync, so that a Sync that finds nothing unsynced
	// returns only after the one in progress made its logs durable.
	syncMu sync.Mutex
	// opening, when set (tests), is called by Create just before it
	// creates run's file.
	opening func(run string)
	// closedSum is the sum of closed's sizes, kept as they change so that
	// a Create that needs no pruning does not walk every log (a busy box
	// keeps thousands, and creates a thousand in a tick).
	closedSum int64
	// oldest lists the closed logs' runs for pruning, oldest first once
	// sorted (sorted says whether it is). Logs close in about the order
	// their runs started, so appending mostly keeps it sorted and a Create
	// that prunes takes from the front instead of sorting every closed log
	// (a busy tick creates a thousand). An entry whose run is no longer in
	// closed is stale and skipped.
	oldest []string
	sorted bool
}

// setClosed records run's closed log of size bytes. d.mu is held.
func (d *Dir) setClosed(run string, size int64) {
	d.dropClosed(run)
	if n := len(d.oldest); n > 0 && lessRun(run, d.oldest[n-1]) {
		d.sorted = false
	}
	d.oldest = append(d.oldest, run)
	d.closed[run] = size
	d.closedSum += size
}

// dropClosed forgets run's closed log. d.mu is held.
func (d *Dir) dropClosed(run string) {
	d.closedSum -= d.closed[run]
	delete(d.closed, run)
}

// Open opens (creating it if needed) the log directory path, with at most
// perRun bytes per run and total bytes in all. It does not prune: a
// smaller total takes effect at the next Create.
func Open(path string, perRun, total int64) (*Dir, error) {
	if err := checkLimits(perRun, total); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(path, 0o750); err != nil {
		return nil, fmt.Errorf("run logs: %w", err)
	}
	d := &Dir{path: path, perRun: perRun, total: total, live: map[string]*Log{}, closed: map[string]int64{}, removing: map[string]bool{}}
	ents, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("run logs: %w", err)
	}
	for _, e := range ents {
		run, ok := strings.CutSuffix(e.Name(), ".log")
		if !ok || !e.Type().IsRegular() {
			continue
		}
		if info, err := e.Info(); err == nil {
			d.setClosed(run, info.Size())
		}
	}
	return d, nil
}

// SetLimits changes the bounds of a Dir that Open opened, as Open checks
// them: the logs open now keep the room they were created with, the next
// Create cuts at perRun and prunes to the new total. The daemon's reload
// (SIGHUP) calls it.
func (d *Dir) SetLimits(perRun, total int64) error {
	if err := checkLimits(perRun, total); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.perRun == 0 {
		return errors.New("run logs: the limits of a read-only directory cannot be set")
	}
	d.perRun, d.total = perRun, total
	return nil
}

func checkLimits(perRun, total int64) error {
	if perRun < MinPerRun {
		return fmt.Errorf("run logs: %d bytes per run is below the minimum %d", perRun, MinPerRun)
	}
	if total < perRun {
		return fmt.Errorf("run logs: a total of %d bytes is below the %d bytes of one run", total, perRun)
	}
	return nil
}

// OpenReadOnly opens an existing log directory to read it; a missing one
// reads as empty. Create must not be called on it.
func OpenReadOnly(path string) *Dir {
	return &Dir{path: path, live: map[string]*Log{}, closed: map[string]int64{}, removing: map[string]bool{}}
}

// Path is the directory.
func (d *Dir) Path() string { return d.path }

func (d *Dir) file(run string) string { return filepath.Join(d.path, run+".log") }

// validRun keeps run ids to plain file names.
func validRun(run string) bool {
	return run != "" && !strings.ContainsAny(run, "/\\\x00") && run != "." && run != ".."
}

// lessRun orders runs by number, then by name.
func lessRun(a, b string) bool {
	if na, nb := runNumber(a), runNumber(b); na != nb {
		return na < nb
	}
	return a < b
}

// runNumber orders runs: r12 is 12; anything else sorts first.
func runNumber(run string) int64 {
	n, _ := strconv.ParseInt(strings.TrimPrefix(run, "r"), 10, 64)
	return n
}

// Size is the bytes all logs hold on disk now (closed ones) plus what the
// open ones have written to their files.
func (d *Dir) Size() int64 {
	d.mu.Lock()
	n := d.closedSum
	live := make([]*Log, 0, len(d.live))
	for _, l := range d.live {
		live = append(live, l)
	}
	d.mu.Unlock()
	// A Log's lock is held across its file writes: never wait for one
	// under d.mu.
	for _, l := range live {
		l.mu.Lock()
		n += l.head
		l.mu.Unlock()
	}
	return n
}

// Create starts the log of run, deleting the oldest closed logs until the
// logs in flight, this one included, fit in the total at PerRun each.
// The bookkeeping is done under the Dir's lock, the file operations
// (deleting the oldest, creating this one) after it is released: runs
// starting together do not queue behind each other's file I/O.
func (d *Dir) Create(run string) (*Log, error) {
	if !validRun(run) {
		return nil, fmt.Errorf("run logs: %q is not a run id", run)
	}
	d.mu.Lock()
	if d.perRun == 0 {
		d.mu.Unlock()
		return nil, errors.New("BUG: runlog: Create on a read-only Dir")
	}
	if _, ok := d.live[run]; ok {
		d.mu.Unlock()
		return nil, fmt.Errorf("run logs: %s is already open", run)
	}
	if d.removing[run] {
		d.mu.Unlock()
		return nil, fmt.Errorf("run logs: the old log of %s is being dropped", run)
	}
	d.dropClosed(run)
	drop := d.pruneLocked(d.perRun * int64(len(d.live)+1))
	half := (d.perRun - markerRoom) / 2
	// Until its file is open the log has written nothing: readers (Copy,
	// Follow, Size) find it empty and never touch its file.
	l := &Log{d: d, run: run, headMax: half, tailMax: half, changed: make(chan struct{})}
	d.live[run] = l
	d.mu.Unlock()

	err := d.remove(drop)
	var f *os.File
	if err == nil {
		if d.opening != nil {
			d.opening(run)
		}
		f, err = os.OpenFile(d.file(run), os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o640)
		if err != nil {
			err = fmt.Errorf("run logs: %w", err)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.closed = true
		close(l.changed)
		l.changed = make(chan struct{})
		d.mu.Lock()
		delete(d.live, run)
		d.mu.Unlock()
		return nil, err
	}
	l.f = f
	return l, nil
}

// dropped is a closed log being deleted to make room.
type dropped struct {
	run  string
	size int64
}

// pruneLocked takes the oldest closed logs out of the books until they
// and reserved fit in the total, and marks them being removed: the caller
// deletes their files (remove). d.mu is held.
func (d *Dir) pruneLocked(reserved int64) []dropped {
	if d.closedSum+reserved <= d.total {
		return nil
	}
	if !d.sorted || len(d.oldest) > 2*len(d.closed)+64 {
		// Drop the stale entries (and duplicates), then sort.
		live := d.oldest[:0]
		seen := make(map[string]bool, len(d.closed))
		for _, r := range d.oldest {
			if _, ok := d.closed[r]; ok && !seen[r] {
				seen[r] = true
				live = append(live, r)
			}
		}
		clear(d.oldest[len(live):])
		d.oldest = live
		slices.SortFunc(d.oldest, func(a, b string) int {
			switch {
			case lessRun(a, b):
				return -1
			case lessRun(b, a):
				return 1
			}
			return 0
		})
		d.sorted = true
	}
	var drop []dropped
	for len(d.oldest) > 0 && d.closedSum+reserved > d.total {
		r := d.oldest[0]
		d.oldest = d.oldest[1:]
		if _, ok := d.closed[r]; !ok {
			continue // stale
		}
		drop = append(drop, dropped{r, d.closed[r]})
		d.removing[r] = true
		d.dropClosed(r)
	}
	return drop
}

// remove deletes the files of the logs pruneLocked took out, without
// d.mu. A log that cannot be deleted goes back in the books, and the
// first such error is returned.
func (d *Dir) remove(drop []dropped) error {
	if len(drop) == 0 {
		return nil
	}
	var first error
	var kept []dropped
	for _, x := range drop {
		if err := os.Remove(d.file(x.run)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			kept = append(kept, x)
			if first == nil {
				first = fmt.Errorf("run logs: dropping the oldest: %w", err)
			}
		}
	}
	d.mu.Lock()
	for _, x := range drop {
		delete(d.removing, x.run)
	}
	for _, x := range kept {
		d.setClosed(x.run, x.size)
	}
	d.mu.Unlock()
	return first
}

// Sync makes every log closed before it was called durable (see the
// package doc): on Linux one syncfs(2) of the directory's file system when
// a log closed since the last Sync, else nothing. On an error the logs
// stay counted as unsynced, for the next Sync to try again.
func (d *Dir) Sync() error {
	d.syncMu.Lock()
	defer d.syncMu.Unlock()
	d.mu.Lock()
	n := d.unsynced
	d.unsynced = 0
	d.mu.Unlock()
	if n == 0 {
		return nil
	}
	if err := syncFS(d.path); err != nil {
		d.mu.Lock()
		d.unsynced += n
		d.mu.Unlock()
		return fmt.Errorf("run logs: syncing %d closed logs: %w", n, err)
	}
	return nil
}

// Unsynced is how many closed logs wait for a Sync.
func (d *Dir) Unsynced() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.unsynced
}

// Live reports whether run's log is open (its run is in flight).
func (d *Dir) Live(run string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.live[run]
	return ok
}

// Has reports whether run has a log, open or on disk.
func (d *Dir) Has(run string) bool {
	if !validRun(run) {
		return false
	}
	if d.Live(run) {
		return true
	}
	_, err := os.Stat(d.file(run))
	return err == nil
}

// Copy writes run's log to w: what its file holds, or, while it is open,
// what it has written so far (head, and the tail it holds, the cut
// marked). It returns ErrNotFound if there is none.
func (d *Dir) Copy(w io.Writer, run string) error {
	return d.copy(context.Background(), w, run, false)
}

// Follow is Copy that, while the run is in flight, keeps writing what it
// writes until its log closes or ctx ends. After each chunk it flushes w
// if w has a Flush method (an http.Flusher). A run that is not in flight
// is copied and Follow returns at once.
func (d *Dir) Follow(ctx context.Context, w io.Writer, run string) error {
	return d.copy(ctx, w, run, true)
}

func (d *Dir) copy(ctx context.Context, w io.Writer, run string, follow bool) error {
	if !validRun(run) {
		return fmt.Errorf("run %q: %w", run, ErrNotFound)
	}
	d.mu.Lock()
	l := d.live[run]
	d.mu.Unlock()
	if l == nil {
		f, err := os.Open(d.file(run))
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("run %s: %w", run, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("run logs: %w", err)
		}
		defer f.Close()
		_, err = io.Copy(w, f)
		flush(w)
		return err
	}
	var pos int64
	buf := make([]byte, chunk)
	for {
		n, skipped, next, done, wait, err := l.read(pos, buf)
		if err != nil {
			return err
		}
		if skipped > 0 {
			if _, err := io.WriteString(w, CutMarker(skipped)); err != nil {
				return err
			}
		}
		if n > 0 {
			if _, err := w.Write(buf[:n]); err != nil {
				return err
			}
		}
		pos = next
		if n > 0 || skipped > 0 {
			continue
		}
		if done {
			flush(w)
			return nil
		}
		if !follow {
			// The run is in flight: what it has so far, its cut marked
			// as the file will mark it.
			flush(w)
			return nil
		}
		flush(w)
		select {
		case <-wait:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func flush(w io.Writer) {
	if f, ok := w.(interface{ Flush() }); ok {
		f.Flush()
	}
}

// Log is the log of one run in flight. Its Write never fails (a log that
// cannot be written must not fail the agent's run): the first error is
// kept and Close returns it.
type Log struct {
	d   *Dir
	run string

	mu      sync.Mutex // guards everything below
	f       *os.File   // nil once closed
	headMax int64
	tailMax int64
	head    int64  // bytes in the file (the head)
	tail    []byte // the last bytes past the head (at least tailMax of them, once there are)
	written int64  // bytes written in all
	closed  bool
	err     error
	// changed is closed (and replaced) at every write and at Close:
	// followers wait on it.
	changed chan struct{}
}

// Write appends p to the log.
func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return 0, fs.ErrClosed
	}
	n := len(p)
	l.written += int64(n)
	if room := l.headMax - l.head; room > 0 {
		h := p[:min(int64(len(p)), room)]
		if _, err := l.f.Write(h); err != nil && l.err == nil {
			l.err = err
		}
		l.head += int64(len(h))
		p = p[len(h):]
	}
	if len(p) > 0 {
		l.tail = append(l.tail, p...)
		if int64(len(l.tail)) > 2*l.tailMax {
			// Compact only now and then, keeping appends amortised O(1).
			l.tail = append(l.tail[:0], l.tail[int64(len(l.tail))-l.tailMax:]...)
		}
	}
	close(l.changed)
	l.changed = make(chan struct{})
	return n, nil
}

// Written is how many bytes were written to the log, before any cut.
func (l *Log) Written() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.written
}

// Close appends the kept tail after a cut marker and closes the file; the
// log is durable after the next Sync (see the package doc; where Sync
// cannot share one sync, Close syncs the file itself). It returns the
// first error the log met.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	if int64(len(l.tail)) > l.tailMax {
		l.tail = append([]byte(nil), l.tail[int64(len(l.tail))-l.tailMax:]...)
	}
	var out []byte
	if cut := l.written - l.head - int64(len(l.tail)); cut > 0 {
		out = append(out, CutMarker(cut)...)
	}
	out = append(out, l.tail...)
	err := l.err
	if len(out) > 0 {
		if _, werr := l.f.Write(out); err == nil {
			err = werr
		}
	}
	if closeSyncs {
		if serr := l.f.Sync(); err == nil {
			err = serr
		}
	}
	size := l.head + int64(len(out))
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()

	d := l.d
	d.mu.Lock()
	delete(d.live, l.run)
	d.setClosed(l.run, size)
	if !closeSyncs {
		d.unsynced++
	}
	d.mu.Unlock()
	if err != nil {
		return fmt.Errorf("run log %s: %w", l.run, err)
	}
	return nil
}

// read copies into buf what the log holds from logical position pos (a
// count of bytes written): from the file while pos is in the head, from
// the tail in memory past it. skipped is how many bytes before the held
// tail a reader missed (it continues after them); next is the position
// after what was copied. done means the log is closed and pos is at its
// end; wait is closed at the next change.
func (l *Log) read(pos int64, buf []byte) (n int, skipped, next int64, done bool, wait <-chan struct{}, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	wait = l.changed
	if pos < l.head {
		want := min(int64(len(buf)), l.head-pos)
		var f *os.File
		if l.f != nil {
			f = l.f
		} else {
			if f, err = os.Open(l.d.file(l.run)); err != nil {
				return 0, 0, pos, false, wait, fmt.Errorf("run logs: %w", err)
			}
			defer f.Close()
		}
		n, err = f.ReadAt(buf[:want], pos)
		if err == io.EOF {
			err = nil
		}
		return n, 0, pos + int64(n), false, wait, err
	}
	start := l.written - int64(len(l.tail)) // logical position of tail[0]
	if pos < start {
		skipped, pos = start-pos, start
	}
	n = copy(buf, l.tail[pos-start:])
	next = pos + int64(n)
	done = l.closed && next == l.written
	return n, skipped, next, done, wait, nil
}
