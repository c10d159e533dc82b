package gates

import (
	"fmt"
	"strings"
	"sync"
)

// Rule detects one way of cheating.
//
// ID, Level, Stage and Description must be constant for the rule's lifetime:
// [NewCatalog] validates them once. Check must be deterministic and pure: no
// I/O, no clock, no randomness, and it must not modify in (its slices are
// shared with the other rules of the evaluation), nor keep it or hand it to
// another rule after it returns (the catalog reuses what in refers to for
// its next evaluation). It returns nil when the rule did not fire. Facts it
// returns are stamped by [Catalog.Evaluate] with the rule's own id and
// level. Check may be called concurrently from several evaluations.
type Rule interface {
	ID() string
	Level() Level
	Stage() Stage
	Description() string
	Check(in Input) []Fact
}

// RoleOwner is the node role whose answer is an [OwnerAnswer] (team mode)
// rather than a worker [Answer].
const RoleOwner = "owner"

// Input is everything a pure rule may look at for one submission.
type Input struct {
	Raw        []byte   // the agent's whole answer as received (possibly truncated)
	Truncated  bool     // the provider cut the output at its cap
	Cap        int64    // that cap in bytes, for the fact
	Role       string   // node role: scout|poc|strategist|owner|...
	Direction  string   // the quest's direction
	Hypothesis string   // this node's hypothesis
	Ancestors  []string // hypotheses of the node's ancestors, nearest first

	// Sources maps a citation source name (not a URL) to the text the gate
	// may check quotes against, for sources the engine holds itself.
	// Optional; URL sources are fetched by ground instead.
	Sources map[string]string
	// Today is the reference date (YYYY-MM-DD, the box's local date) for
	// date rules: gates reads no clock. Date rules that need it fail closed
	// when it is empty.
	Today string
	// Ground holds the ground observations of this evaluation, filled by
	// [Catalog.EvaluateStaged] (or by the caller for [Catalog.Evaluate]).
	Ground GroundFacts

	// memo caches the parse of Raw for the built-in rules within one
	// Catalog evaluation (set by Catalog.run on its own copy of the Input;
	// nil otherwise). Rules run one after another, so it needs no lock.
	memo *parseMemo
}

// IsOwner reports whether the submission comes from an owner node and must be
// parsed with [ParseOwnerAnswer]. The comparison is exact: roles are lower-case
// identifiers.
func (in Input) IsOwner() bool { return in.Role == RoleOwner }

// Catalog is an ordered, validated, immutable set of rules. It is safe for
// concurrent use.
type Catalog struct {
	entries []entry
	graph   *defeat // nil: no edges (plain level aggregation)
	// scratch holds *scratch values for Evaluate and Report to reuse (nil
	// in a Catalog not built by NewCatalog, which cannot evaluate).
	scratch *sync.Pool
}

// scratch is the working memory of one evaluation, none of which outlives
// it: the parse memo of the built-in rules and a buffer the facts are
// collected in. A catalog reuses it from one evaluation to the next, so an
// evaluation allocates what its verdict keeps and little else (on a
// malformed answer: the contract fact, its text and the verdict's array).
type scratch struct {
	memo  parseMemo
	facts [8]Fact
}

func (c *Catalog) getScratch() *scratch {
	if c.scratch == nil {
		return new(scratch)
	}
	return c.scratch.Get().(*scratch)
}

// putScratch clears s, whose first n facts were written, and gives it back
// for the next evaluation. Cleared, it holds no string of the answer.
func (c *Catalog) putScratch(s *scratch, n int) {
	s.memo = parseMemo{}
	clear(s.facts[:min(n, len(s.facts))])
	if c.scratch != nil {
		c.scratch.Put(s)
	}
}

// entry is a rule with the metadata validated by NewCatalog. Evaluation uses
// these captured values, so a rule whose methods change their answers later
// cannot change its id, level or stage behind the catalog's back.
type entry struct {
	rule  Rule
	id    string
	level Level
	stage Stage
	kind  string // the RuleSpec kind when loaded by LoadCatalog, else ""
	// quiet: a built-in rule that returns no facts when the answer does
	// not follow the contract (see contractBound), so an evaluation whose
	// parse failed need not run it.
	quiet bool
	// nextLoud is the index of the first entry after this one that is not
	// quiet (len(entries) if none): once the contract is known to fail,
	// the evaluation goes on there.
	nextLoud int
}

// contractBound is implemented by built-in rules that read the parsed
// answer: silentWithoutContract reports that Check returns nothing when
// the contract does not hold (it does, for example, unless the rule reads
// the raw answer or its configuration is invalid).
type contractBound interface {
	silentWithoutContract() bool
}

// NewCatalog validates rules and returns them as a catalog, in the given order.
// It fails closed: no rules is [ErrEmptyCatalog]; a nil rule or an empty id (or
// one with surrounding whitespace) is [ErrInvalidRule]; a repeated id is
// [ErrDuplicateRule]; an unknown level is [ErrInvalidLevel] and an unknown stage
// [ErrInvalidStage]; a rule implementing [Validator] whose Validate fails is
// refused with that error (for example [ErrInvalidConfig]). Each error names
// the offending rule.
func NewCatalog(rules ...Rule) (*Catalog, error) {
	if len(rules) == 0 {
		return nil, fmt.Errorf("gates: new catalog: %w", ErrEmptyCatalog)
	}
	c := &Catalog{entries: make([]entry, 0, len(rules)),
		scratch: &sync.Pool{New: func() any { return new(scratch) }}}
	seen := make(map[string]int, len(rules))
	for i, r := range rules {
		e, err := describeRule(i, r)
		if err != nil {
			return nil, err
		}
		id := e.id
		if id == "" || strings.TrimSpace(id) != id {
			return nil, fmt.Errorf("gates: new catalog: rule #%d has id %q: %w", i, id, ErrInvalidRule)
		}
		if j, dup := seen[id]; dup {
			return nil, fmt.Errorf("gates: new catalog: rule %q at #%d and #%d: %w", id, j, i, ErrDuplicateRule)
		}
		seen[id] = i
		if !e.level.Valid() {
			return nil, fmt.Errorf("gates: new catalog: rule %q has level %s: %w", id, e.level, ErrInvalidLevel)
		}
		if !e.stage.Valid() {
			return nil, fmt.Errorf("gates: new catalog: rule %q has stage %s: %w", id, e.stage, ErrInvalidStage)
		}
		if e.err != nil {
			return nil, fmt.Errorf("gates: new catalog: rule %q: %w", id, e.err)
		}
		c.entries = append(c.entries, e.entry)
	}
	next := len(c.entries)
	for i := len(c.entries) - 1; i >= 0; i-- {
		c.entries[i].nextLoud = next
		if !c.entries[i].quiet {
			next = i
		}
	}
	return c, nil
}

// described is a rule's metadata as read once by NewCatalog.
type described struct {
	entry
	err error // from Validator, if the rule implements it
}

// describeRule reads r's metadata, turning a nil rule or a panicking method
// into an error: a broken rule must fail the load, not crash the daemon.
func describeRule(i int, r Rule) (d described, err error) {
	if r == nil {
		return d, fmt.Errorf("gates: new catalog: rule #%d is nil: %w", i, ErrInvalidRule)
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("gates: new catalog: rule #%d panicked while describing itself: %v: %w", i, p, ErrInvalidRule)
		}
	}()
	d.entry = entry{rule: r, id: r.ID(), level: r.Level(), stage: r.Stage()}
	_ = r.Description()
	if b, ok := r.(contractBound); ok {
		d.quiet = b.silentWithoutContract()
	}
	if v, ok := r.(Validator); ok {
		d.err = v.Validate()
	}
	return d, nil
}

// Rules returns the catalog's rules in order. The slice is a copy.
func (c *Catalog) Rules() []Rule {
	if c == nil {
		return nil
	}
	out := make([]Rule, len(c.entries))
	for i, e := range c.entries {
		out[i] = e.rule
	}
	return out
}

// Evaluate runs every rule of the catalog, whatever its stage, in order, and
// decides their facts: by level aggregation (docs/design.md, "Gates and
// levels"), or by the defeat graph when the catalog has one (docs/design.md,
// "The defeat graph"; with no edges the two are identical). See
// [Catalog.EvaluateStaged] for staged evaluation.
//
// Facts are stamped with the id and validated level of the rule that returned
// them. A rule that panics yields a Fail fact "rule X panicked: ..." instead of
// crashing the caller; it can never produce a PASS.
//
// A nil or zero Catalog (not built by NewCatalog) gives FAIL.
func (c *Catalog) Evaluate(in Input) Verdict {
	if c == nil || len(c.entries) == 0 {
		return c.Report(in).Verdict
	}
	if c.graph != nil && c.graph.attackEdge {
		return c.evaluateGraph(in)
	}
	// Report's verdict without its feedback, which only Report returns.
	// Every fired rule survives: the verdict's facts are all of them, in
	// catalog order, which is how runInto collects them (into the
	// scratch's buffer, then one array of the right size).
	s := c.getScratch()
	in.memo = &s.memo
	all := c.runInto(nil, s.facts[:0], in, 0)
	facts := all
	if len(all) <= len(s.facts) { // still the scratch's buffer
		facts = make([]Fact, len(all))
		copy(facts, all)
	}
	c.putScratch(s, len(all))
	return aggregate(facts)
}

// evaluateGraph is Evaluate through a defeat graph that has attacks edges.
func (c *Catalog) evaluateGraph(in Input) Verdict {
	s := c.getScratch()
	in.memo = &s.memo
	var (
		perBuf   [32][]Fact
		firedBuf [32]bool
		per      [][]Fact
		fired    []bool
	)
	if n := len(c.entries); n <= len(perBuf) {
		per, fired = perBuf[:n], firedBuf[:n]
	} else {
		per, fired = make([][]Fact, n), make([]bool, n)
	}
	all := c.runInto(per, s.facts[:0], in, 0)
	for i, fs := range per {
		fired[i] = len(fs) > 0
	}
	facts, _ := c.outcomeOf(per, fired) // copies the survivors' facts
	c.putScratch(s, len(all))
	return aggregate(facts)
}

// Report is [Catalog.Evaluate] with the feedback and the defeated facts: the
// same as [Catalog.EvaluateStaged] with every ground observation already in
// Input.Ground (it never defers).
func (c *Catalog) Report(in Input) Staged {
	if c == nil || len(c.entries) == 0 {
		return c.staged(c.run(in, 0))
	}
	s := c.getScratch()
	in.memo = &s.memo
	per := make([][]Fact, len(c.entries))
	c.runInto(per, nil, in, 0)
	st := c.decide(per)
	c.putScratch(s, 0)
	return st
}

// EvaluateStage runs only the rules of stage s, in order, and aggregates their
// facts by level (never through the defeat graph: a stage alone is a partial
// view). A stage with no rules gives PASS for that stage; whether the whole
// gate passes is still decided by all stages together.
func (c *Catalog) EvaluateStage(in Input, s Stage) Verdict {
	if !s.Valid() {
		return Aggregate([]Fact{{
			Rule: "catalog", Level: Fail, Where: "stage",
			Expected: "pure or ground", Actual: s.String(),
		}})
	}
	return Aggregate(c.run(in, s))
}

// staged wraps facts that did not come from the catalog's rules.
func (c *Catalog) staged(facts []Fact) Staged {
	v := Aggregate(facts)
	return Staged{Verdict: v, Feedback: plainFeedback(v)}
}

// run collects the facts of every rule of stage only (0 = all stages).
func (c *Catalog) run(in Input, only Stage) []Fact {
	if c == nil || len(c.entries) == 0 {
		return []Fact{{Rule: "catalog", Level: Fail, Where: "catalog",
			Expected: "a catalog built by NewCatalog", Actual: "an empty catalog"}}
	}
	in.memo = &parseMemo{}
	per := make([][]Fact, len(c.entries))
	c.runInto(per, nil, in, only)
	var facts []Fact
	for _, fs := range per {
		facts = append(facts, fs...)
	}
	return facts
}

// runInto appends to all the facts of every entry of stage only (0 = all)
// in entry order, and returns it; when per is not nil, per[i] is the part
// of it that entry i returned. in.memo must be set by the caller.
func (c *Catalog) runInto(per [][]Fact, all []Fact, in Input, only Stage) []Fact {
	for i := 0; i < len(c.entries); i++ {
		e := &c.entries[i]
		if e.quiet {
			if !in.memo.done {
				parseFacts(in) // memoised for the rules
			}
			if len(in.memo.facts) > 0 {
				// The contract does not hold, so every quiet rule is
				// silent: go on at the next entry that is not quiet.
				i = e.nextLoud - 1
				continue
			}
		}
		if only != 0 && e.stage != only {
			continue
		}
		got, panicked := checkSafely(e.rule, e.id, in)
		if len(got) == 0 {
			continue
		}
		if all == nil {
			all = make([]Fact, 0, max(8, len(got)))
		}
		start := len(all)
		all = stamp(all, got, e, panicked)
		if per != nil {
			per[i] = all[start:len(all):len(all)]
		}
	}
	return all
}

// stamp appends got to dst with the entry's id and (unless the rule
// panicked) its level.
func stamp(dst, got []Fact, e *entry, panicked bool) []Fact {
	for _, f := range got {
		f.Rule = e.id
		if !panicked {
			f.Level = e.level
		}
		dst = append(dst, f)
	}
	return dst
}

// check runs one entry and stamps its facts.
func (c *Catalog) check(e entry, in Input) []Fact {
	got, panicked := checkSafely(e.rule, e.id, in)
	if len(got) == 0 {
		return nil
	}
	return stamp(make([]Fact, 0, len(got)), got, &e, panicked)
}

// checkSafely runs r.Check, turning a panic into a single Fail fact.
func checkSafely(r Rule, id string, in Input) (facts []Fact, panicked bool) {
	defer func() {
		if p := recover(); p != nil {
			facts = []Fact{{
				Level:    Fail,
				Where:    "rule",
				Expected: "the rule to complete",
				Actual:   clip(fmt.Sprintf("rule %s panicked: %v", id, p), 300),
			}}
			panicked = true
		}
	}()
	return r.Check(in), false
}
