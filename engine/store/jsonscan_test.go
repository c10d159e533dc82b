package store

import "testing"

func TestScannerCount(t *testing.T) {
	for _, tt := range []struct {
		name string
		raw  string
		want int
		ok   bool
	}{
		{"empty", `{"runs":[]}`, 0, true},
		{"three", `{"runs":["r1","r22", "r3"]}`, 3, true},
		{"nested values", `{"runs":[{"a":[1,2]},[3],null,"x"]}`, 4, true},
		{"null", `{"runs":null}`, -1, true},
		{"not an array", `{"runs":"r1"}`, -1, false},
		{"unterminated", `{"runs":["r1",}`, -1, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n := -1
			ok := ScanObject([]byte(tt.raw), func(key []byte, s *Scanner) bool {
				if string(key) == "runs" {
					return s.Count(&n)
				}
				return s.Skip()
			})
			if ok != tt.ok || (ok && n != tt.want) {
				t.Errorf("got %d, %v; want %d, %v", n, ok, tt.want, tt.ok)
			}
		})
	}
}
