package gates

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// Council member roles (docs/design.md, "Councils"): a reviewer advises, a
// judge votes.
const (
	MemberReviewer = "reviewer"
	MemberJudge    = "judge"
)

// The verdict sources a judge may give: pass clears the owner's (or the
// phase's) claim, revise sends it back.
const (
	SourcePass   = "pass"
	SourceRevise = "revise"
)

// RuleJudgeCitation is the id of the facts of the judge discipline
// (docs/design.md, "Judge discipline") applied to a council judge: a pass
// whose quotes are not all found in the evidence the judge was given is a
// revise.
const RuleJudgeCitation = "judge-citation"

// MemberAnswer is a council member's answer:
//
//	{"confidence": 0.8,
//	 "actions": [{"action":"promote","node":"n4"}, …],   // owner actions, see OwnerAnswer
//	 "dissent": "what I disagree with, or \"\"",
//	 "notes": "…"}                                       // reviewer only
//
// A judge has no notes; it adds
//
//	"verdict_source": "pass" | "revise",
//	"citations": [{"source": "evidence", "quote": "exact words of the evidence"}]
//
// confidence is a number from 0 to 1; actions may be empty (a member may
// propose nothing) and each action follows the rules of [OwnerAnswer]
// (required fields, at most one finish, a node acted on at most once);
// dissent is required and may be empty. Fields of the other role are
// refused, so a reviewer cannot pass for a judge.
type MemberAnswer struct {
	Confidence    float64    `json:"confidence"`
	Actions       []Action   `json:"actions"`
	Dissent       string     `json:"dissent"`
	Notes         string     `json:"notes,omitempty"`
	VerdictSource string     `json:"verdict_source,omitempty"`
	Citations     []Citation `json:"citations,omitempty"`
}

// memberFields are the members of a role's answer.
func memberFields(role string) []fieldSpec {
	f := []fieldSpec{
		{name: "confidence", kind: "number", required: true},
		{name: "actions", kind: "array", required: true},
		{name: "dissent", kind: "string", required: true},
	}
	if role == MemberJudge {
		return append(f, fieldSpec{name: "verdict_source", kind: "string", required: true},
			fieldSpec{name: "citations", kind: "array", required: true})
	}
	return append(f, fieldSpec{name: "notes", kind: "string", required: true})
}

// ParseMemberAnswer reads the answer of a council member of role (reviewer
// or judge) with the outer rules and the strictness of [ParseAnswer]: facts
// (rule "contract", level Fail) are empty if and only if the answer is
// valid, and the MemberAnswer is the zero value otherwise. An unknown role
// is a fact too. It never panics. The judge discipline is not applied
// here: see [MemberAnswer.Discipline].
func ParseMemberAnswer(role string, raw []byte) (MemberAnswer, []Fact) {
	var fs factList
	if role != MemberReviewer && role != MemberJudge {
		fs.add("role", "reviewer or judge", quoteExcerpt(role))
		return MemberAnswer{}, fs.facts()
	}
	text, ok := locateJSON(raw, &fs)
	if !ok {
		return MemberAnswer{}, fs.facts()
	}
	if m, ok := parseMemberFast(role, text); ok {
		return m, nil
	}
	return parseMemberText(role, text, &fs)
}

// parseMemberText is the slow path of ParseMemberAnswer for the located
// JSON text: every check, with the facts that explain what is wrong.
func parseMemberText(role string, text []byte, fs *factList) (MemberAnswer, []Fact) {
	objRaw, ok := parseObjectText(text, fs)
	if !ok {
		return MemberAnswer{}, fs.facts()
	}
	obj, ok := decodeObject(objRaw, "", fs)
	if !ok {
		return MemberAnswer{}, fs.facts()
	}
	checkMembers(obj, "", memberFields(role), fs)
	checkKindMember(obj, "", "confidence", "number", fs)
	checkKindMember(obj, "", "dissent", "string", fs)
	checkKindMember(obj, "", "notes", "string", fs)
	if v, ok := stringMember(obj, "", "verdict_source", fs); ok && v != SourcePass && v != SourceRevise {
		fs.add("verdict_source", SourcePass+"|"+SourceRevise, quoteExcerpt(v))
	}
	if items, ok := arrayMember(obj, "", "actions", fs); ok {
		for i, item := range items {
			checkActionJSON(item, index("actions", i), fs)
		}
	}
	checkCitationsJSON(obj, fs)
	if !fs.empty() {
		return MemberAnswer{}, fs.facts()
	}
	var m MemberAnswer
	if err := strictDecode(objRaw, &m); err != nil {
		fs.add("answer", "an answer the strict decoder accepts", oneLine(clip(err.Error(), 200)))
		return MemberAnswer{}, fs.facts()
	}
	if f := m.Validate(role); len(f) > 0 {
		return MemberAnswer{}, f
	}
	if m.Actions == nil {
		m.Actions = []Action{}
	}
	return m, nil
}

// Validate checks the values of m for a member of role (not its JSON
// shape): confidence within 0..1, the actions as [OwnerAnswer.Validate]
// checks them (none is allowed), a judge's verdict source and non-blank
// citations, and no field of the other role. It returns nil when m is
// valid; [ParseMemberAnswer] already applies it.
func (m MemberAnswer) Validate(role string) []Fact {
	var fs factList
	if math.IsNaN(m.Confidence) || m.Confidence < 0 || m.Confidence > 1 {
		fs.add("confidence", "a number from 0 to 1", fmt.Sprint(m.Confidence))
	}
	checkLen("actions", len(m.Actions), &fs)
	if len(m.Actions) > 0 {
		for _, f := range (OwnerAnswer{Actions: m.Actions}).Validate() {
			fs.add(f.Where, f.Expected, f.Actual)
		}
	}
	switch role {
	case MemberJudge:
		if m.VerdictSource != SourcePass && m.VerdictSource != SourceRevise {
			fs.add("verdict_source", SourcePass+"|"+SourceRevise, quoteExcerpt(m.VerdictSource))
		}
		if m.Notes != "" {
			fs.add("notes", "no notes from a judge", quoteExcerpt(m.Notes))
		}
		checkLen("citations", len(m.Citations), &fs)
		for i, c := range m.Citations {
			checkNotBlank(c.Source, path(index("citations", i), "source"), &fs)
			checkNotBlank(c.Quote, path(index("citations", i), "quote"), &fs)
		}
	case MemberReviewer:
		if m.VerdictSource != "" {
			fs.add("verdict_source", "no verdict_source from a reviewer", quoteExcerpt(m.VerdictSource))
		}
		if len(m.Citations) > 0 {
			fs.add("citations", "no citations from a reviewer", fmt.Sprintf("%d citations", len(m.Citations)))
		}
	default:
		fs.add("role", "reviewer or judge", quoteExcerpt(role))
	}
	return fs.facts()
}

// Discipline applies the judge discipline (docs/design.md, "Judge
// discipline") to a judge's answer given the evidence the judge was shown: a
// pass needs at least one citation and every quote must occur in evidence
// ([ContainsQuote]); otherwise the verdict source becomes revise, and the
// facts (rule [RuleJudgeCitation], level Review) say which quote was not
// found. A revise, and a reviewer's answer, are returned as they are.
func (m MemberAnswer) Discipline(evidence string) (MemberAnswer, []Fact) {
	if m.VerdictSource != SourcePass {
		return m, nil
	}
	var facts []Fact
	if len(m.Citations) == 0 {
		facts = append(facts, Fact{Rule: RuleJudgeCitation, Level: Review, Where: "citations",
			Expected: "a pass quotes the evidence that supports it", Actual: "no citation; counted as revise"})
	}
	for i, c := range m.Citations {
		if !ContainsQuote(evidence, c.Quote) {
			facts = append(facts, Fact{Rule: RuleJudgeCitation, Level: Review, Where: path(index("citations", i), "quote"),
				Expected: "words that occur in the evidence given", Actual: quoteExcerpt(c.Quote) + " not found; counted as revise"})
		}
	}
	if len(facts) > 0 {
		m.VerdictSource = SourceRevise
	}
	return m, facts
}

// Vote is one member's part in a council: its role, its node, and its
// answer, nil when it abstained (it exhausted its tries, or was aborted).
type Vote struct {
	Role   string
	Member string
	Answer *MemberAnswer
}

// Decision is what a council decided, by rule and not by a model.
type Decision struct {
	// Decided is false when nobody who decides answered: every judge
	// abstained, or (without judges) every reviewer. Nothing applies then.
	Decided bool
	// Actions apply, in the order of their first proposer.
	Actions []Action
	// Advisory are the actions proposed that do not apply (reviewers'
	// with judges present, a judges' minority, a reviewer-only finish):
	// shown, never applied.
	Advisory []Action
	// Verdict is the council's verdict on a phase gate: pass when a
	// strict majority of the answering judges says pass, revise
	// otherwise; "" for a reviewer-only council, which can never declare
	// a phase clean.
	Verdict string
	// Why says how the decision was reached, in one line.
	Why string
}

// ActionKey is the identity of an action for the majority rule: the kind
// and its target after normalisation (node ids without surrounding
// space; a spawn's hypothesis under [QuoteKey] and its role); reasons and
// summaries do not count, so two judges who promote the same node with
// different reasons agree.
func ActionKey(a Action) string {
	kind := strings.TrimSpace(a.Action)
	switch kind {
	case ActionPromote, ActionAbort:
		return kind + "\x00" + strings.TrimSpace(a.Node)
	case ActionSpawn:
		return kind + "\x00" + QuoteKey(a.Hypothesis) + "\x00" + strings.TrimSpace(a.Role)
	}
	return kind
}

// MergeCouncil merges the votes of one council (docs/design.md, "Councils and
// Teams"):
//   - with judges, an action applies when a strict majority of the judges
//     who answered proposes it (a finish counts only from a judge whose
//     verdict source is pass: a judge cannot clear the quest while asking
//     for a revision); reviewers' actions are advisory;
//   - without judges, an action applies when every reviewer who answered
//     proposes it, except finish, which a reviewer-only council never
//     applies;
//   - abstentions (nil answers) do not count; when every judge (or,
//     without judges, every reviewer) abstained, nothing is decided.
//
// It is pure and deterministic: the order of the votes decides only the
// order of the actions and which proposer's wording is kept.
func MergeCouncil(votes []Vote) Decision {
	judges, reviewers, nJudges := answersByRole(votes)
	deciders, needAll := judges, false
	if nJudges == 0 {
		deciders, needAll = reviewers, true
	}
	if len(deciders) == 0 {
		who := "every judge"
		if nJudges == 0 {
			who = "every reviewer"
		}
		return Decision{Why: who + " abstained: the council decides nothing this turn"}
	}
	d := Decision{Decided: true}
	applied := map[string]bool{}
	for _, t := range tallyActions(deciders, needAll) {
		ok := 2*t.count > len(deciders)
		if needAll {
			ok = t.count == len(deciders) && t.action.Action != ActionFinish
		}
		if ok {
			applied[ActionKey(t.action)] = true
			d.Actions = append(d.Actions, t.action)
		}
	}
	d.Advisory = advisoryActions(votes, applied)
	if needAll {
		d.Why = fmt.Sprintf("no judges: %d action(s) every one of %d reviewers proposed apply (never a finish)", len(d.Actions), len(deciders))
		return d
	}
	passes := 0
	for _, m := range judges {
		if m.VerdictSource == SourcePass {
			passes++
		}
	}
	d.Verdict = SourceRevise
	if 2*passes > len(judges) {
		d.Verdict = SourcePass
	}
	d.Why = fmt.Sprintf("%d of %d judges answered (%d abstained); %d action(s) had a strict majority; %d judge(s) said pass",
		len(judges), nJudges, nJudges-len(judges), len(d.Actions), passes)
	return d
}

// answersByRole splits the votes' answers into the judges' and the
// reviewers', and counts the judges, abstentions included.
func answersByRole(votes []Vote) (judges, reviewers []*MemberAnswer, nJudges int) {
	for _, v := range votes {
		switch v.Role {
		case MemberJudge:
			nJudges++
			if v.Answer != nil {
				judges = append(judges, v.Answer)
			}
		case MemberReviewer:
			if v.Answer != nil {
				reviewers = append(reviewers, v.Answer)
			}
		}
	}
	return judges, reviewers, nJudges
}

// actionTally is how many deciders proposed one action.
type actionTally struct {
	action Action
	count  int
}

// tallyActions counts each decider's distinct actions, in the order they
// were first proposed. A judge's finish counts only when that judge says
// pass (needAll, reviewers deciding, counts every finish; none applies).
func tallyActions(deciders []*MemberAnswer, needAll bool) []*actionTally {
	var order []*actionTally
	tallies := map[string]*actionTally{}
	for _, m := range deciders {
		seen := map[string]bool{}
		for _, a := range m.Actions {
			k := ActionKey(a)
			if seen[k] || (a.Action == ActionFinish && !needAll && m.VerdictSource != SourcePass) {
				continue
			}
			seen[k] = true
			if tallies[k] == nil {
				tallies[k] = &actionTally{action: a}
				order = append(order, tallies[k])
			}
			tallies[k].count++
		}
	}
	return order
}

// advisoryActions lists, once each and in order, every action any member
// proposed that the council did not apply.
func advisoryActions(votes []Vote, applied map[string]bool) []Action {
	var out []Action
	advised := map[string]bool{}
	for _, v := range votes {
		if v.Answer == nil {
			continue
		}
		for _, a := range v.Answer.Actions {
			if k := ActionKey(a); !applied[k] && !advised[k] {
				advised[k] = true
				out = append(out, a)
			}
		}
	}
	return out
}

// Encode is m as the JSON a member of role answers with: exactly the
// fields of that role, so that [ParseMemberAnswer] reads it back as m.
func (m MemberAnswer) Encode(role string) []byte {
	actions := m.Actions
	if actions == nil {
		actions = []Action{}
	}
	var v any
	if role == MemberJudge {
		cites := m.Citations
		if cites == nil {
			cites = []Citation{}
		}
		v = struct {
			Confidence    float64    `json:"confidence"`
			Actions       []Action   `json:"actions"`
			Dissent       string     `json:"dissent"`
			VerdictSource string     `json:"verdict_source"`
			Citations     []Citation `json:"citations"`
		}{m.Confidence, actions, m.Dissent, m.VerdictSource, cites}
	} else {
		v = struct {
			Confidence float64  `json:"confidence"`
			Actions    []Action `json:"actions"`
			Dissent    string   `json:"dissent"`
			Notes      string   `json:"notes"`
		}{m.Confidence, actions, m.Dissent, m.Notes}
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic("BUG: encoding a member answer: " + err.Error())
	}
	return b
}
