package gates

import (
	"strconv"
	"unicode/utf8"
)

// Fast paths for council member and accepter answers, as parseAnswerFast is
// for a worker's: one pass over a plainly written valid answer, declining
// (ok=false) anything unusual so that the slow path (encoding/json, with
// facts that explain the problem) decides it. A fast path accepts only
// what its slow path accepts, with the same value (councilscan_test.go and
// the fuzz targets of ParseMemberAnswer and ParseAcceptAnswer hold them to
// it). The slow paths decode an answer four times over; on a council
// member's answer that was 200 allocations.

// parseMemberFast is the fast path of ParseMemberAnswer (role is reviewer
// or judge).
func parseMemberFast(role string, text []byte) (MemberAnswer, bool) {
	if !utf8.Valid(text) {
		return MemberAnswer{}, false
	}
	judge := role == MemberJudge
	sc := answerScanner{b: text, s: string(text)}
	var (
		m    MemberAnswer
		seen [6]bool // confidence, actions, dissent, notes, verdict_source, citations
	)
	ok := sc.object(func(name string) bool {
		k, ok := -1, false
		switch {
		case name == "confidence":
			k = 0
			m.Confidence, ok = sc.number()
		case name == "actions":
			k = 1
			m.Actions, ok = sc.actions()
		case name == "dissent":
			k = 2
			m.Dissent, ok = sc.str()
		case name == "notes" && !judge:
			k = 3
			m.Notes, ok = sc.str()
		case name == "verdict_source" && judge:
			k = 4
			m.VerdictSource, ok = sc.str()
		case name == "citations" && judge:
			k = 5
			m.Citations, ok = sc.citations()
		}
		if k < 0 || !ok || seen[k] {
			return false
		}
		seen[k] = true
		return true
	})
	want := [6]bool{true, true, true, !judge, judge, judge}
	if !ok || seen != want || len(m.Validate(role)) > 0 {
		return MemberAnswer{}, false
	}
	return m, true
}

// parseAcceptFast is the fast path of ParseAcceptAnswer.
func parseAcceptFast(text []byte) (AcceptAnswer, bool) {
	if !utf8.Valid(text) {
		return AcceptAnswer{}, false
	}
	sc := answerScanner{b: text, s: string(text)}
	var (
		a    AcceptAnswer
		seen [4]bool // decision, reason, revision_target, citations
	)
	ok := sc.object(func(name string) bool {
		k, ok := -1, false
		switch name {
		case "decision":
			k = 0
			a.Decision, ok = sc.str()
		case "reason":
			k = 1
			a.Reason, ok = sc.str()
		case "revision_target":
			k = 2
			a.RevisionTarget, ok = sc.str()
		case "citations":
			k = 3
			a.Citations, ok = sc.acceptQuotes()
		}
		if k < 0 || !ok || seen[k] {
			return false
		}
		seen[k] = true
		return true
	})
	if !ok || !seen[0] || !seen[1] {
		return AcceptAnswer{}, false
	}
	if len(a.Citations) == 0 {
		a.Citations = nil // as the slow path: [] and absent say the same
	}
	if len(a.Validate()) > 0 {
		return AcceptAnswer{}, false
	}
	return a, true
}

// object reads a JSON object whose member names have no escapes, calling
// member after each name and its colon to read the value; member returns
// false to decline. The object must be all that is left of the text.
func (sc *answerScanner) object(member func(name string) bool) bool {
	if !sc.members(member) {
		return false
	}
	sc.ws()
	return sc.i == len(sc.s)
}

// members reads one JSON object at sc.i (see object).
func (sc *answerScanner) members(member func(name string) bool) bool {
	sc.ws()
	if !sc.eat('{') {
		return false
	}
	for {
		sc.ws()
		name, ok := sc.name()
		if !ok {
			return false
		}
		sc.ws()
		if !sc.eat(':') {
			return false
		}
		sc.ws()
		if !member(name) {
			return false
		}
		sc.ws()
		if sc.eat(',') {
			continue
		}
		return sc.eat('}')
	}
}

// list reads a JSON array of at most MaxListItems elements, calling item
// to read each; an empty array is fine.
func (sc *answerScanner) list(item func() bool) bool {
	if !sc.eat('[') {
		return false
	}
	sc.ws()
	if sc.eat(']') {
		return true
	}
	for n := 1; ; n++ {
		sc.ws()
		if n > MaxListItems || !item() {
			return false
		}
		sc.ws()
		if sc.eat(',') {
			continue
		}
		return sc.eat(']')
	}
}

// number reads a JSON number as encoding/json decodes it into a float64
// (declining one out of float64's range, which it refuses).
func (sc *answerScanner) number() (float64, bool) {
	s, start := sc.s, sc.i
	i := start
	digits := func() bool {
		j := i
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		return i > j
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case !digits():
		return 0, false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if !digits() {
			return 0, false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if !digits() {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(s[start:i], 64)
	if err != nil {
		return 0, false
	}
	sc.i = i
	return f, true
}

// actions reads the actions of a member's answer: objects whose members
// are exactly those their kind allows (actionFields), every one a string.
func (sc *answerScanner) actions() ([]Action, bool) {
	out := []Action{}
	ok := sc.list(func() bool {
		a, ok := sc.action()
		out = append(out, a)
		return ok
	})
	return out, ok
}

func (sc *answerScanner) action() (Action, bool) {
	var (
		a       Action
		present [6]bool // as allActionFields: action, node, reason, hypothesis, role, summary
	)
	fields := [6]*string{&a.Action, &a.Node, &a.Reason, &a.Hypothesis, &a.Role, &a.Summary}
	ok := sc.members(func(name string) bool {
		k := -1
		for i, f := range allActionFields() {
			if f.name == name {
				k = i
			}
		}
		if k < 0 || present[k] {
			return false
		}
		present[k] = true
		var ok bool
		*fields[k], ok = sc.str()
		return ok
	})
	specs := actionFields(a.Action)
	if !ok || specs == nil {
		return a, false
	}
	// A member its kind does not allow is refused even when empty, as the
	// slow path refuses it; a required one that is missing is blank, which
	// Validate refuses.
	for i, f := range allActionFields() {
		if present[i] && !hasName(specs, f.name) {
			return a, false
		}
	}
	return a, true
}

// acceptQuotes reads an accepter's citations: objects with exactly a
// string quote each.
func (sc *answerScanner) acceptQuotes() ([]AcceptQuote, bool) {
	out := []AcceptQuote{}
	ok := sc.list(func() bool {
		var (
			q    AcceptQuote
			seen bool
		)
		ok := sc.members(func(name string) bool {
			if name != "quote" || seen {
				return false
			}
			seen = true
			var ok bool
			q.Quote, ok = sc.str()
			return ok
		})
		out = append(out, q)
		return ok && seen
	})
	return out, ok
}
