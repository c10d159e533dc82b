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
	sc := answerScanner{b: text, s: string(text)}
	var m MemberAnswer
	names := []string{"confidence", "actions", "dissent", "notes"}
	if role == MemberJudge {
		names = []string{"confidence", "actions", "dissent", "verdict_source", "citations"}
	}
	present, ok := sc.fields(names, func(k int) (ok bool) {
		switch names[k] {
		case "confidence":
			m.Confidence, ok = sc.number()
		case "actions":
			m.Actions, ok = sc.actions()
		case "dissent":
			m.Dissent, ok = sc.str()
		case "notes":
			m.Notes, ok = sc.str()
		case "verdict_source":
			m.VerdictSource, ok = sc.str()
		default:
			m.Citations, ok = sc.citations()
		}
		return ok
	})
	if !ok || present != 1<<len(names)-1 || !sc.end() || len(m.Validate(role)) > 0 {
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
	var a AcceptAnswer
	present, ok := sc.fields([]string{"decision", "reason", "revision_target", "citations"}, func(k int) (ok bool) {
		switch k {
		case 0:
			a.Decision, ok = sc.str()
		case 1:
			a.Reason, ok = sc.str()
		case 2:
			a.RevisionTarget, ok = sc.str()
		default:
			a.Citations, ok = sc.acceptQuotes()
		}
		return ok
	})
	if !ok || present&0b11 != 0b11 || !sc.end() {
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
		var a Action
		vals := [...]*string{&a.Action, &a.Node, &a.Reason, &a.Hypothesis, &a.Role, &a.Summary}
		present, ok := sc.fields([]string{"action", "node", "reason", "hypothesis", "role", "summary"}, func(k int) (ok bool) {
			*vals[k], ok = sc.str()
			return ok
		})
		out = append(out, a)
		specs := actionFields(a.Action)
		if !ok || specs == nil {
			return false
		}
		// A member its kind does not allow is refused even when empty,
		// as the slow path refuses it; a required one that is missing
		// is blank, which Validate refuses.
		for k, f := range allActionFields() {
			if present&(1<<k) != 0 && !hasName(specs, f.name) {
				return false
			}
		}
		return true
	})
	return out, ok
}

// acceptQuotes reads an accepter's citations: objects with exactly a
// string quote each.
func (sc *answerScanner) acceptQuotes() ([]AcceptQuote, bool) {
	out := []AcceptQuote{}
	ok := sc.list(func() bool {
		var q AcceptQuote
		present, ok := sc.fields([]string{"quote"}, func(int) (ok bool) {
			q.Quote, ok = sc.str()
			return ok
		})
		out = append(out, q)
		return ok && present == 1
	})
	return out, ok
}
