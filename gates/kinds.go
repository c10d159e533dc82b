package gates

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// KindInfo describes a built-in rule kind for `questbox rules` and config
// documentation.
type KindInfo struct {
	Name        string `json:"kind"`
	Stage       Stage  `json:"stage"`
	Description string `json:"description"`
	Params      string `json:"params"`
}

type kind struct {
	KindInfo
	build func(p *params) (Rule, error)
}

// Field names that field-reading kinds (regex, dates, mx-resolves) accept.
const fieldHelp = "raw | evidence | verdict | citations.source | citations.quote | new_directions"

func fieldParam(p *params, required bool) (string, error) {
	return p.oneOf("field", required, "evidence", "raw", "evidence", "verdict", "citations.source", "citations.quote", "new_directions")
}

// kinds returns the built-in kinds, in the order `rules` lists them. It is a
// function, not a variable: gates has no package state.
func kinds() []kind {
	return []kind{
		{KindInfo{RuleContract, StagePure, ContractCheck{}.Description(), "none"},
			func(*params) (Rule, error) { return ContractRule(), nil }},
		{KindInfo{RuleEvidenceLength, StagePure, "the evidence is between min and max characters long",
			"min (integer, default 0), max (integer, required)"},
			func(p *params) (Rule, error) {
				lo, err := p.integer("min", false, 0)
				if err != nil {
					return nil, err
				}
				hi, err := p.integer("max", true, 0)
				if err != nil {
					return nil, err
				}
				r := EvidenceLength(int(lo), int(hi))
				return r, r.Validate()
			}},
		{KindInfo{RuleFreshDirections, StagePure, FreshDirectionsCheck{}.Description(), "none"},
			func(*params) (Rule, error) { return NewDirectionsFresh(), nil }},
		{KindInfo{RuleCitationsPresent, StagePure, CitationsPresentCheck{}.Description(), "none"},
			func(*params) (Rule, error) { return CitationsPresent(), nil }},
		{KindInfo{RuleCitationQuote, StageGround, CitationQuoteCheck{}.Description(), "none"},
			func(*params) (Rule, error) { return CitationQuote(), nil }},
		{KindInfo{RuleURLResolves, StageGround, URLResolvesCheck{}.Description(), "none"},
			func(*params) (Rule, error) { return URLResolves(), nil }},
		{KindInfo{RuleMXResolves, StageGround, "every e-mail address in the field has a domain with MX records",
			"field (" + fieldHelp + ", default evidence)"},
			func(p *params) (Rule, error) {
				f, err := fieldParam(p, false)
				return MXResolves(f), err
			}},
		{KindInfo{RuleProgram, StageGround, "a program run with the answer on stdin exits zero, exits non-zero, or prints a given text",
			"argv (list of strings, required), expect (exit_zero | exit_nonzero | stdout_contains, required), contains (string, for stdout_contains), timeout (e.g. 30s, default 30s)"},
			func(p *params) (Rule, error) {
				argv, err := p.strs("argv", true)
				if err != nil {
					return nil, err
				}
				expect, err := p.oneOf("expect", true, "", ExpectExitZero, ExpectExitNonzero, ExpectStdoutContains)
				if err != nil {
					return nil, err
				}
				contains, err := p.str("contains", expect == ExpectStdoutContains, "")
				if err != nil {
					return nil, err
				}
				ms, err := p.millis("timeout", 30000)
				if err != nil {
					return nil, err
				}
				return Program(argv, expect, contains, ms)
			}},
		{KindInfo{RuleDates, StagePure, "every date in the field is a real date in a known form, at least min of them, and none after the reference date (with not_future)",
			"field (" + fieldHelp + ", default evidence), min (integer, default 0), not_future (boolean, default true)"},
			func(p *params) (Rule, error) {
				f, err := fieldParam(p, false)
				if err != nil {
					return nil, err
				}
				lo, err := p.integer("min", false, 0)
				if err != nil {
					return nil, err
				}
				nf, err := p.boolean("not_future", true)
				if err != nil {
					return nil, err
				}
				if lo < 0 {
					return nil, fmt.Errorf("parameter min is %d (want >= 0): %w", lo, ErrInvalidConfig)
				}
				return Dates(f, int(lo), nf), nil
			}},
		{KindInfo{RuleRegex, StagePure, "a field matches (or must not match) a regular expression (RE2 syntax)",
			"field (" + fieldHelp + ", required), pattern (string, required), mode (must_match | must_not_match, default must_match)"},
			func(p *params) (Rule, error) {
				f, err := fieldParam(p, true)
				if err != nil {
					return nil, err
				}
				pat, err := p.str("pattern", true, "")
				if err != nil {
					return nil, err
				}
				mode, err := p.oneOf("mode", false, "must_match", "must_match", "must_not_match")
				if err != nil {
					return nil, err
				}
				return Regex(f, pat, mode == "must_match")
			}},
		{KindInfo{RuleLimits, StagePure, "the answer stays within limits on citations, new directions and evidence size",
			"max_citations, max_new_directions, max_evidence_bytes (positive integers; at least one)"},
			func(p *params) (Rule, error) {
				var l [3]int64
				for i, name := range []string{"max_citations", "max_new_directions", "max_evidence_bytes"} {
					v, err := p.integer(name, false, 0)
					if err != nil {
						return nil, err
					}
					l[i] = v
				}
				r := Limits(int(l[0]), int(l[1]), int(l[2]))
				return r, r.Validate()
			}},
	}
}

// Kinds lists the built-in rule kinds, for `questbox rules` without a quest.
func Kinds() []KindInfo {
	var out []KindInfo
	for _, k := range kinds() {
		out = append(out, k.KindInfo)
	}
	return out
}

func kindByName(name string) (kind, bool) {
	for _, k := range kinds() {
		if k.Name == name {
			return k, true
		}
	}
	return kind{}, false
}

func kindNames() []string {
	var out []string
	for _, k := range kinds() {
		out = append(out, k.Name)
	}
	return out
}

// Ids (and kind names) of the built-in rules added with the catalog loader.
const (
	RuleCitationQuote = "citation-quote"
	RuleURLResolves   = "url-resolves"
	RuleMXResolves    = "mx-resolves"
	RuleProgram       = "program"
	RuleDates         = "dates"
	RuleRegex         = "regex"
	RuleLimits        = "limits"
)

// fieldVal is one value of a named field, with where it is.
type fieldVal struct {
	where, text string
	memo        *textMemo // what regex rules derive from text, once (nil: not shared)
}

// textMemo holds what the regex rules of one evaluation derive from a
// value's text, computed once for all of them.
type textMemo struct {
	lowered       string // the text with its ASCII letters lowered
	odd           bool   // hasOddFold(text)
	done, doneOdd bool
}

// lowered is the text with its ASCII letters lowered.
func (v fieldVal) lowered() string {
	if v.memo == nil {
		return asciiLower(v.text)
	}
	if !v.memo.done {
		v.memo.lowered, v.memo.done = asciiLower(v.text), true
	}
	return v.memo.lowered
}

// usable reports whether the prefilter p is exact on this value.
func (v fieldVal) usable(p prefilter) bool {
	if !p.ks {
		return true
	}
	if v.memo == nil {
		return p.usable(v.text)
	}
	if !v.memo.doneOdd {
		v.memo.odd, v.memo.doneOdd = hasOddFold(v.text), true
	}
	return !v.memo.odd
}

// fieldValuesMemo is fieldValues through the evaluation's memo: the
// rules reading the same field share its values (and their lowered
// forms) instead of each building them.
func fieldValuesMemo(in Input, field string) ([]fieldVal, bool) {
	if in.memo == nil {
		return fieldValues(in, field)
	}
	for i := range in.memo.nfields {
		if fv := &in.memo.fields[i]; fv.name == field {
			return fv.vals, fv.ok
		}
	}
	vals, ok := fieldValues(in, field)
	if len(vals) == 1 && in.memo.nfields < len(in.memo.text1) {
		vals[0].memo = &in.memo.text1[in.memo.nfields]
	} else {
		for i := range vals {
			vals[i].memo = new(textMemo)
		}
	}
	if in.memo.nfields < len(in.memo.fields) {
		in.memo.fields[in.memo.nfields] = memoField{field, vals, ok}
		in.memo.nfields++
	}
	return vals, ok
}

// memoField is one field's values in a parseMemo.
type memoField struct {
	name string
	vals []fieldVal
	ok   bool
}

// fieldValues returns the values of field in the submission. ok is false
// when the contract does not hold (except for "raw").
func fieldValues(in Input, field string) (vals []fieldVal, ok bool) {
	if field == "raw" {
		return []fieldVal{{where: "answer", text: string(in.Raw)}}, true
	}
	p, ok := parse(in)
	if !ok {
		return nil, false
	}
	if p.owner != nil {
		switch field {
		case "evidence":
			return []fieldVal{{where: "evidence", text: p.owner.Evidence}}, true
		case "new_directions":
			for i, a := range p.owner.Actions {
				if a.Action == ActionSpawn {
					vals = append(vals, fieldVal{where: path(index("actions", i), "hypothesis"), text: a.Hypothesis})
				}
			}
		}
		return vals, true
	}
	a := p.answer
	switch field {
	case "evidence":
		vals = []fieldVal{{where: "evidence", text: a.Evidence}}
	case "verdict":
		vals = []fieldVal{{where: "verdict", text: a.Verdict}}
	case "citations.source", "citations.quote":
		for i, c := range a.Citations {
			if field == "citations.source" {
				vals = append(vals, fieldVal{where: path(index("citations", i), "source"), text: c.Source})
			} else {
				vals = append(vals, fieldVal{where: path(index("citations", i), "quote"), text: c.Quote})
			}
		}
	case "new_directions":
		for i, d := range a.NewDirections {
			vals = append(vals, fieldVal{where: index("new_directions", i), text: d})
		}
	}
	return vals, true
}

// isURL reports whether a citation source is fetched by ground.
func isURL(s string) bool {
	l := strings.ToLower(s)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}

// CitationQuoteCheck fails a citation whose quote does not occur in its
// source: id "citation-quote", stage ground. A URL source is fetched by
// ground (its body must answer 2xx; HTML is reduced to text with
// [HTMLText]); any other source must be a document in Input.Sources. The
// match is [ContainsQuote]: NFKC width variants, case and extra white space
// match; invisible characters in the quote that the source lacks do not.
type CitationQuoteCheck struct{}

// CitationQuote returns the citation-quote rule.
func CitationQuote() CitationQuoteCheck { return CitationQuoteCheck{} }

func (CitationQuoteCheck) ID() string   { return RuleCitationQuote }
func (CitationQuoteCheck) Level() Level { return Fail }
func (CitationQuoteCheck) Stage() Stage { return StageGround }
func (CitationQuoteCheck) Description() string {
	return "every citation's quote occurs in its source (fetched URL or known document), after normalising width, case and white space"
}

// Needs implements [GroundRule]: the URL sources.
func (CitationQuoteCheck) Needs(in Input) []Request { return citedURLs(in) }

func citedURLs(in Input) []Request {
	p, ok := parse(in)
	if !ok || p.answer == nil {
		return nil
	}
	var out []Request
	for _, c := range p.answer.Citations {
		if isURL(c.Source) {
			out = append(out, Request{Kind: ReqFetchURL, Target: c.Source})
		}
	}
	return out
}

// Check implements [Rule].
func (r CitationQuoteCheck) Check(in Input) []Fact {
	p, ok := parse(in)
	if !ok || p.answer == nil {
		return nil
	}
	var facts []Fact
	for i, c := range p.answer.Citations {
		where := path(index("citations", i), "quote")
		var text, note string
		if isURL(c.Source) {
			o, f := observe(RuleCitationQuote, in, Request{Kind: ReqFetchURL, Target: c.Source})
			if f != nil {
				f.Where = path(index("citations", i), "source")
				facts = append(facts, *f)
				continue
			}
			if bad := badFetch(o); bad != "" {
				facts = append(facts, Fact{Rule: RuleCitationQuote, Level: Fail, Where: path(index("citations", i), "source"),
					Expected: "a source that answers 2xx", Actual: quoteExcerpt(c.Source) + " " + bad})
				continue
			}
			text = HTMLText(o.Body)
			if o.Truncated {
				note = " (only the first " + itoa(len(o.Body)) + " bytes of the source were read)"
			}
		} else {
			doc, ok := in.Sources[c.Source]
			if !ok {
				facts = append(facts, Fact{Rule: RuleCitationQuote, Level: Fail, Where: path(index("citations", i), "source"),
					Expected: "an http(s) URL or a document the gate knows", Actual: quoteExcerpt(c.Source)})
				continue
			}
			text = doc
		}
		if !ContainsQuote(text, c.Quote) {
			facts = append(facts, Fact{Rule: RuleCitationQuote, Level: Fail, Where: where,
				Expected: "a quote found in " + quoteExcerpt(c.Source),
				Actual:   quoteExcerpt(c.Quote) + " is not in the source" + note})
		}
	}
	return facts
}

// badFetch describes a fetch that did not give a usable 2xx body, or "".
func badFetch(o Observation) string {
	switch {
	case o.Err != "":
		return "could not be fetched: " + clip(o.Err, 200)
	case o.Status < 200 || o.Status > 299:
		return "answered HTTP " + itoa(o.Status)
	}
	return ""
}

// URLResolvesCheck fails a cited URL that does not answer 2xx: id
// "url-resolves", stage ground.
type URLResolvesCheck struct{}

// URLResolves returns the url-resolves rule.
func URLResolves() URLResolvesCheck { return URLResolvesCheck{} }

func (URLResolvesCheck) ID() string   { return RuleURLResolves }
func (URLResolvesCheck) Level() Level { return Fail }
func (URLResolvesCheck) Stage() Stage { return StageGround }
func (URLResolvesCheck) Description() string {
	return "every cited http(s) source resolves and answers 2xx (after at most a few redirects)"
}

// Needs implements [GroundRule].
func (URLResolvesCheck) Needs(in Input) []Request { return citedURLs(in) }

// Check implements [Rule].
func (URLResolvesCheck) Check(in Input) []Fact {
	var facts []Fact
	p, ok := parse(in)
	if !ok || p.answer == nil {
		return nil
	}
	for i, c := range p.answer.Citations {
		if !isURL(c.Source) {
			continue
		}
		where := path(index("citations", i), "source")
		o, f := observe(RuleURLResolves, in, Request{Kind: ReqFetchURL, Target: c.Source})
		if f != nil {
			f.Where = where
			facts = append(facts, *f)
			continue
		}
		if bad := badFetch(o); bad != "" {
			facts = append(facts, Fact{Rule: RuleURLResolves, Level: Fail, Where: where,
				Expected: "a URL that answers 2xx", Actual: quoteExcerpt(c.Source) + " " + bad})
		}
	}
	return facts
}

// MXResolvesCheck fails e-mail addresses whose domain has no MX records: id
// "mx-resolves", stage ground.
type MXResolvesCheck struct{ field string }

// MXResolves returns the mx-resolves rule for the addresses in field.
func MXResolves(field string) MXResolvesCheck { return MXResolvesCheck{field: field} }

func (MXResolvesCheck) ID() string   { return RuleMXResolves }
func (MXResolvesCheck) Level() Level { return Fail }
func (MXResolvesCheck) Stage() Stage { return StageGround }
func (r MXResolvesCheck) Description() string {
	return "every e-mail address in " + r.field + " has a domain with MX records"
}

type email struct{ where, addr, domain string }

func (r MXResolvesCheck) emails(in Input) []email {
	vals, ok := fieldValues(in, r.field)
	if !ok {
		return nil
	}
	var out []email
	for _, v := range vals {
		for _, w := range strings.FieldsFunc(v.text, func(c rune) bool {
			return c == ' ' || c == ',' || c == ';' || c == '<' || c == '>' || c == '(' || c == ')' || c == '"' || c == '\'' || c == '\n' || c == '\t'
		}) {
			w = strings.TrimRight(w, ".:")
			at := strings.LastIndexByte(w, '@')
			if at <= 0 || at == len(w)-1 || !strings.Contains(w[at+1:], ".") {
				continue
			}
			out = append(out, email{v.where, w, strings.ToLower(w[at+1:])})
		}
	}
	return out
}

// Needs implements [GroundRule].
func (r MXResolvesCheck) Needs(in Input) []Request {
	var out []Request
	for _, e := range r.emails(in) {
		out = append(out, Request{Kind: ReqLookupMX, Target: e.domain})
	}
	return out
}

// Check implements [Rule].
func (r MXResolvesCheck) Check(in Input) []Fact {
	var facts []Fact
	for _, e := range r.emails(in) {
		o, f := observe(RuleMXResolves, in, Request{Kind: ReqLookupMX, Target: e.domain})
		if f != nil {
			f.Where = e.where
			facts = append(facts, *f)
			continue
		}
		if o.Err != "" || len(o.MX) == 0 {
			actual := quoteExcerpt(e.addr) + ": " + e.domain + " has no MX records"
			if o.Err != "" {
				actual = quoteExcerpt(e.addr) + ": " + clip(o.Err, 200)
			}
			facts = append(facts, Fact{Rule: RuleMXResolves, Level: Fail, Where: e.where,
				Expected: "an address whose domain accepts mail (MX)", Actual: actual})
		}
	}
	return facts
}

// What a program check expects.
const (
	ExpectExitZero       = "exit_zero"
	ExpectExitNonzero    = "exit_nonzero"
	ExpectStdoutContains = "stdout_contains"
)

// ProgramCheck runs a program with the raw answer on stdin (through ground,
// which runs it; the rule only reads the result): id "program", stage
// ground. Running a program needs no network, so it is not deferred while
// the box is offline. A program that cannot start or times out fails.
type ProgramCheck struct {
	argv     []string
	expect   string
	contains string
	millis   int64
}

// Program returns a program rule. argv must be non-empty with a non-blank
// program, expect one of the Expect constants, contains non-empty for
// ExpectStdoutContains, and timeoutMillis positive.
func Program(argv []string, expect, contains string, timeoutMillis int64) (ProgramCheck, error) {
	r := ProgramCheck{argv: slices.Clone(argv), expect: expect, contains: contains, millis: timeoutMillis}
	return r, r.Validate()
}

func (ProgramCheck) ID() string   { return RuleProgram }
func (ProgramCheck) Level() Level { return Fail }
func (ProgramCheck) Stage() Stage { return StageGround }
func (r ProgramCheck) Description() string {
	cmd := strings.Join(r.argv, " ")
	switch r.expect {
	case ExpectExitNonzero:
		return fmt.Sprintf("%q, run with the answer on stdin, exits non-zero within %dms", cmd, r.millis)
	case ExpectStdoutContains:
		return fmt.Sprintf("%q, run with the answer on stdin, prints %q within %dms", cmd, r.contains, r.millis)
	}
	return fmt.Sprintf("%q, run with the answer on stdin, exits zero within %dms", cmd, r.millis)
}

// Validate implements [Validator].
func (r ProgramCheck) Validate() error {
	switch {
	case len(r.argv) == 0 || strings.TrimSpace(r.argv[0]) == "":
		return fmt.Errorf("argv is empty: %w", ErrInvalidConfig)
	case r.expect != ExpectExitZero && r.expect != ExpectExitNonzero && r.expect != ExpectStdoutContains:
		return fmt.Errorf("expect is %q: %w", r.expect, ErrInvalidConfig)
	case r.expect == ExpectStdoutContains && r.contains == "":
		return fmt.Errorf("contains is empty for stdout_contains: %w", ErrInvalidConfig)
	case r.millis <= 0:
		return fmt.Errorf("timeout is %dms: %w", r.millis, ErrInvalidConfig)
	}
	return nil
}

func (r ProgramCheck) request(in Input) Request {
	return Request{Kind: ReqRun, Argv: r.argv, Stdin: string(in.Raw), TimeoutMillis: r.millis}
}

// Needs implements [GroundRule].
func (r ProgramCheck) Needs(in Input) []Request { return []Request{r.request(in)} }

// Check implements [Rule].
func (r ProgramCheck) Check(in Input) []Fact {
	if err := r.Validate(); err != nil {
		return []Fact{{Rule: RuleProgram, Level: Fail, Where: "rule", Expected: "a valid configuration", Actual: err.Error()}}
	}
	o, f := observe(RuleProgram, in, r.request(in))
	if f != nil {
		return []Fact{*f}
	}
	fact := func(expected, actual string) []Fact {
		return []Fact{{Rule: RuleProgram, Level: Fail, Where: "program", Expected: expected, Actual: actual}}
	}
	out := quoteExcerpt(o.Stdout)
	switch {
	case o.Err != "":
		return fact("the program to run", clip(o.Err, 200))
	case o.TimedOut:
		return fact(fmt.Sprintf("the program to finish within %dms", r.millis), "it was killed; stdout "+out)
	case r.expect == ExpectExitZero && o.ExitCode != 0:
		return fact("exit status 0", fmt.Sprintf("exit status %d; stdout %s", o.ExitCode, out))
	case r.expect == ExpectExitNonzero && o.ExitCode == 0:
		return fact("a non-zero exit status", "exit status 0; stdout "+out)
	case r.expect == ExpectStdoutContains && !strings.Contains(o.Stdout, r.contains):
		return fact("stdout containing "+quoteExcerpt(r.contains), "stdout "+out)
	}
	return nil
}

// RegexCheck fails when a field does (not) match a regular expression: id
// "regex", stage pure. Go's RE2 engine runs in linear time, so a hostile
// answer cannot make it slow. With must-match, every value of the field must
// match (a list field with no values has nothing to match and passes);
// with must-not-match, no value may match.
type RegexCheck struct {
	field     string
	re        *regexp.Regexp
	mustMatch bool
	pre       prefilter // a literal every match contains (prefilter.go)
	hasPre    bool
	expected  string // the facts' Expected, built once
}

// Regex returns a regex rule; the pattern must compile.
func Regex(field, pattern string, mustMatch bool) (RegexCheck, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return RegexCheck{}, fmt.Errorf("parameter pattern: %v: %w", err, ErrInvalidConfig)
	}
	pre, ok := literalOf(pattern)
	expected := "text not matching /" + re.String() + "/"
	if mustMatch {
		expected = "text matching /" + re.String() + "/"
	}
	return RegexCheck{field: field, re: re, mustMatch: mustMatch, pre: pre, hasPre: ok, expected: expected}, nil
}

func (RegexCheck) ID() string   { return RuleRegex }
func (RegexCheck) Level() Level { return Fail }
func (RegexCheck) Stage() Stage { return StagePure }
func (r RegexCheck) Description() string {
	if r.re == nil {
		return "a field matches a regular expression"
	}
	if r.mustMatch {
		return fmt.Sprintf("%s matches /%s/", r.field, r.re)
	}
	return fmt.Sprintf("%s does not match /%s/", r.field, r.re)
}

// Validate implements [Validator].
func (r RegexCheck) Validate() error {
	if r.re == nil {
		return fmt.Errorf("no pattern (use Regex to build the rule): %w", ErrInvalidConfig)
	}
	return nil
}

func (r RegexCheck) silentWithoutContract() bool { return r.re != nil && r.field != "raw" }

// Check implements [Rule].
func (r RegexCheck) Check(in Input) []Fact {
	if r.re == nil {
		return []Fact{{Rule: RuleRegex, Level: Fail, Where: "rule", Expected: "a valid configuration", Actual: "no pattern"}}
	}
	vals, ok := fieldValuesMemo(in, r.field)
	if !ok {
		return nil
	}
	var facts []Fact
	for _, v := range vals {
		var m []int
		switch {
		case !r.hasPre || !v.usable(r.pre):
			m = r.re.FindStringIndex(v.text)
		case r.pre.whole:
			m = r.pre.match(v.text, v.lowered())
		case r.pre.mayMatch(v.text, v.lowered()):
			m = r.re.FindStringIndex(v.text)
		}
		switch {
		case r.mustMatch && m == nil:
			facts = append(facts, Fact{Rule: RuleRegex, Level: Fail, Where: v.where,
				Expected: r.expected, Actual: quoteExcerpt(v.text)})
		case !r.mustMatch && m != nil:
			facts = append(facts, Fact{Rule: RuleRegex, Level: Fail, Where: v.where,
				Expected: r.expected, Actual: "it contains " + quoteExcerpt(v.text[m[0]:m[1]])})
		}
	}
	return facts
}

// LimitsCheck bounds an answer: id "limits", stage pure. A zero limit is
// not checked; at least one must be set.
type LimitsCheck struct{ maxCitations, maxNewDirections, maxEvidenceBytes int }

// Limits returns a limits rule.
func Limits(maxCitations, maxNewDirections, maxEvidenceBytes int) LimitsCheck {
	return LimitsCheck{maxCitations, maxNewDirections, maxEvidenceBytes}
}

func (LimitsCheck) ID() string   { return RuleLimits }
func (LimitsCheck) Level() Level { return Fail }
func (LimitsCheck) Stage() Stage { return StagePure }
func (r LimitsCheck) Description() string {
	var parts []string
	if r.maxCitations > 0 {
		parts = append(parts, fmt.Sprintf("at most %d citations", r.maxCitations))
	}
	if r.maxNewDirections > 0 {
		parts = append(parts, fmt.Sprintf("at most %d new directions", r.maxNewDirections))
	}
	if r.maxEvidenceBytes > 0 {
		parts = append(parts, fmt.Sprintf("at most %d bytes of evidence", r.maxEvidenceBytes))
	}
	return "the answer has " + strings.Join(parts, ", ")
}

// Validate implements [Validator].
func (r LimitsCheck) Validate() error {
	if r.maxCitations < 0 || r.maxNewDirections < 0 || r.maxEvidenceBytes < 0 {
		return fmt.Errorf("limits must not be negative: %w", ErrInvalidConfig)
	}
	if r.maxCitations == 0 && r.maxNewDirections == 0 && r.maxEvidenceBytes == 0 {
		return fmt.Errorf("no limit set (max_citations, max_new_directions or max_evidence_bytes): %w", ErrInvalidConfig)
	}
	return nil
}

func (r LimitsCheck) silentWithoutContract() bool { return r.Validate() == nil }

// Check implements [Rule].
func (r LimitsCheck) Check(in Input) []Fact {
	if err := r.Validate(); err != nil {
		return []Fact{{Rule: RuleLimits, Level: Fail, Where: "rule", Expected: "a valid configuration", Actual: err.Error()}}
	}
	p, ok := parse(in)
	if !ok {
		return nil
	}
	var cites, dirs int
	var ev string
	if p.answer != nil {
		cites, dirs, ev = len(p.answer.Citations), len(p.answer.NewDirections), p.answer.Evidence
	} else {
		ev = p.owner.Evidence
		for _, a := range p.owner.Actions {
			if a.Action == ActionSpawn {
				dirs++
			}
		}
	}
	var facts []Fact
	over := func(where string, limit, got int, unit string) {
		if limit > 0 && got > limit {
			facts = append(facts, Fact{Rule: RuleLimits, Level: Fail, Where: where,
				Expected: fmt.Sprintf("at most %d %s", limit, unit), Actual: fmt.Sprintf("%d %s", got, unit)})
		}
	}
	over("citations", r.maxCitations, cites, "citations")
	over("new_directions", r.maxNewDirections, dirs, "new directions")
	over("evidence", r.maxEvidenceBytes, len(ev), "bytes")
	return facts
}
