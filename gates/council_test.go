package gates

import (
	"reflect"
	"strings"
	"testing"
)

const (
	validReviewerJSON = `{"confidence": 0.7, "actions": [{"action":"promote","node":"n4"}], "dissent": "n5 is thin", "notes": "n4 has the best evidence"}`
	validJudgeJSON    = `{"confidence": 1, "actions": [{"action":"finish","summary":"done"}], "dissent": "", "verdict_source": "pass", "citations": [{"source":"evidence","quote":"accuracy 98%"}]}`
)

func TestParseMemberAnswer(t *testing.T) {
	cases := []struct {
		name, role, raw string
		where           string // the first fact's where; "" for a valid answer
	}{
		{"reviewer", MemberReviewer, validReviewerJSON, ""},
		{"judge", MemberJudge, validJudgeJSON, ""},
		{"judge fenced", MemberJudge, "I vote.\n```json\n" + validJudgeJSON + "\n```\n", ""},
		{"no actions", MemberReviewer, `{"confidence":0,"actions":[],"dissent":"","notes":"nothing to do"}`, ""},
		{"unknown role", "owner", validReviewerJSON, "role"},
		{"confidence too high", MemberReviewer, `{"confidence":1.5,"actions":[],"dissent":"","notes":"n"}`, "confidence"},
		{"confidence string", MemberReviewer, `{"confidence":"high","actions":[],"dissent":"","notes":"n"}`, "confidence"},
		{"reviewer without notes", MemberReviewer, `{"confidence":0.5,"actions":[],"dissent":""}`, "notes"},
		{"reviewer with verdict", MemberReviewer, `{"confidence":0.5,"actions":[],"dissent":"","notes":"n","verdict_source":"pass"}`, "verdict_source"},
		{"judge with notes", MemberJudge, `{"confidence":0.5,"actions":[],"dissent":"","notes":"n","verdict_source":"pass","citations":[]}`, "notes"},
		{"judge bad verdict", MemberJudge, `{"confidence":0.5,"actions":[],"dissent":"","verdict_source":"ok","citations":[]}`, "verdict_source"},
		{"judge blank quote", MemberJudge, `{"confidence":0.5,"actions":[],"dissent":"","verdict_source":"pass","citations":[{"source":"e","quote":" "}]}`, "citations[0].quote"},
		{"bad action", MemberReviewer, `{"confidence":0.5,"actions":[{"action":"promote"}],"dissent":"","notes":"n"}`, "actions[0].node"},
		{"two finishes", MemberJudge, `{"confidence":0.5,"actions":[{"action":"finish","summary":"a"},{"action":"finish","summary":"b"}],"dissent":"","verdict_source":"pass","citations":[]}`, "actions[1].action"},
		{"no dissent", MemberReviewer, `{"confidence":0.5,"actions":[],"notes":"n"}`, "dissent"},
		{"not json", MemberJudge, `I agree with everyone.`, "answer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, facts := ParseMemberAnswer(c.role, []byte(c.raw))
			if c.where == "" {
				if len(facts) > 0 {
					t.Fatalf("got facts %v, want none", facts)
				}
				return
			}
			if len(facts) == 0 {
				t.Fatalf("got %+v without facts, want a fact at %s", m, c.where)
			}
			if facts[0].Where != c.where || facts[0].Rule != RuleContract || facts[0].Level != Fail {
				t.Fatalf("got first fact %v, want a contract Fail at %s", facts[0], c.where)
			}
			if !reflect.DeepEqual(m, MemberAnswer{}) {
				t.Fatalf("got %+v with facts, want the zero MemberAnswer", m)
			}
		})
	}
}

func TestDiscipline(t *testing.T) {
	judge, _ := ParseMemberAnswer(MemberJudge, []byte(validJudgeJSON))
	got, facts := judge.Discipline("n4: Accuracy  98% on 200 invoices")
	if got.VerdictSource != SourcePass || len(facts) != 0 {
		t.Fatalf("got %s %v, want pass without facts", got.VerdictSource, facts)
	}
	got, facts = judge.Discipline("n4: accuracy 91%")
	if got.VerdictSource != SourceRevise || len(facts) != 1 || facts[0].Rule != RuleJudgeCitation || facts[0].Level != Review {
		t.Fatalf("got %s %v, want revise with one judge-citation fact", got.VerdictSource, facts)
	}
	judge.Citations = nil
	if got, facts = judge.Discipline("anything"); got.VerdictSource != SourceRevise || len(facts) != 1 {
		t.Fatalf("got %s %v, want a pass without citations to be a revise", got.VerdictSource, facts)
	}
}

func vote(verdict string, actions ...Action) *MemberAnswer {
	return &MemberAnswer{Confidence: 0.5, Actions: actions, VerdictSource: verdict}
}

func TestMergeCouncil(t *testing.T) {
	promote4 := Action{Action: ActionPromote, Node: "n4"}
	promote4b := Action{Action: ActionPromote, Node: " n4 ", Reason: "other words"}
	abort5 := Action{Action: ActionAbort, Node: "n5", Reason: "dup"}
	finish := Action{Action: ActionFinish, Summary: "done"}
	spawn := Action{Action: ActionSpawn, Hypothesis: "Try  X", Role: "poc"}
	spawnB := Action{Action: ActionSpawn, Hypothesis: "try x", Role: "poc"}
	cases := []struct {
		name     string
		votes    []Vote
		decided  bool
		actions  []string // action keys applied
		verdict  string
		advisory int
	}{
		{"reviewers only advise when a judge votes", []Vote{
			{Role: MemberReviewer, Answer: vote("", abort5)},
			{Role: MemberReviewer, Answer: vote("", abort5)},
			{Role: MemberJudge, Answer: vote(SourceRevise, promote4)},
		}, true, []string{ActionKey(promote4)}, SourceRevise, 1},
		{"judge majority after normalisation", []Vote{
			{Role: MemberJudge, Answer: vote(SourcePass, promote4, spawn)},
			{Role: MemberJudge, Answer: vote(SourcePass, promote4b, spawnB)},
			{Role: MemberJudge, Answer: vote(SourceRevise, abort5)},
		}, true, []string{ActionKey(promote4), ActionKey(spawn)}, SourcePass, 1},
		{"a split is no majority", []Vote{
			{Role: MemberJudge, Answer: vote(SourcePass, promote4)},
			{Role: MemberJudge, Answer: vote(SourceRevise, abort5)},
		}, true, nil, SourceRevise, 2},
		{"finish needs a pass", []Vote{
			{Role: MemberJudge, Answer: vote(SourceRevise, finish)},
		}, true, nil, SourceRevise, 1},
		{"finish with a pass", []Vote{
			{Role: MemberJudge, Answer: vote(SourcePass, finish)},
			{Role: MemberJudge, Answer: nil},
		}, true, []string{ActionKey(finish)}, SourcePass, 0},
		{"judges all abstain", []Vote{
			{Role: MemberReviewer, Answer: vote("", promote4)},
			{Role: MemberJudge, Answer: nil},
		}, false, nil, "", 0},
		{"reviewer-only unanimity, never finish", []Vote{
			{Role: MemberReviewer, Answer: vote("", promote4, finish)},
			{Role: MemberReviewer, Answer: vote("", promote4b, finish)},
			{Role: MemberReviewer, Answer: nil},
		}, true, []string{ActionKey(promote4)}, "", 1},
		{"reviewer-only disagreement", []Vote{
			{Role: MemberReviewer, Answer: vote("", promote4)},
			{Role: MemberReviewer, Answer: vote("", abort5)},
		}, true, nil, "", 2},
		{"reviewers all abstain", []Vote{{Role: MemberReviewer}}, false, nil, "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := MergeCouncil(c.votes)
			var keys []string
			for _, a := range d.Actions {
				keys = append(keys, ActionKey(a))
			}
			if d.Decided != c.decided || !reflect.DeepEqual(keys, c.actions) || d.Verdict != c.verdict || len(d.Advisory) != c.advisory {
				t.Fatalf("got decided=%v actions=%q verdict=%q advisory=%v (%s), want decided=%v actions=%q verdict=%q advisory=%d",
					d.Decided, keys, d.Verdict, d.Advisory, d.Why, c.decided, c.actions, c.verdict, c.advisory)
			}
		})
	}
}

func FuzzParseMemberAnswer(f *testing.F) {
	f.Add(MemberReviewer, []byte(validReviewerJSON))
	f.Add(MemberJudge, []byte(validJudgeJSON))
	f.Add(MemberJudge, []byte(fence(validJudgeJSON)))
	f.Add(MemberReviewer, []byte(`{"confidence":-0,"actions":[{"action":"spawn","hypothesis":"h","role":"poc","node":"n1"}],"dissent":"","notes":""}`))
	f.Fuzz(func(t *testing.T, role string, raw []byte) {
		var fs factList
		if text, ok := locateJSON(raw, &fs); ok && (role == MemberReviewer || role == MemberJudge) {
			checkFastMember(t, role, text)
		}
		got, facts := ParseMemberAnswer(role, raw)
		checkFuzzFacts(t, facts)
		if len(facts) > 0 {
			if !reflect.DeepEqual(got, MemberAnswer{}) {
				t.Fatalf("got %+v with facts, want the zero MemberAnswer", got)
			}
			return
		}
		if f := got.Validate(role); len(f) > 0 {
			t.Fatalf("valid answer fails Validate: %v", f)
		}
		again, f2 := ParseMemberAnswer(role, got.Encode(role))
		if len(f2) != 0 || !reflect.DeepEqual(again, got) {
			t.Fatalf("round trip: got %+v %v, want %+v", again, f2, got)
		}
		d, _ := got.Discipline(strings.Repeat("x", len(raw)%7))
		if d.VerdictSource == SourcePass && len(got.Citations) == 0 {
			t.Fatalf("a pass without citations survived the discipline")
		}
	})
}
