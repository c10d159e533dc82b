package gates

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// slowParseAnswer is ParseAnswer without the fast path: the reference.
func slowParseAnswer(text []byte) (Answer, []Fact) {
	var fs factList
	objRaw, ok := parseObjectText(text, &fs)
	if !ok {
		return Answer{}, fs.facts()
	}
	return parseAnswerObject(objRaw, &fs)
}

// checkFastAnswer holds parseAnswerFast to the slow path on text: when it
// accepts, the slow path must accept with the same Answer.
func checkFastAnswer(t *testing.T, text []byte) (accepted bool) {
	t.Helper()
	got, ok := parseAnswerFast(text)
	want, facts := slowParseAnswer(text)
	if ok && (len(facts) > 0 || !reflect.DeepEqual(got, want)) {
		t.Errorf("text %q: fast path accepted %#v, slow path gives %#v %v", text, got, want, facts)
	}
	return ok
}

// answerFragments build random, mostly well-formed answers.
var answerFragments = []string{
	`{`, `}`, `[`, `]`, `:`, `,`, ` `, "\n", "\t", "\r", "\f", "\v", "\u00a0",
	`"verdict"`, `"evidence"`, `"citations"`, `"new_directions"`, `"source"`, `"quote"`, `"Verdict"`, `"verd\u0069ct"`, `"x"`, `""`,
	`"promising"`, `"dead"`, `"conclusion"`, `"Promising"`, `"text"`, `" "`, `"\u00a0"`, `"a\"b"`, `"a\\b"`, `"\/"`, `"\b\f\n\r\t"`,
	`"\u0041"`, `"\u00e9"`, `"\ud83d\ude00"`, `"\ud800"`, `"\u12"`, `"\x"`, "\"tab\there\"", `"é"`, "\"\xff\"", `"日本"`,
	`null`, `1`, `true`, `{}`, `[]`, `"u2028\u2028"`,
}

func validAnswerText(r *rand.Rand) string {
	str := func() string {
		return answerFragments[23+r.IntN(24)]
	}
	ws := func() string { return []string{"", " ", "\n", "\t", "\r\n  "}[r.IntN(5)] }
	var members []string
	members = append(members, `"verdict":`+ws()+[]string{`"promising"`, `"dead"`, `"conclusion"`, str()}[r.IntN(4)])
	members = append(members, `"evidence":`+ws()+str())
	var cites []string
	for range r.IntN(3) {
		cites = append(cites, `{"source":`+str()+`,`+ws()+`"quote":`+str()+`}`)
	}
	members = append(members, `"citations":[`+strings.Join(cites, ",")+`]`)
	var dirs []string
	for range r.IntN(3) {
		dirs = append(dirs, str())
	}
	members = append(members, `"new_directions":[`+ws()+strings.Join(dirs, ","+ws())+`]`)
	r.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
	return ws() + "{" + ws() + strings.Join(members, ","+ws()) + ws() + "}" + ws()
}

func TestParseAnswerFastAgreesWithSlowPath(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	fast := 0
	for range 20000 {
		text := validAnswerText(r)
		if r.IntN(3) == 0 { // damage it
			b := []byte(text)
			switch i := r.IntN(len(b)); r.IntN(3) {
			case 0:
				b = append(b[:i], b[i+1:]...)
			case 1:
				b[i] = answerFragments[r.IntN(13)][0]
			default:
				frag := answerFragments[r.IntN(len(answerFragments))]
				b = append(b[:i], append([]byte(frag), b[i:]...)...)
			}
			text = string(b)
		}
		if checkFastAnswer(t, []byte(text)) {
			fast++
		}
		if t.Failed() {
			return
		}
	}
	if fast < 1000 {
		t.Errorf("the fast path accepted only %d of 20000 answers: it is not exercised", fast)
	}
	// Every answer set that is valid takes the fast path.
	for _, set := range answerSets {
		in := answerSetInput(t, set)
		var fs factList
		if text, ok := locateJSON(in.Raw, &fs); ok && !checkFastAnswer(t, text) {
			t.Errorf("%s: the fast path declined it", set)
		}
	}
}

func FuzzParseAnswerFast(f *testing.F) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 20 {
		f.Add([]byte(validAnswerText(r)))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		checkFastAnswer(t, text)
	})
}

// TestQuietRulesSkipped checks that skipping the rules that are silent
// without the contract changes no report: a catalog with and without the
// plan agree on random, often broken, answers. The catalogs are the bench
// catalog (contract first, 19 quiet rules) and the same with rules that
// read the raw answer (not quiet) before, between and after quiet ones.
func TestQuietRulesSkipped(t *testing.T) {
	mixed := benchSpecs()
	raw := func(id, pattern string) RuleSpec {
		return RuleSpec{ID: id, Kind: "regex", Level: "review", Params: map[string]any{"field": "raw", "pattern": pattern, "mode": "must_not_match"}}
	}
	mixed = slices.Insert(mixed, 0, raw("raw-first", "(?i)sorry|```"))
	mixed = slices.Insert(mixed, 8, raw("raw-middle", `\n\n`))
	mixed = append(mixed, raw("raw-last", "(?i)json"))
	mixedCat, err := LoadCatalog(mixed)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		c     *Catalog
		quiet int
	}{
		{"bench", answerSetCatalog(t, false), 19},
		{"bench graph", answerSetCatalog(t, true), 19},
		{"raw rules among quiet ones", mixedCat, 19},
	} {
		c := tc.c
		plain := *c
		plain.entries = slices.Clone(c.entries)
		quiet := 0
		for i := range plain.entries {
			if plain.entries[i].quiet {
				quiet++
			}
			plain.entries[i].quiet = false
		}
		if quiet != tc.quiet {
			t.Errorf("%s: got %d quiet rules, want %d", tc.name, quiet, tc.quiet)
		}
		r := rand.New(rand.NewPCG(11, 12))
		for k := range 3000 {
			text := validAnswerText(r)
			if r.IntN(2) == 0 {
				text = text[:r.IntN(len(text))]
			}
			in := benchInput()
			in.Raw = []byte("Findings.\n```json\n" + text + "\n```\n")
			if k%3 == 0 {
				in.Raw = []byte("sorry, no JSON\n\n" + text) // fails the contract outside a fence
			}
			if got, want := c.Report(in), plain.Report(in); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: %q: with the plan %v, without %v", tc.name, in.Raw, got, want)
			}
			if got, want := c.Evaluate(in), plain.Evaluate(in); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: %q: with the plan %v, without %v", tc.name, in.Raw, got, want)
			}
		}
	}
}

// TestQuoteExcerpt holds quoteExcerpt to its definition: strconv.Quote of
// the text clipped to excerptBytes, with "…" after the quote when clipped.
func TestQuoteExcerpt(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for range 20000 {
		b := make([]byte, r.IntN(90))
		for i := range b {
			switch r.IntN(4) {
			case 0:
				b[i] = byte(r.IntN(256))
			case 1:
				b[i] = "\"\\\x7f\x1f …"[r.IntN(8)]
			default:
				b[i] = byte(0x20 + r.IntN(0x5f))
			}
		}
		s := string(b)
		want := strconv.Quote(s)
		if len(s) > excerptBytes {
			want = strconv.Quote(strings.TrimSuffix(clip(s, excerptBytes), "…")) + "…"
		}
		if got := quoteExcerpt(s); got != want {
			t.Fatalf("quoteExcerpt(%q) = %s, want %s", s, got, want)
		}
	}
}
