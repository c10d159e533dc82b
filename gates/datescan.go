package gates

// The dates rule looks for date-shaped text with one regular expression
// (see [Dates]):
//
//	(?i)\b\d{4}[-/.]\d{1,2}[-/.]\d{1,2}\b
//	|\b\d{1,2}(?:st|nd|rd|th)?\s+MON,?\s+\d{4}\b
//	|\bMON\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4}\b
//	|(?:令和|平成)(?:\d{1,2}|元)年\d{1,2}月\d{1,2}日|\d{4}年\d{1,2}月\d{1,2}日
//
// with MON = (?:jan|feb|…|dec)[a-z]*\.? — and then parses every match
// again with [ParseDate]. Run over a whole evidence, that alternation was
// the largest cost of an evaluation (and ParseDate allocates for every
// date). scanDates below finds exactly the matches FindAllStringIndex finds
// and reads each one's day as ParseDate would, in one pass and without
// allocating. The regex stays the definition: datescan_test.go compares the
// two (and ParseDate) on random and hostile texts, and FuzzDateScan keeps
// doing so.
//
// Why a hand-written scanner can be exact here:
//   - The text is NFKC-normalised first, which removes the only non-ASCII
//     runes (U+017F, U+212A) that (?i) folds into [a-z]; so case folding is
//     ASCII. \d, \s ([\t\n\f\r ]) and \b (ASCII word characters) are ASCII
//     by RE2's definition.
//   - At any position at most one alternative can match (they differ in
//     their first byte, or in the byte after the leading digits), and each
//     alternative's extent is forced: every optional or repeated part is
//     followed by something it cannot itself match. So leftmost-first
//     search is "try each position in order, take the match, continue after
//     it", as below.

// scanDates calls fn for every match of the dates regex in s (which must
// be NFKC-normalised), in order: the match is s[i:j], d is its day and ok
// whether ParseDate(s[i:j], Date{}) would accept it.
func scanDates(s string, fn func(i, j int, d Date, ok bool)) {
	for i := 0; i < len(s); {
		c := s[i]
		var (
			j       int
			d       Date
			ok, hit bool
		)
		switch {
		case isDigitByte(c):
			if i == 0 || !isWordByte(s[i-1]) {
				if j, d, ok, hit = isoDateAt(s, i); !hit {
					j, d, ok, hit = dayMonthYearAt(s, i)
				}
			}
			if !hit {
				j, d, ok, hit = kanjiDateAt(s, i, 0)
			}
		case 'a' <= c|0x20 && c|0x20 <= 'z':
			if i == 0 || !isWordByte(s[i-1]) {
				j, d, ok, hit = monthDayYearAt(s, i)
			}
			if !hit { // the letters after it cannot start a match either
				for i++; i < len(s) && 'a' <= s[i]|0x20 && s[i]|0x20 <= 'z'; i++ {
				}
				continue
			}
		case c == 0xE4 || c == 0xE5:
			switch {
			case hasPrefixAt(s, i, "令和"):
				j, d, ok, hit = kanjiDateAt(s, i+len("令和"), 2018)
			case hasPrefixAt(s, i, "平成"):
				j, d, ok, hit = kanjiDateAt(s, i+len("平成"), 1988)
			}
		}
		if hit {
			fn(i, j, d, ok)
			i = j
			continue
		}
		i++
	}
}

func isDigitByte(c byte) bool { return '0' <= c && c <= '9' }

// isSpaceRE reports whether c is in RE2's \s: [\t\n\f\r ].
func isSpaceRE(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

func hasPrefixAt(s string, i int, p string) bool { return len(s)-i >= len(p) && s[i:i+len(p)] == p }

// digitsAt returns the number of digits starting at s[i] (at most 9, which
// is more than any part needs) and their value.
func digitsAt(s string, i int) (n, v int) {
	for i+n < len(s) && n < 9 && isDigitByte(s[i+n]) {
		v = v*10 + int(s[i+n]-'0')
		n++
	}
	return n, v
}

// boundaryAfter reports whether \b holds after a word character at s[j-1].
func boundaryAfter(s string, j int) bool { return j == len(s) || !isWordByte(s[j]) }

func isDateSep(c byte) bool { return c == '-' || c == '/' || c == '.' }

// isoDateAt matches \d{4}[-/.]\d{1,2}[-/.]\d{1,2}\b at s[i] (the \b before
// is the caller's). ParseDate accepts it only when both separators are the
// same byte and the day exists.
func isoDateAt(s string, i int) (j int, d Date, ok, hit bool) {
	n, y := digitsAt(s, i)
	if n != 4 || i+4 >= len(s) || !isDateSep(s[i+4]) {
		return 0, Date{}, false, false
	}
	p := i + 5
	n, m := digitsAt(s, p)
	if n < 1 || n > 2 || p+n >= len(s) || !isDateSep(s[p+n]) {
		return 0, Date{}, false, false
	}
	sep1, sep2 := s[i+4], s[p+n]
	p += n + 1
	n, dd := digitsAt(s, p)
	if n < 1 || n > 2 || !boundaryAfter(s, p+n) {
		return 0, Date{}, false, false
	}
	d = Date{y, m, dd}
	return p + n, d, sep1 == sep2 && d.Valid(), true
}

// ordinalAt reports whether s[i:] starts with st, nd, rd or th, in any case.
func ordinalAt(s string, i int) bool {
	if len(s)-i < 2 {
		return false
	}
	a, b := s[i]|0x20, s[i+1]|0x20
	return a == 's' && b == 't' || a == 'n' && b == 'd' || a == 'r' && b == 'd' || a == 't' && b == 'h'
}

// spacesAt returns the index after one or more \s at s[i], or -1.
func spacesAt(s string, i int) int {
	j := i
	for j < len(s) && isSpaceRE(s[j]) {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// monthAt matches MON = (?:jan|…|dec)[a-z]*\.? at s[i], case-insensitively:
// it returns the index after it and the month monthOf gives its word
// (0 when ParseDate would not know the word, such as "janu").
func monthAt(s string, i int) (j, month int) {
	if len(s)-i < 3 {
		return -1, 0
	}
	pre := -1
	for k := 0; k < 12; k++ {
		if s[i]|0x20 == monthNames3[3*k] && s[i+1]|0x20 == monthNames3[3*k+1] && s[i+2]|0x20 == monthNames3[3*k+2] {
			pre = k
			break
		}
	}
	if pre < 0 {
		return -1, 0
	}
	j = i + 3
	for j < len(s) && 'a' <= s[j]|0x20 && s[j]|0x20 <= 'z' {
		j++
	}
	word := s[i:j]
	switch full := monthFull(pre); {
	case len(word) == 3, len(word) == len(full) && equalFoldASCII(word, full), pre == 8 && len(word) == 4 && equalFoldASCII(word, "sept"):
		month = pre + 1
	}
	if j < len(s) && s[j] == '.' {
		j++
	}
	return j, month
}

const monthNames3 = "janfebmaraprmayjunjulaugsepoctnovdec"

// monthFull is the full lower-case name of month k+1.
func monthFull(k int) string {
	switch k {
	case 0:
		return "january"
	case 1:
		return "february"
	case 2:
		return "march"
	case 3:
		return "april"
	case 4:
		return "may"
	case 5:
		return "june"
	case 6:
		return "july"
	case 7:
		return "august"
	case 8:
		return "september"
	case 9:
		return "october"
	case 10:
		return "november"
	}
	return "december"
}

// equalFoldASCII reports whether a equals the lower-case b ignoring ASCII case.
func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for k := 0; k < len(a); k++ {
		if lowerASCII(a[k]) != b[k] {
			return false
		}
	}
	return true
}

// yearAt matches \d{4}\b at s[i].
func yearAt(s string, i int) (j, y int) {
	n, y := digitsAt(s, i)
	if n != 4 || !boundaryAfter(s, i+4) {
		return -1, 0
	}
	return i + 4, y
}

// yearAfter matches ,?\s+\d{4}\b at s[p], the end both English forms
// share, and returns the date with month and day.
func yearAfter(s string, p, month, dd int) (j int, d Date, ok, hit bool) {
	if p < len(s) && s[p] == ',' {
		p++
	}
	if p = spacesAt(s, p); p < 0 {
		return 0, Date{}, false, false
	}
	p, y := yearAt(s, p)
	if p < 0 {
		return 0, Date{}, false, false
	}
	d = Date{y, month, dd}
	return p, d, month > 0 && d.Valid(), true
}

// dayMonthYearAt matches \d{1,2}(?:st|nd|rd|th)?\s+MON,?\s+\d{4}\b at s[i]
// (the \b before is the caller's): "2 Dec 2026", "2nd December, 2026".
func dayMonthYearAt(s string, i int) (j int, d Date, ok, hit bool) {
	n, dd := digitsAt(s, i)
	if n < 1 || n > 2 {
		return 0, Date{}, false, false
	}
	p := i + n
	if ordinalAt(s, p) {
		p += 2
	}
	if p = spacesAt(s, p); p < 0 {
		return 0, Date{}, false, false
	}
	p, month := monthAt(s, p)
	if p < 0 {
		return 0, Date{}, false, false
	}
	return yearAfter(s, p, month, dd)
}

// monthDayYearAt matches MON\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4}\b at s[i]
// (the \b before is the caller's): "December 2, 2026", "Dec. 2nd 2026".
func monthDayYearAt(s string, i int) (j int, d Date, ok, hit bool) {
	p, month := monthAt(s, i)
	if p < 0 {
		return 0, Date{}, false, false
	}
	if p = spacesAt(s, p); p < 0 {
		return 0, Date{}, false, false
	}
	n, dd := digitsAt(s, p)
	if n < 1 || n > 2 {
		return 0, Date{}, false, false
	}
	p += n
	if ordinalAt(s, p) {
		p += 2
	}
	return yearAfter(s, p, month, dd)
}

// kanjiDateAt matches the Japanese forms after the era (base 2018 for 令和,
// 1988 for 平成) at s[i], or with base 0 the plain \d{4}年\d{1,2}月\d{1,2}日.
// The era forms take (?:\d{1,2}|元) years; ParseDate also checks that the day
// falls within the era.
func kanjiDateAt(s string, i, base int) (j int, d Date, ok, hit bool) {
	const nen, tsuki, nichi, gan = "年", "月", "日", "元"
	var y int
	p := i
	if base == 0 {
		n, v := digitsAt(s, p) // \d{4}: exactly four, then 年
		if n != 4 {
			return 0, Date{}, false, false
		}
		y, p = v, p+4
	} else if hasPrefixAt(s, p, gan) {
		y, p = 1, p+len(gan)
	} else {
		n, v := digitsAt(s, p)
		if n < 1 || n > 2 {
			return 0, Date{}, false, false
		}
		y, p = v, p+n
	}
	if !hasPrefixAt(s, p, nen) {
		return 0, Date{}, false, false
	}
	p += len(nen)
	n, m := digitsAt(s, p)
	if n < 1 || n > 2 || !hasPrefixAt(s, p+n, tsuki) {
		return 0, Date{}, false, false
	}
	p += n + len(tsuki)
	n, dd := digitsAt(s, p)
	if n < 1 || n > 2 || !hasPrefixAt(s, p+n, nichi) {
		return 0, Date{}, false, false
	}
	p += n + len(nichi)
	d = Date{base + y, m, dd}
	ok = y >= 1 && d.Valid()
	switch base {
	case 2018:
		ok = ok && !d.Before(Date{2019, 5, 1})
	case 1988:
		ok = ok && !d.Before(Date{1989, 1, 8}) && !(Date{2019, 4, 30}).Before(d)
	}
	return p, d, ok, true
}

// isASCII reports whether s has only ASCII bytes (then it is its own NFKC).
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
