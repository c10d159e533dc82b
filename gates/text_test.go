package gates

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

func TestNormalizeVariants(t *testing.T) {
	tests := []struct {
		name string
		fn   func(string) string
		in   string
		want string
	}{
		{"collapse space", CollapseSpace, " a \t\n b\u3000c ", "a b c"},
		{"collapse keeps format chars", CollapseSpace, "a\u200bb", "a\u200bb"},
		{"strip format", StripFormat, "a\u200bb\u200c\u200d\u2060\ufeff\u00adc", "abc"},
		{"text key", NormalizeText, "  Ｔｒｙ\u200b  TESSERACT ", "try tesseract"},
		{"quote key keeps format", QuoteKey, "Ｔｒｙ\u200b  X", "try\u200b x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.fn(tt.in); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestContainsQuote(t *testing.T) {
	tests := []struct {
		name          string
		source, quote string
		want          bool
	}{
		{"exact", "the cat sat", "cat sat", true},
		{"spaces", "the  cat\n sat", "cat sat", true},
		{"case", "The Cat", "the cat", true},
		{"width", "価格は１００円", "100円", true},
		{"zero-width in source only", "pa\u200bss", "pass", true},
		{"soft hyphen in source only", "infor\u00admation", "information", true},
		{"zero-width in quote only", "pass", "pa\u200bss", false},
		{"zero-width in both, same place", "pa\u200bss", "pa\u200bss", true},
		{"different zero-width in both", "pa\u200css", "pa\u200bss", false},
		{"bom at quote start", "pass", "\ufeffpass", false},
		{"absent", "the cat sat", "the dog", false},
		{"empty quote", "anything", "  ", false},
		{"only zero-width quote", "anything", "\u200b", false},
		{"homoglyph", "pass", "pаss", false}, // Cyrillic а
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ContainsQuote(tt.source, tt.quote); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestMissingTokens(t *testing.T) {
	tests := []struct {
		name   string
		text   string
		tokens []string
		want   []string
	}{
		{"none missing", "Alice met Bob in Tokyo", []string{"alice", "Bob", "TOKYO"}, nil},
		{"one missing", "Alice met Bob", []string{"Alice", "Carol"}, []string{"Carol"}},
		{"blank ignored", "x", []string{" ", ""}, nil},
		{"width", "ＡＢＣ corp", []string{"ABC"}, nil},
		{"zero-width token", "Bob", []string{"B\u200bob"}, []string{"B\u200bob"}},
		{"order kept", "z", []string{"b", "a"}, []string{"b", "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MissingTokens(tt.text, tt.tokens); !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestHTMLText(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "a < b", "a < b"},
		{"tags", "<p>a<b>b</b></p>", " a b  "},
		{"entities", "<p>caf&eacute; &amp; tea</p>", " café & tea "},
		{"script dropped", "x<script>hidden()</script>y", "x  y"},
		{"style upper case", "x<STYLE>p{}</Style>y", "x  y"},
		{"comment", "x<!-- hidden -->y", "x y"},
		{"unclosed tag", "x<p", "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := HTMLText(tt.in); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseDate(t *testing.T) {
	ref := Date{2026, 12, 2} // a Wednesday
	tests := []struct {
		name string
		in   string
		want Date
		err  bool
	}{
		{"iso", "2026-12-02", Date{2026, 12, 2}, false},
		{"slashes", "2026/12/02", Date{2026, 12, 2}, false},
		{"dots short", "2026.1.5", Date{2026, 1, 5}, false},
		{"day month year", "2 Dec 2026", Date{2026, 12, 2}, false},
		{"ordinal long month", "2nd December 2026", Date{2026, 12, 2}, false},
		{"month day comma year", "December 2, 2026", Date{2026, 12, 2}, false},
		{"abbrev with dot", "Sept. 3rd, 2026", Date{2026, 9, 3}, false},
		{"full width digits", "２０２６-１２-０２", Date{2026, 12, 2}, false},
		{"kanji", "2026年12月2日", Date{2026, 12, 2}, false},
		{"reiwa", "令和8年12月2日", Date{2026, 12, 2}, false},
		{"reiwa first year", "令和元年5月1日", Date{2019, 5, 1}, false},
		{"heisei", "平成31年4月30日", Date{2019, 4, 30}, false},
		{"reiwa before its start", "令和元年4月30日", Date{}, true},
		{"today", "Today", ref, false},
		{"yesterday", "yesterday", Date{2026, 12, 1}, false},
		{"tomorrow across a month", "tomorrow", Date{2026, 12, 3}, false},
		{"days ago across a year", "340 days ago", Date{2025, 12, 27}, false},
		{"weeks ago", "2 weeks ago", Date{2026, 11, 18}, false},
		{"in days", "in 30 days", Date{2027, 1, 1}, false},
		{"next monday", "next Monday", Date{2026, 12, 7}, false},
		{"next wednesday is a week away", "next wednesday", Date{2026, 12, 9}, false},
		{"last monday", "last Monday", Date{2026, 11, 30}, false},
		{"last wednesday is a week back", "last Wed", Date{2026, 11, 25}, false},
		{"leap day", "2028-02-29", Date{2028, 2, 29}, false},
		{"not a leap year", "2026-02-29", Date{}, true},
		{"month 13", "2026-13-01", Date{}, true},
		{"two-digit year", "26-12-02", Date{}, true},
		{"ambiguous numeric", "02/12/2026", Date{}, true},
		{"words", "soon", Date{}, true},
		{"unknown month", "2 Foo 2026", Date{}, true},
		{"negative ago", "-3 days ago", Date{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseDate(tt.in, ref)
			if (err != nil) != tt.err {
				t.Fatalf("got error %v, want error %v", err, tt.err)
			}
			if err != nil && !errors.Is(err, ErrBadDate) {
				t.Errorf("got %v, want ErrBadDate", err)
			}
			if got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
	if _, err := ParseDate("yesterday", Date{}); !errors.Is(err, ErrBadDate) {
		t.Errorf("got %v for a relative date without a reference, want ErrBadDate", err)
	}
}

func TestParseInterval(t *testing.T) {
	ref := Date{2026, 12, 2}
	tests := []struct {
		name string
		in   string
		want Interval
		err  error
	}{
		{"to", "2026-01-01 to 2026-02-01", Interval{Date{2026, 1, 1}, Date{2026, 2, 1}}, nil},
		{"from until", "from 1 Jan 2026 until February 1, 2026", Interval{Date{2026, 1, 1}, Date{2026, 2, 1}}, nil},
		{"between and", "between 2026/03/01 and 2026/03/05", Interval{Date{2026, 3, 1}, Date{2026, 3, 5}}, nil},
		{"en dash", "2026-03-01 – 2026-03-05", Interval{Date{2026, 3, 1}, Date{2026, 3, 5}}, nil},
		{"relative ends", "from last Monday to yesterday", Interval{Date{2026, 11, 30}, Date{2026, 12, 1}}, nil},
		{"single day", "2026-12-02", Interval{ref, ref}, nil},
		{"same day both ends", "2026-12-02 to 2026-12-02", Interval{ref, ref}, nil},
		{"last week", "last week", Interval{Date{2026, 11, 23}, Date{2026, 11, 29}}, nil},
		{"this week", "this week", Interval{Date{2026, 11, 30}, Date{2026, 12, 6}}, nil},
		{"next month across a year", "next month", Interval{Date{2027, 1, 1}, Date{2027, 1, 31}}, nil},
		{"last month", "last month", Interval{Date{2026, 11, 1}, Date{2026, 11, 30}}, nil},
		{"reversed", "2026-02-01 to 2026-01-01", Interval{}, ErrReversedInterval},
		{"reversed relative", "from today until last Monday", Interval{}, ErrReversedInterval},
		{"bad end", "2026-01-01 to someday", Interval{}, ErrBadDate},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseInterval(tt.in, ref)
			if !errors.Is(err, tt.err) {
				t.Fatalf("got error %v, want %v", err, tt.err)
			}
			if got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestDateArithmetic(t *testing.T) {
	tests := []struct {
		name    string
		d       Date
		add     int
		want    Date
		weekday int
	}{
		{"epoch", Date{1970, 1, 1}, 0, Date{1970, 1, 1}, 4},
		{"leap century", Date{2000, 2, 28}, 1, Date{2000, 2, 29}, 1},
		{"non-leap century", Date{2100, 2, 28}, 1, Date{2100, 3, 1}, 7},
		{"backwards over a year", Date{2026, 1, 1}, -1, Date{2025, 12, 31}, 4},
		{"far past", Date{1600, 3, 1}, -1, Date{1600, 2, 29}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.d.AddDays(tt.add); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			if got := tt.d.Weekday(); got != tt.weekday {
				t.Errorf("got weekday %d, want %d", got, tt.weekday)
			}
		})
	}
}

// TestNormalizeTextASCII holds the ASCII fast path of NormalizeText to its
// definition (NFKC, format characters stripped, case folding, white space
// collapsed) on random ASCII texts.
func TestNormalizeTextASCII(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for n := range 20000 {
		b := make([]byte, r.IntN(12))
		for i := range b {
			if r.IntN(3) == 0 {
				b[i] = " \t\n\v\f\rAaZz"[r.IntN(10)]
			} else {
				b[i] = byte(r.IntN(128))
			}
		}
		s := string(b)
		if n == 0 {
			s = ""
		}
		want := CollapseSpace(cases.Fold().String(StripFormat(norm.NFKC.String(s))))
		if got := NormalizeText(s); got != want {
			t.Fatalf("NormalizeText(%q) = %q, want %q", s, got, want)
		}
	}
}
