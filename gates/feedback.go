package gates

import "strings"

// Feedback tells the agent (and humans) why it lost and what to change: the
// root cause, its side branches, and which rules to clear to flip the
// verdict. It is computed from the facts, deterministically, and
// [Feedback.String] is the one canonical text: the engine stores it with the
// attempt, feeds it into the next prompt and shows it in submit, quest show
// and the dashboard byte-for-byte.
//
// For a PASS the Feedback is the zero value and its text is empty.
type Feedback struct {
	// RootCause is the first fact of the root-cause rule: among the
	// surviving rules that no surviving rule supersedes, the one whose facts
	// have the highest level, earliest in catalog order.
	RootCause Fact `json:"root_cause"`
	// SideBranches are the verdict's other facts, in catalog order.
	SideBranches []Fact `json:"side_branches,omitempty"`
	// Flip says which rules must stop firing for the verdict to improve, and
	// to what, e.g. "to flip the verdict to PASS, clear: contract". Clearing
	// a rule that attacks another can reinstate it; Flip accounts for that
	// by re-deciding until the outcome changes.
	Flip string `json:"flip,omitempty"`
}

// IsZero reports whether f is empty (a PASS).
func (f Feedback) IsZero() bool {
	return f.RootCause == (Fact{}) && len(f.SideBranches) == 0 && f.Flip == ""
}

// String renders the feedback, one line each, without a trailing newline:
//
//	root cause: FAIL citation-quote @ citations[0].quote: expected …, got …
//	side branch: REVIEW citations-present @ citations: expected …, got …
//	to flip the verdict to PASS, clear: citation-quote, citations-present
func (f Feedback) String() string {
	if f.IsZero() {
		return ""
	}
	var b strings.Builder
	b.WriteString("root cause: ")
	b.WriteString(f.RootCause.String())
	for _, s := range f.SideBranches {
		b.WriteString("\nside branch: ")
		b.WriteString(s.String())
	}
	if f.Flip != "" {
		b.WriteByte('\n')
		b.WriteString(oneLine(f.Flip))
	}
	return b.String()
}

// plainFeedback is the feedback of facts that no rule of the catalog made
// (an invalid catalog): the first Fail fact, or the first fact.
func plainFeedback(v Verdict) Feedback {
	if v.Outcome == OutcomePass || len(v.Facts) == 0 {
		return Feedback{}
	}
	root := 0
	for i, f := range v.Facts {
		if f.Level != Review {
			root = i
			break
		}
	}
	fb := Feedback{RootCause: v.Facts[root]}
	for i, f := range v.Facts {
		if i != root {
			fb.SideBranches = append(fb.SideBranches, f)
		}
	}
	return fb
}

// entryLevel is the highest level among an entry's facts (Fail for a panic).
func entryLevel(fs []Fact) Level {
	l := Level(0)
	for _, f := range fs {
		if f.Level != Review {
			return Fail
		}
		l = Review
	}
	return l
}

func (c *Catalog) feedback(per [][]Fact, fired, alive []bool, v Verdict) Feedback {
	if v.Outcome == OutcomePass {
		return Feedback{}
	}
	root := -1
	for i := range per {
		if !alive[i] || c.superseded(i, alive) {
			continue
		}
		if root < 0 || entryLevel(per[i]) > entryLevel(per[root]) {
			root = i
		}
	}
	if root < 0 {
		// Every fired rule was defeated: the graph fact is the root cause.
		fb := plainFeedback(v)
		fb.Flip = c.flip(per, fired, v.Outcome, -1)
		return fb
	}
	rootFact := per[root][0]
	for _, f := range per[root] {
		if f.Level == entryLevel(per[root]) {
			rootFact = f
			break
		}
	}
	fb := Feedback{RootCause: rootFact}
	skipped := false
	for _, f := range v.Facts {
		if !skipped && f == rootFact {
			skipped = true
			continue
		}
		fb.SideBranches = append(fb.SideBranches, f)
	}
	fb.Flip = c.flip(per, fired, v.Outcome, root)
	return fb
}

// superseded reports whether a surviving rule supersedes entry i.
func (c *Catalog) superseded(i int, alive []bool) bool {
	if c.graph == nil {
		return false
	}
	for _, a := range c.graph.supers[i] {
		if alive[a] {
			return true
		}
	}
	return false
}

// flip finds the rules to clear for the outcome cur to improve: it clears
// the surviving rules at cur's level, re-decides (clearing an attacker can
// reinstate a rule it attacked), and repeats until the outcome changes.
// root, if >= 0, is listed first.
func (c *Catalog) flip(per [][]Fact, fired []bool, cur Outcome, root int) string {
	want := Fail
	if cur == OutcomeReview {
		want = Review
	}
	cleared := make([]bool, len(per))
	still := make([]bool, len(per))
	var to Outcome
	for round := 0; round <= len(per); round++ {
		for i := range still {
			still[i] = fired[i] && !cleared[i]
		}
		facts, alive := c.outcomeOf(per, still)
		to = Aggregate(facts).Outcome
		if to < cur {
			break
		}
		added := false
		for i := range alive {
			if alive[i] && entryLevel(per[i]) == want {
				cleared[i], added = true, true
			}
		}
		if !added { // only the all-defeated graph fact is left: clear them all
			for i := range still {
				if still[i] {
					cleared[i], added = true, true
				}
			}
		}
		if !added {
			return ""
		}
	}
	if to >= cur {
		return ""
	}
	var ids []string
	if root >= 0 && cleared[root] {
		ids = append(ids, c.entries[root].id)
	}
	for i, ok := range cleared {
		if ok && i != root {
			ids = append(ids, c.entries[i].id)
		}
	}
	return "to flip the verdict to " + to.String() + ", clear: " + strings.Join(ids, ", ")
}
