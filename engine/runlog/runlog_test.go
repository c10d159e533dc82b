package runlog

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
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
