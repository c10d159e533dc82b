package gates

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Ids of the built-in rules.
const (
	RuleEvidenceLength   = "evidence-length"
	RuleFreshDirections  = "fresh-directions"
	RuleCitationsPresent = "citations-present"
)

// Validator is implemented by rules whose configuration can be wrong.
// [NewCatalog] calls Validate and refuses the catalog on error, so a
// misconfigured rule is a load error rather than a rule that never fires.
type Validator interface {
	Validate() error
}

// parsed is a submission read according to its role: exactly one of answer
// and owner is set when ok.
type parsed struct {
	answer *Answer
	owner  *OwnerAnswer
}

// parse reads in.Raw as the contract for in.Role says. ok is false when the
// contract does not hold; rules other than contract then stay silent, because
// the contract rule has already failed the submission.
func parse(in Input) (p parsed, ok bool) {
	p, facts := parseFacts(in)
	return p, len(facts) == 0
}

// parseMemo holds one parse of Input.Raw during a Catalog evaluation, so the
// four built-in rules parse the answer once rather than four times.
type parseMemo struct {
	done  bool
	p     parsed
	facts []Fact
	// fields[:nfields] hold the values of each field a rule read
	// (kinds.go), at most one per field name there is; text1 the
	// derived texts of the fields that have a single value.
	fields  [6]memoField
	nfields int
	text1   [6]textMemo
}

// parseFacts parses in.Raw for in.Role, through in.memo when there is one.
func parseFacts(in Input) (parsed, []Fact) {
	if in.memo != nil && in.memo.done {
		return in.memo.p, in.memo.facts
	}
	var (
		p     parsed
		facts []Fact
	)
	// The parsed value is copied to the heap only when it is valid: an
	// answer that fails the contract costs no allocation here.
	if in.IsOwner() {
		var o OwnerAnswer
		if o, facts = ParseOwnerAnswer(in.Raw); len(facts) == 0 {
			p.owner = new(OwnerAnswer)
			*p.owner = o
		}
	} else {
		var a Answer
		if a, facts = ParseAnswer(in.Raw); len(facts) == 0 {
			p.answer = new(Answer)
			*p.answer = a
		}
	}
	if in.memo != nil {
		in.memo.done, in.memo.p, in.memo.facts = true, p, facts
	}
	return p, facts
}

// ContractCheck is the output-contract rule (docs/design.md, "Providers and
// the worker's answer"), id "contract", level Fail, stage pure. Workers are
// parsed with [ParseAnswer], owners (role "owner") with [ParseOwnerAnswer].
// Output cut at the provider's cap is a Fail fact of its own, in addition to
// whatever the parse finds: a cut answer may have lost its real last ```json
// block, so it is never accepted.
type ContractCheck struct{}

// ContractRule returns the output-contract rule.
func ContractRule() ContractCheck { return ContractCheck{} }

func (ContractCheck) ID() string   { return RuleContract }
func (ContractCheck) Level() Level { return Fail }
func (ContractCheck) Stage() Stage { return StagePure }
func (ContractCheck) Description() string {
	return "the answer is the last ```json block (or one JSON object) with exactly the contract's fields, types and values, not cut at the output cap"
}

// Check implements [Rule].
func (ContractCheck) Check(in Input) []Fact {
	var facts []Fact
	if in.Truncated {
		actual := "output exceeded the provider's cap"
		if in.Cap > 0 {
			actual = fmt.Sprintf("output exceeded the cap of %d bytes", in.Cap)
		}
		facts = append(facts, Fact{Rule: RuleContract, Level: Fail, Where: "answer",
			Expected: "complete output within the provider's cap", Actual: actual})
	}
	_, more := parseFacts(in)
	if facts == nil {
		return more // the catalog stamps a copy
	}
	return append(facts, more...)
}

// EvidenceLengthCheck fails evidence that is too short to be checked or too
// long to be read: id "evidence-length", level Fail, stage pure. Length is
// counted in runes after trimming surrounding white space. It applies to
// worker and owner answers alike, and only when the contract holds.
type EvidenceLengthCheck struct {
	min, max int
}

// EvidenceLength returns the evidence-length rule for min..max runes
// inclusive. It requires 0 <= min <= max and max > 0; otherwise [NewCatalog]
// refuses it (see [Validator]).
func EvidenceLength(min, max int) EvidenceLengthCheck { return EvidenceLengthCheck{min: min, max: max} }

func (EvidenceLengthCheck) ID() string   { return RuleEvidenceLength }
func (EvidenceLengthCheck) Level() Level { return Fail }
func (EvidenceLengthCheck) Stage() Stage { return StagePure }
func (r EvidenceLengthCheck) Description() string {
	return fmt.Sprintf("the evidence is between %d and %d characters long", r.min, r.max)
}

// Min and Max return the configured bounds in runes.
func (r EvidenceLengthCheck) Min() int { return r.min }
func (r EvidenceLengthCheck) Max() int { return r.max }

// Validate implements [Validator].
func (r EvidenceLengthCheck) Validate() error {
	if r.min < 0 || r.max <= 0 || r.min > r.max {
		return fmt.Errorf("gates: rule %s: bounds %d..%d (want 0 <= min <= max, max > 0): %w", RuleEvidenceLength, r.min, r.max, ErrInvalidConfig)
	}
	return nil
}

func (r EvidenceLengthCheck) silentWithoutContract() bool { return r.Validate() == nil }

// Check implements [Rule].
func (r EvidenceLengthCheck) Check(in Input) []Fact {
	if err := r.Validate(); err != nil {
		// Only reachable when the rule is used outside a Catalog: fail closed.
		return []Fact{{Rule: RuleEvidenceLength, Level: Fail, Where: "rule",
			Expected: "a valid configuration", Actual: err.Error()}}
	}
	p, ok := parse(in)
	if !ok {
		return nil
	}
	ev := ""
	if p.answer != nil {
		ev = p.answer.Evidence
	} else {
		ev = p.owner.Evidence
	}
	ev = strings.TrimSpace(ev)
	n := utf8.RuneCountInString(ev)
	if n >= r.min && n <= r.max {
		return nil
	}
	return []Fact{{Rule: RuleEvidenceLength, Level: Fail, Where: "evidence",
		Expected: fmt.Sprintf("between %d and %d characters", r.min, r.max),
		Actual:   fmt.Sprintf("%d characters: %s", n, quoteExcerpt(ev))}}
}

// FreshDirectionsCheck fails new directions that repeat work already done: id
// "fresh-directions", level Fail, stage pure. A new direction (for an owner,
// the hypothesis of a spawn action) is stale when, under [NormalizeText], it
// equals this node's hypothesis, an ancestor's hypothesis, the quest's
// direction, or an earlier new direction of the same answer. It stays silent
// when the contract does not hold.
type FreshDirectionsCheck struct{}

// NewDirectionsFresh returns the fresh-directions rule.
func NewDirectionsFresh() FreshDirectionsCheck { return FreshDirectionsCheck{} }

func (FreshDirectionsCheck) ID() string   { return RuleFreshDirections }
func (FreshDirectionsCheck) Level() Level { return Fail }
func (FreshDirectionsCheck) Stage() Stage { return StagePure }
func (FreshDirectionsCheck) Description() string {
	return "new directions do not repeat the node's hypothesis, an ancestor's, the quest direction or each other"
}

func (FreshDirectionsCheck) silentWithoutContract() bool { return true }

// Check implements [Rule].
func (FreshDirectionsCheck) Check(in Input) []Fact {
	p, ok := parse(in)
	if !ok {
		return nil
	}
	type item struct{ where, text string }
	var items []item
	if p.answer != nil {
		for i, d := range p.answer.NewDirections {
			items = append(items, item{index("new_directions", i), d})
		}
	} else {
		for i, a := range p.owner.Actions {
			if a.Action == ActionSpawn {
				items = append(items, item{path(index("actions", i), "hypothesis"), a.Hypothesis})
			}
		}
	}
	if len(items) == 0 {
		return nil
	}
	// known maps a normalised text to a description of where it was seen first.
	known := map[string]string{}
	remember := func(text, what string) {
		if k := NormalizeText(text); k != "" {
			if _, seen := known[k]; !seen {
				known[k] = what
			}
		}
	}
	remember(in.Hypothesis, "this node's hypothesis")
	for i, a := range in.Ancestors {
		if i == 0 {
			remember(a, "the parent's hypothesis")
		} else {
			remember(a, fmt.Sprintf("the hypothesis of ancestor %d (1 = parent)", i+1))
		}
	}
	remember(in.Direction, "the quest direction")
	var facts []Fact
	for _, it := range items {
		k := NormalizeText(it.text)
		if what, seen := known[k]; seen {
			facts = append(facts, Fact{Rule: RuleFreshDirections, Level: Fail, Where: it.where,
				Expected: "a direction not already explored",
				Actual:   fmt.Sprintf("%s repeats %s", quoteExcerpt(it.text), what)})
			continue
		}
		remember(it.text, it.where)
	}
	return facts
}

// CitationsPresentCheck asks a human to look at a conclusion that cites
// nothing: id "citations-present", level Review, stage pure. It applies to
// worker answers only, and only when the contract holds.
type CitationsPresentCheck struct{}

// CitationsPresent returns the citations-present rule.
func CitationsPresent() CitationsPresentCheck { return CitationsPresentCheck{} }

func (CitationsPresentCheck) ID() string   { return RuleCitationsPresent }
func (CitationsPresentCheck) Level() Level { return Review }
func (CitationsPresentCheck) Stage() Stage { return StagePure }
func (CitationsPresentCheck) Description() string {
	return "a conclusion cites at least one source"
}

func (CitationsPresentCheck) silentWithoutContract() bool { return true }

// Check implements [Rule].
func (CitationsPresentCheck) Check(in Input) []Fact {
	p, ok := parse(in)
	if !ok || p.answer == nil {
		return nil
	}
	if p.answer.Verdict != VerdictConclusion || len(p.answer.Citations) > 0 {
		return nil
	}
	return []Fact{{Rule: RuleCitationsPresent, Level: Review, Where: "citations",
		Expected: "at least one citation for a conclusion", Actual: "none"}}
}

// DefaultCatalog returns the built-in catalog: contract, evidence-length
// (20..20000), fresh-directions and citations-present, in that order.
func DefaultCatalog() *Catalog {
	c, err := NewCatalog(ContractRule(), EvidenceLength(20, 20000), NewDirectionsFresh(), CitationsPresent())
	if err != nil {
		panic("BUG: gates: default catalog is invalid: " + err.Error())
	}
	return c
}
