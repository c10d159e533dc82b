package gates

import (
	"fmt"
	"strings"
)

// The decisions of a Team's accepter (docs/design.md, "Teams").
const (
	AcceptAccept = "accept"
	AcceptReject = "reject"
)

// The stages a rejection sends a Team back to.
const (
	TargetPlanner  = "planner"
	TargetExecuter = "executer"
)

// RuleAcceptQuote is the id of the fact that turns an accept without a
// verified quote from the deliverable into a reject (judge discipline,
// docs/design.md, "Judge discipline": a judge that clears a claim must quote
// the evidence).
const RuleAcceptQuote = "accept-quote"

// AcceptQuote is one quote an accepter cites from the deliverable.
type AcceptQuote struct {
	Quote string `json:"quote"`
}

// AcceptAnswer is a Team accepter's answer:
//
//	{"decision": "accept" | "reject",
//	 "reason": "why, in one or two sentences",
//	 "revision_target": "planner" | "executer",   (a reject only, required)
//	 "citations": [{"quote": "exact words of the deliverable"}]}
//
// An accept must cite at least one quote and must not name a revision
// target; a reject names one. The accepter is L2: its answer has no way to
// say PASS, and an accept only lets the engine ask the L1 gate.
type AcceptAnswer struct {
	Decision       string        `json:"decision"`
	Reason         string        `json:"reason"`
	RevisionTarget string        `json:"revision_target,omitempty"`
	Citations      []AcceptQuote `json:"citations,omitempty"`
}

func acceptFields() []fieldSpec {
	return []fieldSpec{
		{name: "decision", kind: "string", required: true},
		{name: "reason", kind: "string", required: true},
		{name: "revision_target", kind: "string"},
		{name: "citations", kind: "array"},
	}
}

// ParseAcceptAnswer reads an accepter's answer with the outer rules and the
// strictness of [ParseOwnerAnswer]: facts are empty if and only if the
// answer is well formed, and the AcceptAnswer is the zero value otherwise.
// It never panics.
func ParseAcceptAnswer(raw []byte) (AcceptAnswer, []Fact) {
	var fs factList
	text, ok := locateJSON(raw, &fs)
	if !ok {
		return AcceptAnswer{}, fs.facts()
	}
	if a, ok := parseAcceptFast(text); ok {
		return a, nil
	}
	return parseAcceptText(text, &fs)
}

// parseAcceptText is the slow path of ParseAcceptAnswer for the located
// JSON text: every check, with the facts that explain what is wrong.
func parseAcceptText(text []byte, fs *factList) (AcceptAnswer, []Fact) {
	objRaw, ok := parseObjectText(text, fs)
	if !ok {
		return AcceptAnswer{}, fs.facts()
	}
	obj, ok := decodeObject(objRaw, "", fs)
	if !ok {
		return AcceptAnswer{}, fs.facts()
	}
	checkMembers(obj, "", acceptFields(), fs)
	for _, s := range acceptFields() {
		checkKindMember(obj, "", s.name, s.kind, fs)
	}
	if items, ok := arrayMember(obj, "", "citations", fs); ok {
		for i, item := range items {
			where := index("citations", i)
			o, ok := objectValue(item, where, fs)
			if !ok {
				continue
			}
			checkMembers(o, where, []fieldSpec{{name: "quote", kind: "string", required: true}}, fs)
			checkKindMember(o, where, "quote", "string", fs)
		}
	}
	if !fs.empty() {
		return AcceptAnswer{}, fs.facts()
	}
	var a AcceptAnswer
	if err := strictDecode(objRaw, &a); err != nil {
		fs.add("answer", "an answer the strict decoder accepts", oneLine(clip(err.Error(), 200)))
		return AcceptAnswer{}, fs.facts()
	}
	if len(a.Citations) == 0 {
		a.Citations = nil // [] and absent say the same
	}
	if f := a.Validate(); len(f) > 0 {
		return AcceptAnswer{}, f
	}
	return a, nil
}

// Validate checks the values of a (not its JSON shape); nil when valid.
func (a AcceptAnswer) Validate() []Fact {
	var fs factList
	checkNotBlank(a.Reason, "reason", &fs)
	checkLen("citations", len(a.Citations), &fs)
	for i, c := range a.Citations {
		checkNotBlank(c.Quote, path(index("citations", i), "quote"), &fs)
	}
	switch a.Decision {
	case AcceptAccept:
		if a.RevisionTarget != "" {
			fs.add("revision_target", "no revision_target for an accept", quoteExcerpt(a.RevisionTarget))
		}
	case AcceptReject:
		if a.RevisionTarget != TargetPlanner && a.RevisionTarget != TargetExecuter {
			fs.add("revision_target", TargetPlanner+"|"+TargetExecuter+" for a reject", quoteExcerpt(a.RevisionTarget))
		}
	default:
		fs.add("decision", AcceptAccept+"|"+AcceptReject, quoteExcerpt(a.Decision))
	}
	return fs.facts()
}

// CheckAccept holds a well-formed accept to the judge discipline against
// the deliverable (the executer's evidence and cited quotes): an accept
// whose quotes do not all occur in the deliverable, or that quotes
// nothing, is returned as a reject that sends the executer back, with a
// fact saying why. A reject is returned as it is. Pure: the deliverable is
// passed in.
func CheckAccept(a AcceptAnswer, deliverable string) (AcceptAnswer, []Fact) {
	if a.Decision != AcceptAccept {
		return a, nil
	}
	var missing []string
	for _, c := range a.Citations {
		if !ContainsQuote(deliverable, c.Quote) {
			missing = append(missing, quoteExcerpt(c.Quote))
		}
	}
	why := ""
	switch {
	case len(a.Citations) == 0:
		why = "an accept that quotes nothing"
	case len(missing) > 0:
		why = "quotes not in the deliverable: " + strings.Join(missing, ", ")
	default:
		return a, nil
	}
	f := Fact{Rule: RuleAcceptQuote, Level: Fail, Where: "citations",
		Expected: "an accept quotes the deliverable (exact words of its evidence or citations)", Actual: why}
	return AcceptAnswer{Decision: AcceptReject, RevisionTarget: TargetExecuter,
		Reason: fmt.Sprintf("accept refused (%s): %s", why, a.Reason)}, []Fact{f}
}
