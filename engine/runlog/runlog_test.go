package runlog

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestHeadAndTailKeptCutMarked(t *testing.T) {
	d, err := Open(t.TempDir(), MinPerRun, 4*MinPerRun)
	if err != nil {
		t.Fatal(err)
	}
	l, err := d.Create("r1")
	if err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("0123456789"), 10_000) // 100 000 bytes
	copy(big, "HEAD")
	copy(big[len(big)-4:], "TAIL")
	if _, err := l.Write(big); err != nil {
		t.Fatal(err)
	}
	var live bytes.Buffer
	if err := d.Copy(&live, "r1"); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := d.Copy(&got, "r1"); err != nil {
		t.Fatal(err)
	}
	if got.Len() > MinPerRun {
		t.Errorf("log holds %d bytes, want at most %d", got.Len(), MinPerRun)
	}
	half := (MinPerRun - markerRoom) / 2
	want := string(big[:half]) + CutMarker(int64(len(big)-2*half)) + string(big[len(big)-half:])
	if got.String() != want {
		t.Errorf("log is not head, marker, tail: starts %q, len %d, want len %d", got.String()[:8], got.Len(), len(want))
	}
	if live.String() != want {
		t.Errorf("the log read while open differs from the file: len %d, want %d", live.Len(), len(want))
	}
}

func TestTotalDropsOldestFirst(t *testing.T) {
	dir := t.TempDir()
	d, err := Open(dir, MinPerRun, 3*MinPerRun)
	if err != nil {
		t.Fatal(err)
	}
	full := bytes.Repeat([]byte("x"), MinPerRun)
	for _, r := range []string{"r9", "r10", "r11", "r12", "r13"} {
		l, err := d.Create(r)
		if err != nil {
			t.Fatal(err)
		}
		l.Write(full)
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if s := d.Size(); s > 3*MinPerRun {
			t.Fatalf("after %s the logs hold %d bytes, over the total %d", r, s, 3*MinPerRun)
		}
	}
	for _, r := range []string{"r9", "r10"} {
		if d.Has(r) {
			t.Errorf("%s is kept; the oldest go first", r)
		}
	}
	for _, r := range []string{"r11", "r12", "r13"} {
		if !d.Has(r) {
			t.Errorf("%s was dropped; only the oldest go", r)
		}
	}
	// A reopened directory knows what is there.
	d2, err := Open(dir, MinPerRun, 3*MinPerRun)
	if err != nil {
		t.Fatal(err)
	}
	if d2.Size() != d.Size() {
		t.Errorf("reopened: %d bytes, want %d", d2.Size(), d.Size())
	}
	if err := d2.Copy(io.Discard, "r10"); !errors.Is(err, ErrNotFound) {
		t.Errorf("copy of a dropped log: %v, want ErrNotFound", err)
	}
}

// Follow shows each line as it is written, and returns when the log
// closes; what it showed is the file.
func TestFollowLive(t *testing.T) {
	d, err := Open(t.TempDir(), 1<<20, 2<<20)
	if err != nil {
		t.Fatal(err)
	}
	l, err := d.Create("r1")
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	var shown bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- d.Follow(context.Background(), io.MultiWriter(pw, &shown), "r1")
		pw.Close()
	}()
	lines := bufio.NewReader(pr)
	for _, s := range []string{"one\n", "two\n", "three\n"} {
		l.Write([]byte(s))
		got, err := lines.ReadString('\n')
		if err != nil || got != s {
			t.Fatalf("follower read %q, %v; want %q as it is written", got, err, s)
		}
	}
	go io.Copy(io.Discard, pr)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(filepath.Join(d.Path(), "r1.log"))
	if err != nil {
		t.Fatal(err)
	}
	if shown.String() != string(file) || !strings.HasSuffix(string(file), "three\n") {
		t.Errorf("follow showed %q, the file holds %q", shown.String(), file)
	}
}

// Creating a log does its file I/O (dropping the oldest, creating the
// file) outside the Dir's lock: while one Create is in its file
// operations, other runs create, write, close and sync their logs, and the
// Dir's size is read. (Were that I/O under the lock, the calls in the hook
// would wait for the very Create that called it, and never return.)
func TestCreateDoesNotHoldTheDirDuringFileIO(t *testing.T) {
	d, err := Open(t.TempDir(), MinPerRun, 2*MinPerRun)
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range []string{"r1", "r2"} {
		l, err := d.Create(run)
		if err != nil {
			t.Fatal(err)
		}
		l.Write(bytes.Repeat([]byte("x"), MinPerRun-markerRoom))
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	var inside []string
	d.opening = func(run string) {
		if run != "r3" {
			return
		}
		l, err := d.Create("r4")
		if err != nil {
			t.Errorf("create r4 while r3 opens: %v", err)
			return
		}
		fmt.Fprintf(l, "r4 ran while r3 was opening\n")
		if err := l.Close(); err != nil {
			t.Error(err)
		}
		if err := d.Sync(); err != nil {
			t.Error(err)
		}
		inside = append(inside, fmt.Sprint(d.Size() > 0, d.Live("r3"), d.Has("r4")))
	}
	l3, err := d.Create("r3") // drops r1 to make room (and r4 drops r2)
	if err != nil {
		t.Fatal(err)
	}
	if err := l3.Close(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"true true true"}; !slices.Equal(inside, want) {
		t.Errorf("inside r3's Create: got %v, want %v (size read, r3 live, r4 kept)", inside, want)
	}
	for _, run := range []string{"r1", "r2"} {
		if d.Has(run) {
			t.Errorf("%s is kept, want it dropped to make room", run)
		}
	}
}

// Close leaves the sync to Sync where one sync serves every closed log:
// Unsynced counts them until a Sync, which leaves none.
func TestSyncCoversEveryClosedLog(t *testing.T) {
	d, err := Open(t.TempDir(), MinPerRun, 16*MinPerRun)
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range []string{"r1", "r2", "r3"} {
		l, err := d.Create(run)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(l, "%s\n", run)
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	want := 3
	if closeSyncs {
		want = 0 // each Close synced its own file
	}
	if got := d.Unsynced(); got != want {
		t.Errorf("after three closes: %d unsynced, want %d", got, want)
	}
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
	if got := d.Unsynced(); got != 0 {
		t.Errorf("after Sync: %d unsynced, want 0", got)
	}
}

// SetLimits: a smaller total prunes at the next Create, a larger per-run
// bound cuts later; limits Open would refuse are refused and change
// nothing.
func TestSetLimits(t *testing.T) {
	d, err := Open(t.TempDir(), MinPerRun, 4*MinPerRun)
	if err != nil {
		t.Fatal(err)
	}
	write := func(run string, n int) {
		t.Helper()
		l, err := d.Create(run)
		if err != nil {
			t.Fatal(err)
		}
		l.Write(bytes.Repeat([]byte("x"), n))
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range []string{"r1", "r2", "r3"} {
		write(r, MinPerRun)
	}
	if err := d.SetLimits(MinPerRun, MinPerRun/2); err == nil {
		t.Fatal("a total below one run's bound was accepted")
	}
	if err := d.SetLimits(2*MinPerRun, 2*MinPerRun); err != nil {
		t.Fatal(err)
	}
	write("r4", 2*MinPerRun)
	if s := d.Size(); s > 2*MinPerRun {
		t.Errorf("after the total went down to %d: the logs hold %d bytes", 2*MinPerRun, s)
	}
	if !d.Has("r4") || d.Has("r3") {
		t.Errorf("after the new limits: r4 kept %v, r3 kept %v; want the new log whole and the older ones pruned", d.Has("r4"), d.Has("r3"))
	}
	if err := OpenReadOnly(t.TempDir()).SetLimits(MinPerRun, MinPerRun); err == nil {
		t.Error("SetLimits on a read-only directory was accepted")
	}
}
