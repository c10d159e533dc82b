package gates

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// Date is a civil date in the proleptic Gregorian calendar, with no time
// zone: the box's local date is the caller's business (gates reads no
// clock and does not import time). The zero value is invalid.
type Date struct{ Year, Month, Day int }

// ErrBadDate is returned when text is not a date in a known form, or names
// a day that does not exist (2026-02-30).
var ErrBadDate = errors.New("not a date")

// ErrReversedInterval is returned for an interval whose end is before its start.
var ErrReversedInterval = errors.New("interval ends before it starts")

// Valid reports whether d is a real day between years 1 and 9999.
func (d Date) Valid() bool {
	return d.Year >= 1 && d.Year <= 9999 && d.Month >= 1 && d.Month <= 12 && d.Day >= 1 && d.Day <= daysIn(d.Year, d.Month)
}

// String returns d as YYYY-MM-DD.
func (d Date) String() string { return fmt.Sprintf("%04d-%02d-%02d", d.Year, d.Month, d.Day) }

// Before reports whether d is earlier than e.
func (d Date) Before(e Date) bool { return d.days() < e.days() }

// AddDays returns d moved by n days.
func (d Date) AddDays(n int) Date { return fromDays(d.days() + n) }

// Weekday returns the ISO weekday: 1 = Monday … 7 = Sunday.
func (d Date) Weekday() int { return mod(d.days()+3, 7) + 1 }

func daysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

func mod(a, b int) int { return ((a % b) + b) % b }

func floorDiv(a, b int) int {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// days is the number of days since 1970-01-01 (H. Hinnant's algorithm).
func (d Date) days() int {
	y, m := d.Year, d.Month
	if m <= 2 {
		y--
	}
	era := floorDiv(y, 400)
	yoe := y - era*400
	mp := m + 9
	if m > 2 {
		mp = m - 3
	}
	doy := (153*mp+2)/5 + d.Day - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

func fromDays(z int) Date {
	z += 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	day := doy - (153*mp+2)/5 + 1
	m := mp + 3
	if mp >= 10 {
		m = mp - 9
	}
	if m <= 2 {
		y++
	}
	return Date{y, m, day}
}

// Interval is a closed range of days; a single date is Start == End.
type Interval struct{ Start, End Date }

// String returns "START" for a single day, else "START/END" (ISO 8601).
func (iv Interval) String() string {
	if iv.Start == iv.End {
		return iv.Start.String()
	}
	return iv.Start.String() + "/" + iv.End.String()
}

const (
	monthNames   = "january february march april may june july august september october november december"
	weekdayNames = "monday tuesday wednesday thursday friday saturday sunday"
)

func monthOf(s string) int {
	s = strings.TrimSuffix(s, ".")
	if len(s) < 3 {
		return 0
	}
	for i, m := range strings.Fields(monthNames) {
		if strings.HasPrefix(m, s) && (len(s) == 3 || s == m || (s == "sept" && i == 8)) {
			return i + 1
		}
	}
	return 0
}

func weekdayOf(s string) int {
	for i, w := range strings.Fields(weekdayNames) {
		if s == w || (len(s) >= 3 && strings.HasPrefix(w, s) && len(s) <= 4) {
			return i + 1
		}
	}
	return 0
}

// ParseISODate parses exactly YYYY-MM-DD, as Input.Today is given.
func ParseISODate(s string) (Date, error) {
	if len(s) == 10 && s[4] == '-' && s[7] == '-' {
		y, e1 := strconv.Atoi(s[:4])
		m, e2 := strconv.Atoi(s[5:7])
		d, e3 := strconv.Atoi(s[8:])
		if e1 == nil && e2 == nil && e3 == nil {
			if dt := (Date{y, m, d}); dt.Valid() {
				return dt, nil
			}
		}
	}
	return Date{}, fmt.Errorf("gates: date %q (want YYYY-MM-DD): %w", s, ErrBadDate)
}

// ParseDate normalises one day written in a common form. Absolute forms
// (case-insensitive; full-width digits accepted):
//
//	2026-12-02   2026/12/02   2026.12.02
//	2 Dec 2026   2nd December 2026   2 Dec, 2026
//	December 2, 2026   Dec 2 2026   Dec. 2nd, 2026
//	2026年12月2日   令和8年12月2日   令和元年5月1日   平成31年4月30日
//
// Forms relative to ref (which must be valid for them):
//
//	today   yesterday   tomorrow
//	3 days ago   2 weeks ago   in 3 days   in 1 week
//	next Monday (the first Monday strictly after ref)
//	last Monday (the last Monday strictly before ref)
//
// Anything else, or a day that does not exist, is [ErrBadDate]. Ranges such
// as "last week" are intervals: use [ParseInterval].
func ParseDate(s string, ref Date) (Date, error) {
	d, err := parseDate(s, ref)
	if err != nil {
		return Date{}, fmt.Errorf("gates: date %q: %w", s, err)
	}
	return d, nil
}

func parseDate(s string, ref Date) (Date, error) {
	s = strings.ToLower(CollapseSpace(norm.NFKC.String(s)))
	if d, ok, err := parseJapanese(s); ok {
		return d, err
	}
	f := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' })
	for _, form := range dateForms() {
		if !form.match(f) {
			continue
		}
		d, err := form.parse(f, ref)
		if err != nil || form.relative {
			return d, err
		}
		if !d.Valid() {
			return Date{}, fmt.Errorf("no such day %04d-%02d-%02d: %w", d.Year, d.Month, d.Day, ErrBadDate)
		}
		return d, nil
	}
	return Date{}, ErrBadDate
}

// dateForm is one way of writing a date in words (the text lower-cased
// and cut at blanks and commas): match says whether the words are in that
// form, parse reads them. A relative form counts from the reference date
// and so always names a day; an absolute one may name a day that does not
// exist (2026-02-30), which parseDate refuses.
type dateForm struct {
	match    func(f []string) bool
	parse    func(f []string, ref Date) (Date, error)
	relative bool
}

// dateForms are the forms parseDate reads, tried in order; the first
// that matches decides. (A function, not a variable: gates has no
// package-level state.)
func dateForms() [5]dateForm {
	return [5]dateForm{
		{match: isDayWord, parse: parseDayWord, relative: true},                     // today
		{match: isCountOfDays, parse: parseCountOfDays, relative: true},             // 3 days ago, in 2 weeks
		{match: isNextOrLastWeekday, parse: parseNextOrLastWeekday, relative: true}, // next monday
		{match: isOneWord, parse: parseNumericDate},                                 // 2026-12-02, 2026/12/2
		{match: isThreeWords, parse: parseWordedDate},                               // 2 Dec 2026, December 2, 2026
	}
}

// dayOffset is the offset from the reference of a day that is a word.
func dayOffset(w string) (int, bool) {
	switch w {
	case "today":
		return 0, true
	case "yesterday":
		return -1, true
	case "tomorrow":
		return 1, true
	}
	return 0, false
}

// daysPer is a unit of "N days ago" and "in N weeks" in days; 0 when it
// is not one.
func daysPer(unit string) int {
	switch unit {
	case "day", "days":
		return 1
	case "week", "weeks":
		return 7
	}
	return 0
}

func isOneWord(f []string) bool    { return len(f) == 1 }
func isThreeWords(f []string) bool { return len(f) == 3 }

func isDayWord(f []string) bool {
	if len(f) != 1 {
		return false
	}
	_, ok := dayOffset(f[0])
	return ok
}

func isCountOfDays(f []string) bool {
	return len(f) == 3 && (f[2] == "ago" || f[0] == "in")
}

func isNextOrLastWeekday(f []string) bool {
	return len(f) == 2 && (f[0] == "next" || f[0] == "last") && weekdayOf(f[1]) > 0
}

// needRef is the error of a relative date without a valid reference.
func needRef(ref Date) error {
	if !ref.Valid() {
		return fmt.Errorf("a relative date needs a valid reference date: %w", ErrBadDate)
	}
	return nil
}

// ordinal reads a number of at most four digits, with or without an
// English ordinal suffix (2, 2nd, 21st).
func ordinal(t string) (int, bool) {
	for _, suf := range []string{"st", "nd", "rd", "th"} {
		if strings.HasSuffix(t, suf) && len(t) > len(suf) {
			t = strings.TrimSuffix(t, suf)
			break
		}
	}
	n, err := strconv.Atoi(t)
	return n, err == nil && len(t) <= 4
}

func parseDayWord(f []string, ref Date) (Date, error) {
	if err := needRef(ref); err != nil {
		return Date{}, err
	}
	n, _ := dayOffset(f[0])
	return ref.AddDays(n), nil
}

// parseCountOfDays reads "N days ago", "N weeks ago", "in N days" and
// "in N weeks".
func parseCountOfDays(f []string, ref Date) (Date, error) {
	nTok, unit, sign := f[0], f[1], -1
	if f[0] == "in" {
		nTok, unit, sign = f[1], f[2], 1
	}
	n, ok := ordinal(nTok)
	if !ok || n < 0 {
		return Date{}, ErrBadDate
	}
	per := daysPer(unit)
	if per == 0 {
		return Date{}, ErrBadDate
	}
	if err := needRef(ref); err != nil {
		return Date{}, err
	}
	return ref.AddDays(sign * n * per), nil
}

// parseNextOrLastWeekday reads "next monday" (the first Monday after the
// reference) and "last monday" (the last one before it).
func parseNextOrLastWeekday(f []string, ref Date) (Date, error) {
	if err := needRef(ref); err != nil {
		return Date{}, err
	}
	w := weekdayOf(f[1])
	if f[0] == "next" {
		return ref.AddDays(mod(w-ref.Weekday()-1, 7) + 1), nil
	}
	return ref.AddDays(-(mod(ref.Weekday()-w-1, 7) + 1)), nil
}

// parseNumericDate reads a year of four digits, a month and a day, joined
// by one separator of '-', '/' or '.' (2026-12-02, 2026/12/2).
func parseNumericDate(f []string, _ Date) (Date, error) {
	t := f[0]
	sep := byte(0)
	for _, c := range []byte{'-', '/', '.'} {
		if strings.Count(t, string(c)) == 2 {
			sep = c
		}
	}
	if sep == 0 {
		return Date{}, ErrBadDate
	}
	p := strings.Split(t, string(sep))
	if len(p[0]) != 4 || len(p[1]) > 2 || len(p[2]) > 2 {
		return Date{}, ErrBadDate
	}
	y, e1 := strconv.Atoi(p[0])
	m, e2 := strconv.Atoi(p[1])
	dd, e3 := strconv.Atoi(p[2])
	if e1 != nil || e2 != nil || e3 != nil {
		return Date{}, ErrBadDate
	}
	return Date{y, m, dd}, nil
}

// parseWordedDate reads "2 Dec 2026" and "December 2, 2026" (a four-digit
// year last).
func parseWordedDate(f []string, _ Date) (Date, error) {
	if dd, ok := ordinal(f[0]); ok && monthOf(f[1]) > 0 { // 2 Dec 2026
		y, ok := ordinal(f[2])
		if !ok || len(f[2]) != 4 {
			return Date{}, ErrBadDate
		}
		return Date{y, monthOf(f[1]), dd}, nil
	}
	m := monthOf(f[0])
	if m == 0 {
		return Date{}, ErrBadDate
	}
	dd, ok1 := ordinal(f[1]) // December 2, 2026
	y, ok2 := ordinal(f[2])
	if !ok1 || !ok2 || len(f[2]) != 4 {
		return Date{}, ErrBadDate
	}
	return Date{y, m, dd}, nil
}

// parseJapanese handles 2026年12月2日 and the 令和 and 平成 eras. ok is false
// when s is not in that form at all.
func parseJapanese(s string) (d Date, ok bool, err error) {
	if !strings.HasSuffix(s, "日") || !strings.Contains(s, "年") || !strings.Contains(s, "月") {
		return Date{}, false, nil
	}
	base, first, last := 0, Date{}, Date{}
	switch {
	case strings.HasPrefix(s, "令和"):
		s, base, first, last = strings.TrimPrefix(s, "令和"), 2018, Date{2019, 5, 1}, Date{9999, 12, 31}
	case strings.HasPrefix(s, "平成"):
		s, base, first, last = strings.TrimPrefix(s, "平成"), 1988, Date{1989, 1, 8}, Date{2019, 4, 30}
	}
	ys, rest, _ := strings.Cut(s, "年")
	ms, rest, _ := strings.Cut(rest, "月")
	ds, rest, _ := strings.Cut(rest, "日")
	if rest != "" {
		return Date{}, true, ErrBadDate
	}
	y, e1 := strconv.Atoi(ys)
	if ys == "元" && base > 0 {
		y, e1 = 1, nil
	}
	m, e2 := strconv.Atoi(ms)
	dd, e3 := strconv.Atoi(ds)
	if e1 != nil || e2 != nil || e3 != nil || y < 1 {
		return Date{}, true, ErrBadDate
	}
	d = Date{base + y, m, dd}
	if !d.Valid() {
		return Date{}, true, ErrBadDate
	}
	if base > 0 && (d.Before(first) || last.Before(d)) {
		return Date{}, true, fmt.Errorf("%s is outside its era: %w", d, ErrBadDate)
	}
	return d, true, nil
}

// ParseInterval normalises a range of days, relative to ref where needed:
//
//	2026-01-01 to 2026-02-01        from 1 Jan 2026 until 1 Feb 2026
//	from X to Y    X until Y    between X and Y    X – Y (en or em dash)
//	this week, last week, next week (ISO weeks, Monday to Sunday)
//	this month, last month, next month
//
// Each end is a [ParseDate] form; a single date gives Start == End. An
// interval whose end is before its start is [ErrReversedInterval].
func ParseInterval(s string, ref Date) (Interval, error) {
	t := strings.ToLower(CollapseSpace(norm.NFKC.String(s)))
	f := strings.Fields(t)
	if len(f) == 2 && (f[0] == "this" || f[0] == "last" || f[0] == "next") && (f[1] == "week" || f[1] == "month") {
		if !ref.Valid() {
			return Interval{}, fmt.Errorf("gates: interval %q: a relative date needs a valid reference date: %w", s, ErrBadDate)
		}
		shift := map[string]int{"this": 0, "last": -1, "next": 1}[f[0]]
		if f[1] == "week" {
			mon := ref.AddDays(1 - ref.Weekday() + 7*shift)
			return Interval{mon, mon.AddDays(6)}, nil
		}
		y, m := ref.Year, ref.Month+shift
		if m < 1 {
			y, m = y-1, 12
		} else if m > 12 {
			y, m = y+1, 1
		}
		return Interval{Date{y, m, 1}, Date{y, m, daysIn(y, m)}}, nil
	}
	t = strings.TrimPrefix(t, "from ")
	t = strings.TrimPrefix(t, "between ")
	for _, sep := range []string{" to ", " until ", " till ", " and ", " – ", " — ", " - "} {
		a, b, ok := strings.Cut(t, sep)
		if !ok {
			continue
		}
		start, err := parseDate(a, ref)
		if err != nil {
			return Interval{}, fmt.Errorf("gates: interval %q: start %q: %w", s, a, err)
		}
		end, err := parseDate(b, ref)
		if err != nil {
			return Interval{}, fmt.Errorf("gates: interval %q: end %q: %w", s, b, err)
		}
		if end.Before(start) {
			return Interval{}, fmt.Errorf("gates: interval %q: %s is before %s: %w", s, end, start, ErrReversedInterval)
		}
		return Interval{start, end}, nil
	}
	d, err := parseDate(t, ref)
	if err != nil {
		return Interval{}, fmt.Errorf("gates: interval %q: %w", s, err)
	}
	return Interval{d, d}, nil
}

// DatesCheck checks the absolute dates written in a field: id "dates",
// stage pure. Every date-shaped text (the absolute forms of [ParseDate]) must
// be a real day; with notFuture none may be after Input.Today; and there must
// be at least min of them. Relative phrases ("yesterday") in free text are
// not checked: they are ambiguous once written down.
type DatesCheck struct {
	field     string
	min       int
	notFuture bool
	// re is the definition of a date-shaped text; Check finds its matches
	// with scanDates, which the tests hold to it. nil: not built by Dates.
	re *regexp.Regexp
}

// Dates returns a dates rule.
func Dates(field string, min int, notFuture bool) DatesCheck {
	const mon = `(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?`
	re := regexp.MustCompile(`(?i)\b\d{4}[-/.]\d{1,2}[-/.]\d{1,2}\b` +
		`|\b\d{1,2}(?:st|nd|rd|th)?\s+` + mon + `,?\s+\d{4}\b` +
		`|\b` + mon + `\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4}\b` +
		`|(?:令和|平成)(?:\d{1,2}|元)年\d{1,2}月\d{1,2}日|\d{4}年\d{1,2}月\d{1,2}日`)
	return DatesCheck{field: field, min: min, notFuture: notFuture, re: re}
}

func (DatesCheck) ID() string   { return RuleDates }
func (DatesCheck) Level() Level { return Fail }
func (DatesCheck) Stage() Stage { return StagePure }
func (r DatesCheck) Description() string {
	d := "every date in " + r.field + " is a real day"
	if r.notFuture {
		d += ", none after today"
	}
	if r.min > 0 {
		d += fmt.Sprintf(", at least %d of them", r.min)
	}
	return d
}

func (r DatesCheck) silentWithoutContract() bool { return r.re != nil && r.field != "raw" }

// Check implements [Rule].
func (r DatesCheck) Check(in Input) []Fact {
	if r.re == nil {
		return []Fact{{Rule: RuleDates, Level: Fail, Where: "rule", Expected: "a valid configuration", Actual: "use Dates to build the rule"}}
	}
	vals, ok := fieldValues(in, r.field)
	if !ok {
		return nil
	}
	var (
		facts []Fact
		today Date
		count int
	)
	if r.notFuture {
		t, err := ParseISODate(in.Today)
		if err != nil {
			return []Fact{{Rule: RuleDates, Level: Fail, Where: "input", Expected: "the reference date (today) as YYYY-MM-DD", Actual: quoteExcerpt(in.Today)}}
		}
		today = t
	}
	for _, v := range vals {
		text := v.text
		if !isASCII(text) {
			text = norm.NFKC.String(text)
		}
		// scanDates finds what r.re.FindAllString finds and reads each
		// match as ParseDate(m, Date{}) does (datescan.go).
		scanDates(text, func(i, j int, d Date, ok bool) {
			count++
			m := text[i:j]
			switch {
			case !ok:
				facts = append(facts, Fact{Rule: RuleDates, Level: Fail, Where: v.where, Expected: "a real date", Actual: quoteExcerpt(m)})
			case r.notFuture && today.Before(d):
				facts = append(facts, Fact{Rule: RuleDates, Level: Fail, Where: v.where,
					Expected: "a date not after today (" + today.String() + ")", Actual: quoteExcerpt(m) + " is " + d.String()})
			}
		})
	}
	if count < r.min {
		facts = append(facts, Fact{Rule: RuleDates, Level: Fail, Where: r.field,
			Expected: fmt.Sprintf("at least %d dates", r.min), Actual: fmt.Sprintf("%d", count)})
	}
	return facts
}
