package prompt

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/questbox/questbox/engine/runlog"
)

const secret = "sk-live-0123456789"

var redactKeys = []*regexp.Regexp{regexp.MustCompile(`sk-live-[0-9]+`)}

// secretsOf masks its values as the daemon's configured secrets are.
type secretsOf []string

func (s secretsOf) String(x string) string {
	for _, v := range s {
		x = strings.ReplaceAll(x, v, "xxxxx")
	}
	return x
}

// A run's log masks what it is given a line at a time: a key or a
// configured secret split over two writes is masked whole, a line still
// open at Close is masked too, and a line longer than the log holds back
// is cut at a blank, never inside a word.
func TestMaskedLogAcrossWrites(t *testing.T) {
	const token = "tok-S3CRET-42"
	dir := t.TempDir()
	logs, err := runlog.Open(dir, 1<<20, 4<<20)
	if err != nil {
		t.Fatal(err)
	}
	f, err := logs.Create("r1")
	if err != nil {
		t.Fatal(err)
	}
	lg := NewRedaction(redactKeys, secretsOf{token}).Log(f)
	// Past maxHeldLine the long line is written up to its last blank: the
	// start of the key it ends with is kept for the next write.
	long := strings.Repeat("filler ", maxHeldLine/7+10) + secret[:5]
	for _, w := range []string{"first the key sk-li", "ve-0123456789 in two writes\n", "then tok-S3C", "RET-42 the token\n",
		long, secret[5:] + " at the end of a long line\nand ", "the last line, open: " + secret[:7], secret[7:]} {
		if n, err := lg.Write([]byte(w)); n != len(w) || err != nil {
			t.Fatalf("write %q: %d, %v", w, n, err)
		}
	}
	if err := lg.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "r1.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"sk-live", "S3CRET"} {
		if bytes.Contains(got, []byte(s)) {
			t.Errorf("the log keeps %q", s)
		}
	}
	for _, want := range []string{"first the key " + RedactMask + " in two writes\n", "then xxxxx the token\n", "the last line, open: " + RedactMask, "filler " + RedactMask + " at the end of a long line\n"} {
		if !bytes.Contains(got, []byte(want)) {
			t.Errorf("the log lacks %q", want)
		}
	}
	if n := bytes.Count(got, []byte("filler")); n != maxHeldLine/7+10 {
		t.Errorf("the long line kept %d of its %d words", n, maxHeldLine/7+10)
	}
}
