package engine

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/questbox/questbox/gates"
)

// genNode draws a node with every field set at random.
func genNode(t *rapid.T) *Node {
	str := rapid.String()
	strs := rapid.SliceOf(str)
	n := rapid.IntRange(math.MinInt32, math.MaxInt32)
	tm := rapid.Custom(func(t *rapid.T) time.Time {
		return time.Unix(rapid.Int64Range(0, 4e9).Draw(t, "sec"), rapid.Int64Range(0, 999_999_999).Draw(t, "nsec")).UTC()
	})
	fact := rapid.Custom(func(t *rapid.T) gates.Fact {
		return gates.Fact{Rule: str.Draw(t, "rule"), Level: gates.Fail, Where: str.Draw(t, "where"), Expected: str.Draw(t, "exp"), Actual: str.Draw(t, "act")}
	})
	facts := rapid.SliceOf(fact)
	nd := &Node{ID: str.Draw(t, "id"), Quest: str.Draw(t, "quest"), Parent: str.Draw(t, "parent"), Role: str.Draw(t, "role"),
		Hypothesis: str.Draw(t, "hyp"), Status: Status(str.Draw(t, "status")), Depth: n.Draw(t, "depth"),
		Order: rapid.Uint64().Draw(t, "order"), Tries: n.Draw(t, "tries"), Verdict: str.Draw(t, "verdict"),
		Evidence: str.Draw(t, "evidence"), NewDirections: strs.Draw(t, "dirs"), Outcome: str.Draw(t, "outcome"),
		Facts: facts.Draw(t, "facts"), Feedback: str.Draw(t, "feedback"), ClaimHash: str.Draw(t, "claimhash"),
		Reason: str.Draw(t, "reason"), Runs: strs.Draw(t, "runs"), Deferrals: n.Draw(t, "deferrals"),
		LockSeq: rapid.Uint64().Draw(t, "lockseq"), Created: tm.Draw(t, "created"), Updated: tm.Draw(t, "updated")}
	for range rapid.IntRange(0, 3).Draw(t, "attempts") {
		nd.Attempts = append(nd.Attempts, Attempt{At: tm.Draw(t, "at"), Run: str.Draw(t, "run"), Outcome: str.Draw(t, "o"),
			Facts: facts.Draw(t, "afacts"), Feedback: str.Draw(t, "afb"), TryUsed: rapid.Bool().Draw(t, "used")})
	}
	if rapid.Bool().Draw(t, "claim") {
		nd.Claim = &Claim{Hash: str.Draw(t, "ch"), Raw: str.Draw(t, "raw"), Since: tm.Draw(t, "since"), Why: str.Draw(t, "why"),
			Answ: &gates.Answer{Verdict: str.Draw(t, "av"), Evidence: str.Draw(t, "ae"), Citations: []gates.Citation{{Source: str.Draw(t, "src"), Quote: str.Draw(t, "quote")}}}}
	}
	return nd
}

// scanNodeHead reads what json.Unmarshal reads of every record
// json.Marshal writes.
func TestScanNodeHeadReadsAsJSONDoes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		raw, err := json.Marshal(genNode(t))
		if err != nil {
			t.Fatal(err)
		}
		var want, got nodeHead
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		if !scanNodeHead(raw, &got) {
			t.Fatalf("scanNodeHead gave up on a record json.Marshal wrote:\n%s", raw)
		}
		if got != want {
			t.Fatalf("scanNodeHead read\n%#v\njson.Unmarshal read\n%#v", got, want)
		}
	})
}

// On anything else it either reads what json.Unmarshal reads or gives
// up (and the caller asks encoding/json): never a different node.
func TestScanNodeHeadGivesUpOrAgrees(t *testing.T) {
	check := func(t interface {
		Fatalf(string, ...any)
	}, raw []byte) {
		var want, got nodeHead
		werr := json.Unmarshal(raw, &want)
		if scanNodeHead(raw, &got) && (werr != nil || got != want) {
			t.Fatalf("on %q scanNodeHead read %#v; json.Unmarshal: %#v, %v", raw, got, want, werr)
		}
	}
	for _, raw := range []string{`{"ID":"n1"}`, `{"id":"n1","tries":1.5}`, `{"id":"n\u00e9"}`, `{"id":"a\"b","depth":-3}`,
		`{"order":-1}`, `{"tries":1e2}`, `{"id":null,"order":01}`, `{"id":"x","attempts":[{"a":[1,{"b":"\q"}]}]}`,
		`{"id":"x"} x`, `{"id":"\xff"}`, `{"evidence":"1-2","tries":2}`, `{"lock_seq":1-2}`, `{}`, `{"id":"x",}`} {
		check(t, []byte(raw))
	}
	rapid.Check(t, func(t *rapid.T) {
		raw, _ := json.Marshal(genNode(t))
		if len(raw) > 0 {
			i := rapid.IntRange(0, len(raw)-1).Draw(t, "at")
			raw[i] = rapid.SampledFrom([]byte(`{}[]":,\-0e.tn "x`)).Draw(t, "byte")
		}
		check(t, raw)
	})
}
