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
	judge := role == MemberJudge
	present, ok := sc.fields(func(name string) (k int, ok bool) {
		switch {
		case name == "confidence":
			m.Confidence, ok = sc.number()
			return 0, ok
		case name == "actions":
			m.Actions, ok = sc.actions()
			return 1, ok
		case name == "dissent":
			m.Dissent, ok = sc.str()
			return 2, ok
		case name == "notes" && !judge:
			m.Notes, ok = sc.str()
			return 3, ok
		case name == "verdict_source" && judge:
			m.VerdictSource, ok = sc.str()
			return 3, ok
		case name == "citations" && judge:
			m.Citations, ok = sc.citations()
			return 4, ok
		}
		return -1, false
	})
	want := uint64(0b1111) // a reviewer's four members
	if judge {
		want = 0b11111 // a judge's five
	}
	if !ok || present != want || !sc.end() || len(m.Validate(role)) > 0 {
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
	present, ok := sc.fields(func(name string) (k int, ok bool) {
		switch name {
		case "decision":
			a.Decision, ok = sc.str()
			return 0, ok
		case "reason":
			a.Reason, ok = sc.str()
			return 1, ok
		case "revision_target":
			a.RevisionTarget, ok = sc.str()
			return 2, ok
		case "citations":
			a.Citations, ok = sc.acceptQuotes()
			return 3, ok
		}
		return -1, false
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
		present, ok := sc.fields(func(name string) (k int, ok bool) {
			var v *string
			switch name { // numbered as allActionFields lists them
			case "action":
				k, v = 0, &a.Action
			case "node":
				k, v = 1, &a.Node
			case "reason":
				k, v = 2, &a.Reason
			case "hypothesis":
				k, v = 3, &a.Hypothesis
			case "role":
				k, v = 4, &a.Role
			case "summary":
				k, v = 5, &a.Summary
			default:
				return -1, false
			}
			*v, ok = sc.str()
			return k, ok
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
		present, ok := sc.fields(func(name string) (k int, ok bool) {
			if name != "quote" {
				return -1, false
			}
			q.Quote, ok = sc.str()
			return 0, ok
		})
		out = append(out, q)
		return ok && present == 1
	})
	return out, ok
}
