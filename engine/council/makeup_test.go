package council

import "testing"

func TestParseCouncil(t *testing.T) {
	for _, c := range []struct {
		in   string
		r, j int
		ok   bool
	}{
		{"reviewer:2,judge:1", 2, 1, true},
		{" judge:3 ", 0, 3, true},
		{"", 0, 0, true},
		{"reviewer:2,reviewer:1", 0, 0, false},
		{"owner:1", 0, 0, false},
		{"judge:x", 0, 0, false},
		{"judge:-1", 0, 0, false},
	} {
		r, j, err := Parse(c.in)
		if (err == nil) != c.ok || r != c.r || j != c.j {
			t.Errorf("Parse(%q): got %d, %d, %v, want %d, %d, ok=%v", c.in, r, j, err, c.r, c.j, c.ok)
		}
	}
}
