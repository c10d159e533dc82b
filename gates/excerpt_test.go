package gates

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// refLocateJSON is locateJSON as it was before its fast paths (every line
// walked for fences, the facts formatted piece by piece): the reference
// the fast paths are held to, fact text included.
func refLocateJSON(raw []byte, fs *factList) (text []byte, ok bool) {
	if len(raw) > MaxAnswerBytes {
		fs.add("answer", fmt.Sprintf("at most %d bytes", MaxAnswerBytes), fmt.Sprintf("%d bytes", len(raw)))
		return nil, false
	}
	last, found, others := walkFences(raw)
	if found {
		if !last.closed {
			fs.add("answer", "the ```json block opened at line "+itoa(last.line)+" to be closed by a ``` line",
				"no closing fence before the end of the answer")
			return nil, false
		}
		text = raw[last.start:last.end]
		if len(bytes.TrimSpace(text)) == 0 {
			fs.add("answer", "a JSON object in the ```json block at line "+itoa(last.line), "an empty block")
			return nil, false
		}
		return text, true
	}
	trimmed := bytes.TrimSpace(bytes.TrimPrefix(bytes.TrimSpace(raw), []byte("\uFEFF")))
	switch {
	case len(trimmed) == 0:
		fs.add("answer", "a ```json block or a JSON object", "an empty answer")
		return nil, false
	case trimmed[0] == '{':
		return trimmed, true
	case others > 0:
		fs.add("answer", "a ```json block or a JSON object",
			fmt.Sprintf("%d fenced block(s) without a json tag, and the answer starts %s", others, quoteExcerpt(string(trimmed))))
		return nil, false
	case mayStartJSON(trimmed[0]) && json.Valid(trimmed):
		fs.add("answer", "a JSON object", kindOf(trimmed)+" "+rawExcerpt(trimmed))
		return nil, false
	default:
		fs.add("answer", "a ```json block or a JSON object", "the answer starts "+quoteExcerpt(string(trimmed)))
		return nil, false
	}
}

// checkLocateJSON holds locateJSON to refLocateJSON on raw.
func checkLocateJSON(t *testing.T, raw []byte) {
	t.Helper()
	var got, want factList
	gotText, gotOK := locateJSON(raw, &got)
	wantText, wantOK := refLocateJSON(raw, &want)
	if gotOK != wantOK || !bytes.Equal(gotText, wantText) || !reflect.DeepEqual(got.facts(), want.facts()) {
		t.Fatalf("answer %q: got %v %q %v, want %v %q %v", raw, gotOK, gotText, got.facts(), wantOK, wantText, want.facts())
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
