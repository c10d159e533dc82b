package gates

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// checkFastMember holds parseMemberFast to the slow path on text: when it
// accepts, the slow path must accept with the same MemberAnswer.
func checkFastMember(t *testing.T, role string, text []byte) (accepted bool) {
	t.Helper()
	got, ok := parseMemberFast(role, text)
	var fs factList
	want, facts := parseMemberText(role, text, &fs)
	if ok && (len(facts) > 0 || !reflect.DeepEqual(got, want)) {
		t.Errorf("%s %q: fast path accepted %#v, slow path gives %#v %v", role, text, got, want, facts)
	}
	return ok
}

// checkFastAccept is checkFastMember for an accepter's answer.
func checkFastAccept(t *testing.T, text []byte) (accepted bool) {
	t.Helper()
	got, ok := parseAcceptFast(text)
	var fs factList
	want, facts := parseAcceptText(text, &fs)
	if ok && (len(facts) > 0 || !reflect.DeepEqual(got, want)) {
		t.Errorf("%q: fast path accepted %#v, slow path gives %#v %v", text, got, want, facts)
	}
	return ok
}

// councilFragments are pieces of member and accepter answers, valid and
// not: names of every kind, numbers in every JSON form and some that are
// not JSON, values of each action kind.
var councilFragments = []string{
	`"confidence"`, `"actions"`, `"dissent"`, `"notes"`, `"verdict_source"`, `"citations"`, `"decision"`, `"reason"`,
	`"revision_target"`, `"quote"`, `"source"`, `"action"`, `"node"`, `"hypothesis"`, `"role"`, `"summary"`, `"Notes"`,
	`0`, `1`, `0.5`, `-0`, `1e0`, `5E-1`, `1.5`, `01`, `.5`, `1.`, `1e`, `-`, `1e400`, `"0.5"`, `null`, `true`,
	`"pass"`, `"revise"`, `"accept"`, `"reject"`, `"planner"`, `"executer"`, `"promote"`, `"abort"`, `"spawn"`, `"finish"`,
	`"n4"`, `" "`, `""`, `"a\"b"`, `"\u00e9"`, `"\ud800"`, `"日本"`, `{`, `}`, `[`, `]`, `:`, `,`, ` `, "\n",
}

func randomWS(r *rand.Rand) string { return []string{"", " ", "\n", "\t", "\r\n  "}[r.IntN(5)] }

func randomStr(r *rand.Rand) string {
	return []string{`"n4"`, `"thin evidence"`, `"a\"b"`, `"\u00e9t\u00e9"`, `"日本"`, `" "`, `""`}[r.IntN(7)]
}

func randomAction(r *rand.Rand) string {
	kind := []string{"promote", "abort", "spawn", "finish", "other"}[r.IntN(5)]
	var m []string
	if r.IntN(8) > 0 {
		m = append(m, `"action":`+randomWS(r)+`"`+kind+`"`)
	}
	for _, f := range []string{"node", "reason", "hypothesis", "role", "summary"} {
		if r.IntN(3) == 0 {
			m = append(m, `"`+f+`":`+randomStr(r))
		}
	}
	switch kind {
	case "promote", "abort":
		m = append(m, `"node":"n`+string(rune('1'+r.IntN(3)))+`"`)
	case "spawn":
		m = append(m, `"hypothesis":"h"`, `"role":"poc"`)
	case "finish":
		m = append(m, `"summary":"done"`)
	}
	if kind == "abort" {
		m = append(m, `"reason":"dead end"`)
	}
	r.Shuffle(len(m), func(i, j int) { m[i], m[j] = m[j], m[i] })
	return "{" + strings.Join(m, ","+randomWS(r)) + "}"
}

func memberText(r *rand.Rand, judge bool) string {
	var m []string
	m = append(m, `"confidence":`+randomWS(r)+[]string{`0`, `1`, `0.5`, `-0`, `1e0`, `5E-1`, `0.25e+0`, `1.5`}[r.IntN(8)])
	var acts []string
	for range r.IntN(3) {
		acts = append(acts, randomAction(r))
	}
	m = append(m, `"actions":[`+strings.Join(acts, ","+randomWS(r))+`]`)
	m = append(m, `"dissent":`+randomStr(r))
	if judge {
		m = append(m, `"verdict_source":`+[]string{`"pass"`, `"revise"`, `"maybe"`}[r.IntN(3)])
		var cites []string
		for range r.IntN(3) {
			cites = append(cites, `{"source":`+randomStr(r)+`,"quote":`+randomStr(r)+`}`)
		}
		m = append(m, `"citations":[`+strings.Join(cites, ",")+`]`)
	} else {
		m = append(m, `"notes":`+randomStr(r))
	}
	if r.IntN(10) == 0 { // a member of the other role
		m = append(m, []string{`"notes":"n"`, `"verdict_source":"pass"`, `"citations":[]`}[r.IntN(3)])
	}
	r.Shuffle(len(m), func(i, j int) { m[i], m[j] = m[j], m[i] })
	return randomWS(r) + "{" + strings.Join(m, ","+randomWS(r)) + "}" + randomWS(r)
}

func acceptText(r *rand.Rand) string {
	var m []string
	m = append(m, `"decision":`+[]string{`"accept"`, `"reject"`, `"pass"`}[r.IntN(3)])
	m = append(m, `"reason":`+randomStr(r))
	if r.IntN(2) == 0 {
		m = append(m, `"revision_target":`+[]string{`"planner"`, `"executer"`, `""`, `"x"`}[r.IntN(4)])
	}
	if r.IntN(3) > 0 {
		var qs []string
		for range r.IntN(3) {
			qs = append(qs, `{"quote":`+randomStr(r)+`}`)
		}
		m = append(m, `"citations":[`+strings.Join(qs, ","+randomWS(r))+`]`)
	}
	r.Shuffle(len(m), func(i, j int) { m[i], m[j] = m[j], m[i] })
	return randomWS(r) + "{" + strings.Join(m, ","+randomWS(r)) + "}" + randomWS(r)
}

// damage changes text at random in one of three ways, or not at all.
func damage(r *rand.Rand, text string) string {
	if r.IntN(3) > 0 {
		return text
	}
	b := []byte(text)
	switch i := r.IntN(len(b)); r.IntN(3) {
	case 0:
		b = append(b[:i], b[i+1:]...)
	case 1:
		b[i] = `{}[]:, "`[r.IntN(8)]
	default:
		frag := councilFragments[r.IntN(len(councilFragments))]
		b = append(b[:i], append([]byte(frag), b[i:]...)...)
	}
	return string(b)
}

func TestParseMemberFastAgreesWithSlowPath(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	fast := map[string]int{}
	for range 30000 {
		role := []string{MemberReviewer, MemberJudge}[r.IntN(2)]
		if checkFastMember(t, role, []byte(damage(r, memberText(r, role == MemberJudge)))) {
			fast[role]++
		}
		if t.Failed() {
			return
		}
	}
	for _, role := range []string{MemberReviewer, MemberJudge} {
		if fast[role] < 500 {
			t.Errorf("the fast path accepted only %d %s answers: it is not exercised", fast[role], role)
		}
	}
	for _, tc := range []struct{ role, text string }{{MemberReviewer, validReviewerJSON}, {MemberJudge, validJudgeJSON}} {
		if !checkFastMember(t, tc.role, []byte(tc.text)) {
			t.Errorf("%s: the fast path declined %s", tc.role, tc.text)
		}
	}
}

func TestParseAcceptFastAgreesWithSlowPath(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	fast := 0
	for range 30000 {
		if checkFastAccept(t, []byte(damage(r, acceptText(r)))) {
			fast++
		}
		if t.Failed() {
			return
		}
	}
	if fast < 1000 {
		t.Errorf("the fast path accepted only %d answers: it is not exercised", fast)
	}
}

func TestJSONNumberFast(t *testing.T) {
	for _, tc := range []struct {
		text string
		want float64
		ok   bool
	}{
		{"0", 0, true}, {"-0", 0, true}, {"0.5", 0.5, true}, {"1e0", 1, true}, {"5E-1", 0.5, true}, {"2.5e+1", 25, true},
		{"01", 0, false}, {".5", 0, false}, {"1.", 0, false}, {"1e", 0, false}, {"-", 0, false}, {"+1", 0, false},
		{"1e400", 0, false}, {"0x1", 0, false}, {"", 0, false},
	} {
		sc := answerScanner{b: []byte(tc.text), s: tc.text}
		got, ok := sc.number()
		if ok && sc.i != len(tc.text) {
			ok = false // a number followed by more: not all of it is one
		}
		if ok != tc.ok || ok && got != tc.want {
			t.Errorf("number(%q) = %v %v, want %v %v", tc.text, got, ok, tc.want, tc.ok)
		}
	}
}
