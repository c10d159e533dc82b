package prompt

import (
	"strings"
	"testing"
)

func TestCutEvidence(t *testing.T) {
	for _, tc := range []struct {
		ev    string
		limit int
	}{{strings.Repeat("a", 100), 100}, {strings.Repeat("a", 1000), 200}, {strings.Repeat("é", 500), 201}} {
		got := cutEvidence(tc.ev, tc.limit)
		switch {
		case len(tc.ev) <= tc.limit && got != tc.ev:
			t.Errorf("cut %q that fits", got)
		case len(tc.ev) > tc.limit && (len(got) > tc.limit || !strings.Contains(got, "[…cut: ")):
			t.Errorf("cut to %d bytes (limit %d): %q", len(got), tc.limit, got)
		case !utf8Valid(got):
			t.Errorf("cut mid-character: %q", got)
		}
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }
