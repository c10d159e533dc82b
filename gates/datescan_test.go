package gates

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"
)

// dateFragments are the pieces random texts for the dates scanner are made
// of: parts of every form, near misses, and what sits around them.
var dateFragments = []string{
	"2025", "2026", "0000", "1989", "2019", "12025", "1", "2", "02", "12", "31", "30", "29", "123", "0", "9",
	"-", "/", ".", ",", " ", "  ", "\t", "\n", "\f", "\r", "\v", "\u00a0",
	"st", "ND", "Rd", "th", "TH", "s",
	"Dec", "dec.", "DECEMBER", "december", "sept", "Sept.", "sep", "janu", "Jan", "may", "MAYday", "feb", "Febr", "august", "Mar", "oct",
	"令和", "平成", "元", "年", "月", "日", "令", "成",
	"x", "_", "a", "on", "é", "\xff", "\xe4", "ſ", "\u212a", "㋿", "２０２５", "１２", "ｄｅｃ",
}

func randomDateText(r *rand.Rand) string {
	var b strings.Builder
	for n := r.IntN(24); n >= 0; n-- {
		b.WriteString(dateFragments[r.IntN(len(dateFragments))])
	}
	return b.String()
}

// checkDateScan compares scanDates with the dates regex (FindAllStringIndex
// over the NFKC text, as DatesCheck used it) and every match's day with
// ParseDate: the regex and ParseDate are the definition.
func checkDateScan(t *testing.T, re *regexp.Regexp, text string) {
	t.Helper()
	s := norm.NFKC.String(text)
	want := re.FindAllStringIndex(s, -1)
	var got [][]int
	scanDates(s, func(i, j int, d Date, ok bool) {
		got = append(got, []int{i, j})
		pd, err := ParseDate(s[i:j], Date{})
		if (err == nil) != ok || ok && pd != d {
			t.Errorf("text %q, match %q: got %v ok=%v, want ParseDate's %v err=%v", text, s[i:j], d, ok, pd, err)
		}
	})
	if !slices.EqualFunc(got, want, slices.Equal[[]int]) {
		t.Errorf("text %q: got matches %v, want the regex's %v", text, got, want)
	}
}

func TestDateScanMatchesRegex(t *testing.T) {
	re := Dates("evidence", 0, true).re
	for _, s := range []string{
		"", "2026-12-02", "2026/12/2", "2026.1.02", "2026-12/02", "2026-13-01", "2026-02-30", "12026-12-02", "2026-12-023",
		"2026-12-02x", "x2026-12-02", "_2026-12-02", "é2026-12-02", "2 Dec 2026", "2nd December, 2026", "2 Dec, 2026",
		"December 2, 2026", "Dec 2 2026", "Dec. 2nd, 2026", "Sept. 6th, 2025", "sept 6 2025", "Septe 6 2025", "janu 1 2025",
		"MAYday 1 2025", "1 mayday 2025", "2 st Dec 2026", "2ndDec 2026", "Dec 2, 20266", "Dec 2, 2026a", "Dec 123 2026",
		"31 Feb 2024", "29 Feb 2024", "29 Feb 2023", "2026年12月2日", "12026年1月1日", "abc2025年1月1日", "0000年1月1日",
		"令和8年12月2日", "令和元年5月1日", "令和元年4月30日", "平成31年4月30日", "平成31年5月1日", "平成元年1月7日", "令和123年1月1日",
		"令和0年1月1日", "㋿8年12月2日", "２０２６-１２-０２", "2\t\fDec\r\n 2026", "2\vDec 2026", "Dec\u00a02 2026",
		"1 ſep 2025", "\u212aDec", "on 2026-11-30; 2 Dec 2026 and Dec 3 2026.", "2026-11-30-2026", "1999.12.31.2000",
	} {
		checkDateScan(t, re, s)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		checkDateScan(t, re, randomDateText(r))
		if t.Failed() {
			return
		}
	}
}

func FuzzDateScan(f *testing.F) {
	for _, s := range []string{"2026-12-02", "2nd December, 2026", "Dec. 2nd, 2026", "令和元年5月1日", "abc2025年1月1日", "2 st Dec 2026"} {
		f.Add(s)
	}
	re := Dates("evidence", 0, true).re
	f.Fuzz(func(t *testing.T, s string) {
		checkDateScan(t, re, s)
	})
}
