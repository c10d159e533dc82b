package gates

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// checkLocateJSON holds the two fast paths of locateJSON to what they
// stand in for on raw: scanFences to the line walk, answerStarts to the
// facts as they were formatted before (piece by piece).
func checkLocateJSON(t *testing.T, raw []byte) {
	t.Helper()
	gl, gf, gn := scanFences(raw)
	wl, wf, wo := walkFences(raw)
	if gl != wl || gf != wf || gn != wo {
		t.Fatalf("answer %q: scanFences gives %+v %v %d, the line walk %+v %v %d", raw, gl, gf, gn, wl, wf, wo)
	}
	for _, others := range []int{0, 1, 12} {
		want := "the answer starts " + quoteExcerpt(string(raw))
		if others > 0 {
			want = fmt.Sprintf("%d fenced block(s) without a json tag, and the answer starts %s", others, quoteExcerpt(string(raw)))
		}
		if got := answerStarts(others, raw); got != want {
			t.Fatalf("answerStarts(%d, %q) = %s, want %s", others, raw, got, want)
		}
	}
}

// randomAnswer returns prose, fences, JSON fragments and odd bytes, so
// that every branch of locateJSON is taken.
func randomAnswer(r *rand.Rand) []byte {
	parts := []string{"I could not produce the JSON block", " sorry", "\n", "\r\n", "```", "```json", "```JSON x", "``", "`",
		"  ", "\t", "{", "}", `{"verdict": "dead"}`, "[1, 2]", `"s"`, "42", "true", "\uFEFF", "日本", "\xff", "\"", "\\",
		"\x7f", "\x00", strings.Repeat("long prose ", 8)}
	var b []byte
	for range r.IntN(12) {
		b = append(b, parts[r.IntN(len(parts))]...)
	}
	return b
}

func TestLocateJSONAgreesWithReference(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for range 30000 {
		checkLocateJSON(t, randomAnswer(r))
	}
	for _, set := range answerSets {
		checkLocateJSON(t, answerSetInput(t, set).Raw)
	}
}

func FuzzLocateJSON(f *testing.F) {
	r := rand.New(rand.NewPCG(23, 24))
	for range 20 {
		f.Add(randomAnswer(r))
	}
	f.Fuzz(checkLocateJSON)
}

// TestPlainASCII holds plainASCII, which tests eight bytes at a time, to
// its byte-by-byte definition: every byte value at every position of
// strings long enough to take the eight-byte path and its tail.
func TestPlainASCII(t *testing.T) {
	def := func(b []byte) bool {
		for _, c := range b {
			if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
				return false
			}
		}
		return true
	}
	for n := 0; n <= 19; n++ {
		for pos := range n {
			for c := range 256 {
				b := bytes.Repeat([]byte("a"), n)
				b[pos] = byte(c)
				if got, want := plainASCII(b), def(b); got != want {
					t.Fatalf("plainASCII(%q) = %v, want %v", b, got, want)
				}
				if got, want := plainASCII(string(b)), def(b); got != want {
					t.Fatalf("plainASCII(string %q) = %v, want %v", b, got, want)
				}
			}
		}
	}
	r := rand.New(rand.NewPCG(25, 26))
	for range 20000 {
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = byte(0x1e + r.IntN(0x63)) // 0x1e..0x80: both edges
		}
		if got, want := plainASCII(b), def(b); got != want {
			t.Fatalf("plainASCII(%q) = %v, want %v", b, got, want)
		}
	}
}

// TestAppendQuoteExcerpt holds appendQuoteExcerpt to quoteExcerpt.
func TestAppendQuoteExcerpt(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for range 20000 {
		b := make([]byte, r.IntN(80))
		for i := range b {
			b[i] = "ab\"\\\n\xe6\x97\xa5\xff"[r.IntN(9)]
		}
		if got, want := string(appendQuoteExcerpt([]byte("x"), b)), "x"+quoteExcerpt(string(b)); got != want {
			t.Fatalf("%q: got %s, want %s", b, got, want)
		}
	}
}

// TestTrimIndent holds trimIndent to bytes.TrimLeft(b, " \t").
func TestTrimIndent(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 28))
	for range 5000 {
		b := make([]byte, r.IntN(8))
		for i := range b {
			b[i] = " \t`x\n\r\v"[r.IntN(7)]
		}
		if got, want := trimIndent(b), bytes.TrimLeft(b, " \t"); !bytes.Equal(got, want) {
			t.Fatalf("trimIndent(%q) = %q, want %q", b, got, want)
		}
	}
}
