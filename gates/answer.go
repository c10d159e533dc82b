package gates

import (
	"fmt"
	"strings"
)

// The verdicts a worker may give (docs/design.md, "Providers and the worker's
// answer").
const (
	VerdictPromising  = "promising"
	VerdictDead       = "dead"
	VerdictConclusion = "conclusion"
)

// verdictSet is shown in facts about an unknown verdict.
const verdictSet = VerdictPromising + "|" + VerdictDead + "|" + VerdictConclusion

// Citation is one source backing a claim and the exact words quoted from it.
type Citation struct {
	Source string `json:"source"`
	Quote  string `json:"quote"`
}

// Answer is a worker's answer under the output contract (docs/design.md,
// "Providers and the worker's answer"). All four fields are required in the
// JSON, though the lists may be empty ([]); null is not an empty list.
type Answer struct {
	Verdict       string     `json:"verdict"` // promising|dead|conclusion
	Evidence      string     `json:"evidence"`
	Citations     []Citation `json:"citations"`
	NewDirections []string   `json:"new_directions"`
}

func answerFields() []fieldSpec {
	return []fieldSpec{
		{name: "verdict", kind: "string", required: true},
		{name: "evidence", kind: "string", required: true},
		{name: "citations", kind: "array", required: true},
		{name: "new_directions", kind: "array", required: true},
	}
}

func citationFields() []fieldSpec {
	return []fieldSpec{
		{name: "source", kind: "string", required: true},
		{name: "quote", kind: "string", required: true},
	}
}

// ParseAnswer reads a worker's answer: the last fenced ```json block of raw, or
// the whole of raw if it is one JSON object (see extract.go for the exact
// fence rules). The returned facts are empty if and only if the answer is
// valid; when they are not, the Answer is the zero value, so half-parsed data
// cannot be used by mistake. Every fact has rule "contract" and level Fail.
//
// Strictness: unknown, duplicated, missing and wrongly typed fields are facts;
// field names are case-sensitive; the verdict must be exactly one of the three
// lower-case words; citations need a non-blank source and quote; new
// directions must be non-blank; lists hold at most [MaxListItems] entries; the
// answer is at most [MaxAnswerBytes]. ParseAnswer never panics.
func ParseAnswer(raw []byte) (Answer, []Fact) {
	var fs factList
	text, ok := locateJSON(raw, &fs)
	if !ok {
		return Answer{}, fs.facts()
	}
	if a, ok := parseAnswerFast(text); ok {
		return a, nil
	}
	objRaw, ok := parseObjectText(text, &fs)
	if !ok {
		return Answer{}, fs.facts()
	}
	return parseAnswerObject(objRaw, &fs)
}

// parseAnswerObject is the slow path of ParseAnswer for a JSON object:
// every check, with the facts that explain what is wrong.
func parseAnswerObject(objRaw []byte, fs *factList) (Answer, []Fact) {
	obj, ok := decodeObject(objRaw, "", fs)
	if !ok {
		return Answer{}, fs.facts()
	}
	checkMembers(obj, "", answerFields(), fs)
	if v, ok := stringMember(obj, "", "verdict", fs); ok {
		checkVerdict(v, fs)
	}
	checkKindMember(obj, "", "evidence", "string", fs)
	checkCitationsJSON(obj, fs)
	if items, ok := arrayMember(obj, "", "new_directions", fs); ok {
		for i, item := range items {
			where := index("new_directions", i)
			if s, ok := stringValue(item, where, fs); ok {
				checkNotBlank(s, where, fs)
			}
		}
	}
	if !fs.empty() {
		return Answer{}, fs.facts()
	}
	var a Answer
	if err := strictDecode(objRaw, &a); err != nil {
		fs.add("answer", "an answer the strict decoder accepts", oneLine(clip(err.Error(), 200)))
		return Answer{}, fs.facts()
	}
	if f := a.Validate(); len(f) > 0 {
		return Answer{}, f // unreachable unless the checks above disagree: fail closed
	}
	return a, nil
}

// Validate checks the values of a (not its JSON shape): a known verdict,
// non-blank citation sources and quotes, non-blank new directions, and list
// lengths. It returns nil when a is valid. Use it on answers built in Go, such
// as those of the demo provider; [ParseAnswer] already applies it.
func (a Answer) Validate() []Fact {
	var fs factList
	checkVerdict(a.Verdict, &fs)
	if a.Citations == nil {
		fs.add("citations", "array", "null")
	}
	if a.NewDirections == nil {
		fs.add("new_directions", "array", "null")
	}
	checkLen("citations", len(a.Citations), &fs)
	checkLen("new_directions", len(a.NewDirections), &fs)
	for i, c := range a.Citations {
		checkNotBlank(c.Source, path(index("citations", i), "source"), &fs)
		checkNotBlank(c.Quote, path(index("citations", i), "quote"), &fs)
	}
	for i, d := range a.NewDirections {
		checkNotBlank(d, index("new_directions", i), &fs)
	}
	return fs.facts()
}

func checkVerdict(v string, fs *factList) {
	switch v {
	case VerdictPromising, VerdictDead, VerdictConclusion:
		return
	}
	fs.add("verdict", "one of "+verdictSet, quoteExcerpt(v))
}

func checkNotBlank(s, where string, fs *factList) {
	if strings.TrimSpace(s) == "" {
		fs.add(where, "a non-blank string", quoteExcerpt(s))
	}
}

func checkLen(where string, n int, fs *factList) {
	if n > MaxListItems {
		fs.add(where, fmt.Sprintf("at most %d entries", MaxListItems), fmt.Sprintf("%d entries", n))
	}
}

// checkCitationsJSON checks an answer's "citations": each an object of
// citationFields with a non-blank source and quote (a worker's answer and
// a council member's share the shape).
func checkCitationsJSON(obj object, fs *factList) {
	if items, ok := arrayMember(obj, "", "citations", fs); ok {
		for i, item := range items {
			where := index("citations", i)
			c, ok := objectValue(item, where, fs)
			if !ok {
				continue
			}
			checkMembers(c, where, citationFields(), fs)
			for _, name := range []string{"source", "quote"} {
				if s, ok := stringMember(c, where, name, fs); ok {
					checkNotBlank(s, path(where, name), fs)
				}
			}
		}
	}
}
