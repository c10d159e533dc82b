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

// StrLike and StrOf read what Str reads, whatever the caller expected,
// and take the caller's own string, allocating nothing, when the string
// read is the one expected.
func TestScannerStrLikeReadsWhatStrReads(t *testing.T) {
	known := []string{"pending", "running", "n7"}
	for _, raw := range []string{`{"v":"n7"}`, `{"v":"n8"}`, `{"v":""}`, `{"v":null}`, `{"v":"n\u0037"}`, `{"v":"ru\"n"}`,
		`{"v":"\xff"}`, `{"v":7}`, `{"v":"pending"}`, `{"v":"pend`} {
		read := func(f func(s *Scanner, v *string) bool) (string, bool) {
			v := "before"
			ok := ScanObject([]byte(raw), func(key []byte, s *Scanner) bool { return f(s, &v) })
			return v, ok
		}
		want, wok := read(func(s *Scanner, v *string) bool { return s.Str(v) })
		for name, f := range map[string]func(s *Scanner, v *string) bool{
			"StrLike n7":    func(s *Scanner, v *string) bool { return s.StrLike(v, "n7") },
			"StrLike empty": func(s *Scanner, v *string) bool { return s.StrLike(v, "") },
			"StrOf":         func(s *Scanner, v *string) bool { return s.StrOf(v, known) },
		} {
			if got, ok := read(f); got != want || ok != wok {
				t.Errorf("%s of %s: got %q, %v; Str read %q, %v", name, raw, got, ok, want, wok)
			}
		}
	}
	raw := []byte(`{"a":"n7","b":"running"}`)
	var a, b string
	skipped := testing.AllocsPerRun(100, func() {
		ScanObject(raw, func(key []byte, s *Scanner) bool { return s.Skip() })
	})
	read := func(a, b *string, like bool) float64 {
		return testing.AllocsPerRun(100, func() {
			ScanObject(raw, func(key []byte, s *Scanner) bool {
				switch {
				case !like:
					return s.Str(a)
				case string(key) == "a":
					return s.StrLike(a, known[2])
				}
				return s.StrOf(b, known)
			})
		})
	}
	if allocs := read(&a, &b, true); allocs != skipped || a != "n7" || b != "running" {
		t.Errorf("reading the strings expected: %v allocations more than skipping them, %q and %q; want none, n7 and running", allocs-skipped, a, b)
	}
	if allocs := read(&a, &b, false); allocs != skipped+2 {
		t.Errorf("reading the strings with Str: %v allocations more than skipping them, want 2 (the check above would prove nothing)", allocs-skipped)
	}
}
