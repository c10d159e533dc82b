package agent

import (
	"bytes"
	"testing"
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
