package records

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/storetest"
	"github.com/questbox/questbox/gates"
)

// genNode draws a node with every field set at random.
func genNode(t *rapid.T) *domain.Node {
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
	nd := &domain.Node{ID: str.Draw(t, "id"), Quest: str.Draw(t, "quest"), Parent: str.Draw(t, "parent"), Role: str.Draw(t, "role"),
		Hypothesis: str.Draw(t, "hyp"), Status: domain.Status(str.Draw(t, "status")), Depth: n.Draw(t, "depth"),
		Order: rapid.Uint64().Draw(t, "order"), Tries: n.Draw(t, "tries"), Verdict: str.Draw(t, "verdict"),
		Evidence: str.Draw(t, "evidence"), NewDirections: strs.Draw(t, "dirs"), Outcome: str.Draw(t, "outcome"),
		Facts: facts.Draw(t, "facts"), Feedback: str.Draw(t, "feedback"), ClaimHash: str.Draw(t, "claimhash"),
		Reason: str.Draw(t, "reason"), Provider: str.Draw(t, "provider"), Runs: strs.Draw(t, "runs"), Deferrals: n.Draw(t, "deferrals"),
		LockSeq: rapid.Uint64().Draw(t, "lockseq"), Created: tm.Draw(t, "created"), Updated: tm.Draw(t, "updated")}
	for range rapid.IntRange(0, 3).Draw(t, "attempts") {
		nd.Attempts = append(nd.Attempts, domain.Attempt{At: tm.Draw(t, "at"), Run: str.Draw(t, "run"), Outcome: str.Draw(t, "o"),
			Facts: facts.Draw(t, "afacts"), Feedback: str.Draw(t, "afb"), TryUsed: rapid.Bool().Draw(t, "used")})
	}
	if rapid.Bool().Draw(t, "claim") {
		nd.Claim = &domain.Claim{Hash: str.Draw(t, "ch"), Raw: str.Draw(t, "raw"), Since: tm.Draw(t, "since"), Why: str.Draw(t, "why"),
			Answ: &gates.Answer{Verdict: str.Draw(t, "av"), Evidence: str.Draw(t, "ae"), Citations: []gates.Citation{{Source: str.Draw(t, "src"), Quote: str.Draw(t, "quote")}}}}
	}
	return nd
}

// ScanNodeHead reads what json.Unmarshal reads of every record
// json.Marshal writes.
func TestScanNodeHeadReadsAsJSONDoes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		raw, err := json.Marshal(genNode(t))
		if err != nil {
			t.Fatal(err)
		}
		var want NodeHead
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		// What the caller expects (like) changes nothing read: nothing,
		// the record itself, or another record.
		var other NodeHead
		otherRaw, _ := json.Marshal(genNode(t))
		_ = json.Unmarshal(otherRaw, &other)
		for _, like := range []*NodeHead{nil, &want, &other} {
			var got NodeHead
			if !ScanNodeHead(raw, &got, like) {
				t.Fatalf("ScanNodeHead gave up on a record json.Marshal wrote:\n%s", raw)
			}
			if got != want {
				t.Fatalf("ScanNodeHead (like %v) read\n%#v\njson.Unmarshal read\n%#v", like, got, want)
			}
		}
	})
}

// On anything else it either reads what json.Unmarshal reads or gives
// up (and the caller asks encoding/json): never a different node.
func TestScanNodeHeadGivesUpOrAgrees(t *testing.T) {
	check := func(t interface {
		Fatalf(string, ...any)
	}, raw []byte) {
		var want, got NodeHead
		werr := json.Unmarshal(raw, &want)
		if ScanNodeHead(raw, &got, nil) && (werr != nil || got != want) {
			t.Fatalf("on %q ScanNodeHead read %#v; json.Unmarshal: %#v, %v", raw, got, want, werr)
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

// ScanStatus reads the status json.Unmarshal reads of every record
// json.Marshal writes, and on a damaged record either gives up (the
// owner's prompt then decodes it) or reads the status json.Unmarshal
// reads; it checks the form of the JSON, not what the values mean (a time
// that does not parse is passed over, as the owner's material passes over
// a record without evidence: verify names such a record).
func TestScanStatusReadsAsJSONDoes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		raw, err := json.Marshal(genNode(t))
		if err != nil {
			t.Fatal(err)
		}
		var want domain.Node
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		got, ok := ScanStatus(raw)
		if !ok || got != want.Status {
			t.Fatalf("ScanStatus read %q (ok %v), json.Unmarshal %q, of\n%s", got, ok, want.Status, raw)
		}
		i := rapid.IntRange(0, len(raw)-1).Draw(t, "at")
		raw[i] = rapid.SampledFrom([]byte(`{}[]":,\-0e.tn "x`)).Draw(t, "byte")
		var damaged struct {
			Status domain.Status `json:"status"`
		}
		werr := json.Unmarshal(raw, &damaged)
		if got, ok := ScanStatus(raw); ok && (werr != nil || got != damaged.Status) {
			t.Fatalf("on %q ScanStatus read %q; json.Unmarshal: %q, %v", raw, got, damaged.Status, werr)
		}
	})
}

// TestEveryNodeFieldRoundTrips is the test a new field of Node needs: a
// node with every field set is stored as json.Marshal writes it and reads
// back equal, and the dispatch's fast read of its head takes that record
// (it knows every key of Node) and agrees with encoding/json.
func TestEveryNodeFieldRoundTrips(t *testing.T) {
	var n domain.Node
	storetest.FillEvery(&n)
	raw, err := json.Marshal(&n)
	if err != nil {
		t.Fatal(err)
	}
	var back domain.Node
	if err := json.Unmarshal(raw, &back); err != nil || !reflect.DeepEqual(back, n) {
		t.Fatalf("a node with every field set reads back %v\n%#v\nwant\n%#v", err, back, n)
	}
	var want, got NodeHead
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	if !ScanNodeHead(raw, &got, nil) {
		t.Fatalf("ScanNodeHead gave up on a node record as the engine writes it:\n%s", raw)
	}
	if got != want {
		t.Errorf("ScanNodeHead read %+v, want %+v", got, want)
	}
}

// TestNodeRecordGolden pins the node record's bytes: the verdict ledger
// binds the hash of a locked node's stored record, so its form may change
// only with a migration that reseals the ledger (sealLedger).
func TestNodeRecordGolden(t *testing.T) {
	at := time.Date(2026, 12, 3, 4, 5, 6, 789, time.UTC)
	n := &domain.Node{ID: "n12", Quest: "q2", Parent: "n3", Role: domain.RoleScout, Hypothesis: "the <b> & ✓ way", Status: domain.Explored, Depth: 2, Order: 12, Tries: 1,
		Attempts: []domain.Attempt{{At: at, Run: "r4", Outcome: "PASS", TryUsed: true}},
		Verdict:  "conclusion", Evidence: "it works", Citations: []gates.Citation{{Source: "https://example.org", Quote: "exact words"}},
		NewDirections: []string{"next"}, Outcome: "PASS", Feedback: "fine", ClaimHash: "abc", Runs: []string{"r4"}, LockSeq: 3, Created: at.Add(-time.Hour), Updated: at}
	const golden = `{"id":"n12","quest":"q2","parent":"n3","role":"scout","hypothesis":"the \u003cb\u003e \u0026 ✓ way","status":"explored","depth":2,"order":12,"tries":1,"attempts":[{"at":"2026-12-03T04:05:06.000000789Z","run":"r4","outcome":"PASS","try_used":true}],"verdict":"conclusion","evidence":"it works","citations":[{"source":"https://example.org","quote":"exact words"}],"new_directions":["next"],"outcome":"PASS","feedback":"fine","claim_hash":"abc","runs":["r4"],"lock_seq":3,"created":"2026-12-03T03:05:06.000000789Z","updated":"2026-12-03T04:05:06.000000789Z"}`
	raw, err := json.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	if string(raw) != golden {
		t.Errorf("node record\n%s\nwant\n%s", raw, golden)
	}
}
