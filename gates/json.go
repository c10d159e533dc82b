package gates

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxAnswerBytes is the largest answer the contract accepts (256 KiB). A larger
// answer is a Fail fact, checked before any parsing, so hostile input cannot
// make the gate do unbounded work.
const MaxAnswerBytes = 256 << 10

// MaxListItems bounds every list in an answer (citations, new_directions,
// actions). More is a Fail fact: one answer must not flood the quest graph.
const MaxListItems = 100

// maxFacts bounds how many contract facts one answer produces; the rest are
// summarised in a final fact, so feedback stays readable.
const maxFacts = 16

// RuleContract is the id of the output-contract rule; every fact from
// [ParseAnswer] and [ParseOwnerAnswer] carries it.
const RuleContract = "contract"

// factList collects contract facts, capped at maxFacts.
type factList struct {
	list    []Fact
	dropped int
}

func (fs *factList) add(where, expected, actual string) {
	if len(fs.list) >= maxFacts {
		fs.dropped++
		return
	}
	fs.list = append(fs.list, Fact{Rule: RuleContract, Level: Fail, Where: where, Expected: expected, Actual: actual})
}

func (fs *factList) empty() bool { return len(fs.list) == 0 }

func (fs *factList) facts() []Fact {
	if fs.dropped > 0 {
		return append(fs.list, Fact{
			Rule: RuleContract, Level: Fail, Where: "answer",
			Expected: "an answer that follows the contract",
			Actual:   fmt.Sprintf("%d more problems not listed", fs.dropped),
		})
	}
	return fs.list
}

func itoa(n int) string { return strconv.Itoa(n) }

// excerptBytes is how much of an offending value a fact quotes.
const excerptBytes = 60

// clip shortens s to at most n bytes on a rune boundary, marking the cut with "…".
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// quoteExcerpt quotes a short, escaped excerpt of s, e.g. "maybe" or "very lon"….
func quoteExcerpt(s string) string {
	if cut, clipped := excerptCut(s); clipped {
		return quote(s[:cut], "…")
	}
	return quote(s, "")
}

// excerptCut returns how many bytes of s an excerpt keeps (at most
// excerptBytes, cut on a rune boundary as clip cuts) and whether that is
// less than all of s.
func excerptCut[S string | []byte](s S) (cut int, clipped bool) {
	if len(s) <= excerptBytes {
		return len(s), false
	}
	cut = excerptBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return cut, true
}

// appendQuoteExcerpt appends quoteExcerpt(string(b)) to dst, so that a
// fact quoting b can be written into one buffer.
func appendQuoteExcerpt(dst, b []byte) []byte {
	cut, clipped := excerptCut(b)
	if b = b[:cut]; plainASCII(b) {
		dst = append(dst, '"')
		dst = append(dst, b...)
		dst = append(dst, '"')
	} else {
		dst = strconv.AppendQuote(dst, string(b))
	}
	if clipped {
		dst = append(dst, "…"...)
	}
	return dst
}

// quote returns strconv.Quote(s) + suffix. Printable ASCII other than the
// quote and the backslash is what strconv.Quote keeps as it is; such a
// string (most excerpts) is quoted by hand, in one allocation.
func quote(s, suffix string) string {
	if !plainASCII(s) {
		return strconv.Quote(s) + suffix
	}
	return "\"" + s + "\"" + suffix
}

// plainASCII reports whether every byte of s is printable ASCII other than
// '"' and '\\' (0x20..0x7e): the bytes strconv.Quote keeps as they are.
// It tests eight bytes at a time, as answerScanner.plainEnd does.
func plainASCII[S string | []byte](s S) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := s[i : i+8] // constant indexes below: one 8-byte load, no bounds checks
		x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
		if (x|lessBytes(x, 0x20)|zeroBytes(x^(lo7*0x7f))|zeroBytes(x^qx8)|zeroBytes(x^bsx8))&hi7 != 0 {
			return false // a byte >= 0x80, < 0x20, 0x7f, '"' or '\\'
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// zeroBytes sets the high bit of the bytes of x that are 0, and may set it
// in bytes above one of them but in no others: zeroBytes(x)&hi7 != 0 if
// and only if some byte of x is 0.
func zeroBytes(x uint64) uint64 {
	return (x - lo7) &^ x
}

// lessBytes is zeroBytes for the bytes of x that are less than n (n <= 128).
func lessBytes(x uint64, n byte) uint64 {
	return (x - lo7*uint64(n)) &^ x
}

// rawExcerpt renders raw JSON text as a short single-line excerpt.
func rawExcerpt(raw []byte) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		b.Reset()
		b.Write(bytes.TrimSpace(raw))
	}
	return oneLine(clip(b.String(), excerptBytes))
}

// kindOf names the JSON kind of a valid JSON value by its first byte.
func kindOf(raw []byte) string {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// describe renders a wrongly typed value for a fact: "number 3", "null",
// "array [1,2]".
func describe(raw []byte) string {
	k := kindOf(raw)
	if k == "null" {
		return k
	}
	return k + " " + rawExcerpt(raw)
}

// position turns a byte offset into "line L, column C (byte N)" for text.
func position(text []byte, off int64) string {
	if off < 0 {
		off = 0
	}
	if off > int64(len(text)) {
		off = int64(len(text))
	}
	before := text[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := utf8.RuneCount(before[bytes.LastIndexByte(before, '\n')+1:]) + 1
	return fmt.Sprintf("line %d, column %d (byte %d)", line, col, off)
}

// parseObjectText checks that text is valid UTF-8 and exactly one JSON value,
// and that the value is an object. It returns the object's raw bytes.
func parseObjectText(text []byte, fs *factList) (json.RawMessage, bool) {
	if !utf8.Valid(text) {
		off := 0
		for off < len(text) {
			r, size := utf8.DecodeRune(text[off:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			off += size
		}
		fs.add("json", "valid UTF-8", "an invalid byte at "+position(text, int64(off)))
		return nil, false
	}
	if json.Valid(text) { // fast path; the decoder below only explains failures
		v := json.RawMessage(bytes.TrimSpace(text))
		if k := kindOf(v); k != "object" {
			fs.add("json", "a JSON object", describe(v))
			return nil, false
		}
		return v, true
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			fs.add("json", "valid JSON", fmt.Sprintf("%s at %s", se.Error(), position(text, se.Offset-1)))
		case errors.Is(err, io.ErrUnexpectedEOF):
			fs.add("json", "valid JSON", "unexpected end of JSON at "+position(text, int64(len(text))))
		case errors.Is(err, io.EOF):
			fs.add("json", "a JSON object", "no JSON value")
		default:
			fs.add("json", "valid JSON", oneLine(clip(err.Error(), 200)))
		}
		return nil, false
	}
	rest := dec.InputOffset()
	for rest < int64(len(text)) && isSpace(text[rest]) {
		rest++
	}
	if rest < int64(len(text)) {
		fs.add("json", "exactly one JSON value",
			"more data after it at "+position(text, rest)+": "+quoteExcerpt(string(text[rest:])))
		return nil, false
	}
	// Not reached for valid JSON, but fail closed if the two parsers disagree.
	fs.add("json", "valid JSON", "a value the decoder accepts but the validator does not")
	return nil, false
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// field is one member of a JSON object, in order of appearance.
type field struct {
	name  string
	value json.RawMessage
}

// object is a decoded JSON object with duplicate detection.
type object struct {
	fields []field
	index  map[string]int // name -> first position in fields
}

func (o object) get(name string) (json.RawMessage, bool) {
	i, ok := o.index[name]
	if !ok {
		return nil, false
	}
	return o.fields[i].value, true
}

// decodeObject splits a valid JSON object into its members. where is the
// object's path ("" for the top level). A duplicate member is a fact: with
// encoding/json the last one would silently win, which is a way to smuggle a
// second verdict past a reader of the first.
func decodeObject(raw json.RawMessage, where string, fs *factList) (object, bool) {
	o := object{index: map[string]int{}}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		fs.add(orAnswer(where), "a JSON object", describe(raw))
		return o, false
	}
	counts := map[string]int{}
	for dec.More() {
		tok, err := dec.Token()
		name, isStr := tok.(string)
		if err != nil || !isStr {
			fs.add(orAnswer(where), "a well-formed JSON object", "a malformed member")
			return o, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			fs.add(path(where, name), "a well-formed JSON value", oneLine(clip(err.Error(), 200)))
			return o, false
		}
		counts[name]++
		if counts[name] == 2 {
			fs.add(path(where, name), "each field at most once", fmt.Sprintf("field %s repeated", quoteExcerpt(name)))
		}
		if _, seen := o.index[name]; !seen {
			o.index[name] = len(o.fields)
		}
		o.fields = append(o.fields, field{name: name, value: v})
	}
	return o, true
}

// fieldSpec describes one allowed member of an object.
type fieldSpec struct {
	name     string
	kind     string // JSON kind required: "string", "array", "object"
	required bool
}

// checkMembers reports unknown members and missing required ones.
func checkMembers(o object, where string, specs []fieldSpec, fs *factList) {
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.name
	}
	for i, f := range o.fields {
		if o.index[f.name] != i {
			continue // duplicate, already reported
		}
		if !hasName(specs, f.name) {
			actual := "unknown field " + quoteExcerpt(f.name)
			if s := closest(f.name, names); s != "" {
				actual += fmt.Sprintf(" (did you mean %q?)", s)
			}
			fs.add(path(where, f.name), "only the fields "+strings.Join(names, ", "), actual)
		}
	}
	for _, s := range specs {
		if _, ok := o.index[s.name]; s.required && !ok {
			fs.add(path(where, s.name), fmt.Sprintf("field %q (%s)", s.name, s.kind), "missing")
		}
	}
}

func hasName(specs []fieldSpec, name string) bool {
	for _, s := range specs {
		if s.name == name {
			return true
		}
	}
	return false
}

// closest returns the candidate within edit distance 2 of name, ignoring case,
// or "" if there is none. It only feeds a hint; it never accepts a typo.
func closest(name string, candidates []string) string {
	if len(name) > 64 {
		return ""
	}
	best, bestD := "", 3
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(name), c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between short strings, by bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// path joins an object path and a member name: path("citations[0]", "quote").
// Names that are not plain identifiers are quoted so the path stays readable.
func path(where, name string) string {
	if !plainName(name) {
		name = quoteExcerpt(name)
	}
	if where == "" {
		return name
	}
	return where + "." + name
}

func plainName(s string) bool {
	if s == "" || len(s) > 40 {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func orAnswer(where string) string {
	if where == "" {
		return "answer"
	}
	return where
}

func index(where string, i int) string { return where + "[" + itoa(i) + "]" }

// stringValue decodes a JSON string, or reports its wrong kind.
func stringValue(raw json.RawMessage, where string, fs *factList) (string, bool) {
	if kindOf(raw) != "string" {
		fs.add(where, "string", describe(raw))
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		fs.add(where, "string", oneLine(clip(err.Error(), 200)))
		return "", false
	}
	return s, true
}

// arrayValue decodes a JSON array into its elements, or reports its wrong kind
// or excessive length.
func arrayValue(raw json.RawMessage, where string, fs *factList) ([]json.RawMessage, bool) {
	if kindOf(raw) != "array" {
		fs.add(where, "array", describe(raw))
		return nil, false
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		fs.add(where, "array", oneLine(clip(err.Error(), 200)))
		return nil, false
	}
	if len(items) > MaxListItems {
		fs.add(where, fmt.Sprintf("at most %d entries", MaxListItems), fmt.Sprintf("%d entries", len(items)))
		return nil, false
	}
	return items, true
}

// stringMember reads the string member name of o, if present.
func stringMember(o object, where, name string, fs *factList) (string, bool) {
	raw, ok := o.get(name)
	if !ok {
		return "", false
	}
	return stringValue(raw, path(where, name), fs)
}

// checkKindMember reports a member name of o, if present, that is not a JSON
// kind, without decoding it (the strict decode does that once, later).
func checkKindMember(o object, where, name, kind string, fs *factList) {
	if raw, ok := o.get(name); ok && kindOf(raw) != kind {
		fs.add(path(where, name), kind, describe(raw))
	}
}

// arrayMember reads the array member name of o, if present.
func arrayMember(o object, where, name string, fs *factList) ([]json.RawMessage, bool) {
	raw, ok := o.get(name)
	if !ok {
		return nil, false
	}
	return arrayValue(raw, path(where, name), fs)
}

// objectValue decodes a JSON object element, or reports its wrong kind.
func objectValue(raw json.RawMessage, where string, fs *factList) (object, bool) {
	if kindOf(raw) != "object" {
		fs.add(where, "object", describe(raw))
		return object{}, false
	}
	return decodeObject(raw, where, fs)
}

// strictDecode decodes an already checked object into v, refusing unknown
// fields and trailing data. ParseAnswer uses it as a second, independent line
// of defence: if it disagrees with the member checks, the answer fails.
func strictDecode(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("more than one JSON value")
	}
	return nil
}
