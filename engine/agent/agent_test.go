package agent

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// testTimeout is a provider timeout that no passing test comes near; it only
// bounds a broken one.
const testTimeout = time.Minute

func TestEstimateTokens(t *testing.T) {
	tests := []struct {
		name   string
		prompt string
		output []byte
		want   int
	}{
		{"empty", "", nil, 0},
		{"rounds down", "abc", nil, 0},
		{"prompt only", "abcdefgh", nil, 2},
		{"both", "abcd", []byte("efghijkl"), 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EstimateTokens(tt.prompt, tt.output); got != tt.want {
				t.Errorf("EstimateTokens(%q, %q): got %d, want %d", tt.prompt, tt.output, got, tt.want)
			}
		})
	}
}

func TestCapBuffer(t *testing.T) {
	tests := []struct {
		name          string
		max           int64
		writes        []string
		want          string
		wantTruncated bool
	}{
		{"under", 10, []string{"abc", "def"}, "abcdef", false},
		{"exact", 6, []string{"abc", "def"}, "abcdef", false},
		{"split write", 4, []string{"abc", "def"}, "abcd", true},
		{"after full", 3, []string{"abc", "def", "ghi"}, "abc", true},
		{"empty writes", 3, []string{"", ""}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newCapBuffer(tt.max)
			for _, w := range tt.writes {
				n, err := b.Write([]byte(w))
				if n != len(w) || err != nil {
					t.Fatalf("Write(%q): got %d, %v; want %d, nil (the source must be drained)", w, n, err, len(w))
				}
			}
			if got := b.bytes(); !bytes.Equal(got, []byte(tt.want)) {
				t.Errorf("bytes: got %q, want %q", got, tt.want)
			}
			if b.truncated != tt.wantTruncated {
				t.Errorf("truncated: got %v, want %v", b.truncated, tt.wantTruncated)
			}
			if int64(cap(b.buf)) > tt.max {
				t.Errorf("capacity %d exceeds the cap %d", cap(b.buf), tt.max)
			}
		})
	}
}

// ReadFrom (what a command's stdout is read with) keeps what Write keeps,
// drains the source past the cap, and holds memory in proportion to the
// answer, not to the cap.
func TestCapBufferReadFrom(t *testing.T) {
	long := strings.Repeat("0123456789", 3000) // 30,000 bytes: several chunks
	tests := []struct {
		name          string
		max           int64
		src           io.Reader
		want          string
		wantTruncated bool
		wantCap       int // at most
	}{
		{"small answer, large cap", 1 << 20, strings.NewReader("no JSON"), "no JSON", false, 16},
		{"byte by byte", 1 << 20, iotest.OneByteReader(strings.NewReader("abc")), "abc", false, 16},
		{"several chunks", 1 << 20, strings.NewReader(long), long, false, 2 * len(long)},
		{"cut", 25_000, strings.NewReader(long), long[:25_000], true, 25_000},
		{"cut at a chunk's end", readChunk, strings.NewReader(long), long[:readChunk], true, readChunk},
		{"exact", int64(len(long)), strings.NewReader(long), long, false, len(long)},
		{"empty", 100, strings.NewReader(""), "", false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newCapBuffer(tt.max)
			src := &countingReader{r: tt.src}
			n, err := b.ReadFrom(src)
			if err != nil || n != src.n {
				t.Fatalf("ReadFrom: got %d, %v; want %d (all of it), nil", n, err, src.n)
			}
			if _, err := src.Read(make([]byte, 1)); err != io.EOF {
				t.Errorf("the source was not drained: %v", err)
			}
			if got := b.bytes(); string(got) != tt.want {
				t.Errorf("bytes: got %d bytes, want %d", len(got), len(tt.want))
			}
			if b.truncated != tt.wantTruncated {
				t.Errorf("truncated: got %v, want %v", b.truncated, tt.wantTruncated)
			}
			if got := cap(b.bytes()); got > tt.wantCap {
				t.Errorf("the kept answer holds %d bytes of memory, want at most %d", got, tt.wantCap)
			}
		})
	}
	errBroken := errors.New("broken pipe")
	b := newCapBuffer(100)
	if _, err := b.ReadFrom(iotest.ErrReader(errBroken)); !errors.Is(err, errBroken) {
		t.Errorf("ReadFrom of a failing source: got %v, want %v", err, errBroken)
	}
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func TestTailBuffer(t *testing.T) {
	b := &tailBuffer{max: 8}
	for range 100 {
		b.Write([]byte("0123456789\n"))
	}
	b.Write([]byte("last words\n"))
	if got, want := b.suffix(), ": t words"; got != want {
		t.Errorf("suffix: got %q, want %q (the last 8 bytes, trimmed)", got, want)
	}
	if len(b.buf) > 2*b.max {
		t.Errorf("tail buffer holds %d bytes, want at most %d", len(b.buf), 2*b.max)
	}
	if got := (&tailBuffer{max: 8}).suffix(); got != "" {
		t.Errorf("suffix of empty stderr: got %q, want \"\"", got)
	}
}

// A short answer costs one allocation, its own bytes at their size, and a
// silent stderr none: the chunks the pipes are read with are pooled, not
// allocated per run (a busy tick has a thousand runs).
func TestPipeReadsAllocateTheAnswerOnly(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts under the race detector are its own")
	}
	answer := strings.Repeat("a verdict ", 30)
	src := strings.NewReader(answer)
	var got []byte
	allocs := testing.AllocsPerRun(50, func() {
		src.Reset(answer)
		b := capBuffer{max: 1 << 20}
		if _, err := b.ReadFrom(src); err != nil {
			t.Fatal(err)
		}
		got = b.bytes()
	})
	if string(got) != answer {
		t.Fatalf("kept %d bytes, want the %d of the answer", len(got), len(answer))
	}
	if allocs > 1 {
		t.Errorf("reading a %d-byte answer allocated %.0f times, want 1 (the answer)", len(answer), allocs)
	}
	empty := strings.NewReader("")
	allocs = testing.AllocsPerRun(50, func() {
		b := tailBuffer{max: stderrKeep}
		if _, err := b.ReadFrom(empty); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 0 {
		t.Errorf("reading an empty stderr allocated %.0f times, want none", allocs)
	}
}
