package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// workerAnswer mirrors the worker output contract (docs/design.md, "Providers
// and the worker's answer").
type workerAnswer struct {
	Verdict   string `json:"verdict"`
	Evidence  string `json:"evidence"`
	Citations []struct {
		Source string `json:"source"`
		Quote  string `json:"quote"`
	} `json:"citations"`
	NewDirections []string `json:"new_directions"`
}

// ownerAnswer mirrors the owner output contract.
type ownerAnswer struct {
	Evidence string `json:"evidence"`
	Actions  []struct {
		Action     string `json:"action"`
		Node       string `json:"node"`
		Reason     string `json:"reason"`
		Hypothesis string `json:"hypothesis"`
		Role       string `json:"role"`
		Summary    string `json:"summary"`
	} `json:"actions"`
}

// lastJSONBlock returns the body of the last ```json fence in out.
func lastJSONBlock(t *testing.T, out []byte) []byte {
	t.Helper()
	s := string(out)
	i := strings.LastIndex(s, "```json\n")
	if i < 0 {
		t.Fatalf("no ```json block in %q", s)
	}
	body := s[i+len("```json\n"):]
	j := strings.Index(body, "```")
	if j < 0 {
		t.Fatalf("unterminated ```json block in %q", s)
	}
	if prose := strings.TrimSpace(s[:i]); prose == "" {
		t.Errorf("no line of prose before the JSON block in %q", s)
	}
	return []byte(body[:j])
}

// decodeStrict decodes a JSON block, rejecting fields outside the contract.
func decodeStrict(t *testing.T, block []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(block))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("answer is not valid contract JSON: %v\n%s", err, block)
	}
}

// fieldsOf returns the top-level keys of a JSON object.
func fieldsOf(t *testing.T, block []byte) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(block, &m); err != nil {
		t.Fatalf("answer is not a JSON object: %v\n%s", err, block)
	}
	return m
}

func runDemo(t *testing.T, req Request) []byte {
	t.Helper()
	reply, err := Demo{}.Run(context.Background(), req)
	if err != nil {
		t.Fatalf("Run(%+v): %v", req, err)
	}
	if reply.Model != DemoModel || reply.TokensReported || reply.Tokens != EstimateTokens(req.Prompt, reply.Output) || reply.Truncated {
		t.Errorf("Reply metadata: got model %q tokens %d reported %v truncated %v; want %q, estimated, false, false",
			reply.Model, reply.Tokens, reply.TokensReported, reply.Truncated, DemoModel)
	}
	if !bytes.HasPrefix(reply.Output, []byte(DemoLabel)) {
		t.Errorf("answer does not start with %q: %q", DemoLabel, reply.Output)
	}
	return reply.Output
}

// validWorker reports what, if anything, breaks the worker contract the way
// the gate would see it.
func validWorker(a workerAnswer, fields map[string]json.RawMessage) string {
	if _, ok := fields["evidence"]; !ok {
		return `missing "evidence"`
	}
	switch a.Verdict {
	case "promising", "dead", "conclusion":
	default:
		return fmt.Sprintf("verdict %q", a.Verdict)
	}
	return ""
}

// demoNode is a node of a simulated quest.
type demoNode struct {
	hypothesis string
	depth      int
	ancestors  []string // hypotheses from the root down to the parent
}

// questStats is what a simulated solo quest saw.
type questStats struct {
	nodes, runs                  int
	verdicts                     map[string]int
	failedThenPassed             int
	promisingWithDirections      int
	conclusionsWithCitation      int
	maxAttempt                   int
	directionRepeatsAnAncestor   []string
	evidenceUnlabelledOrShort    []string
	citationQuoteNotInHypothesis []string
}

// simulateSolo runs a solo-mode quest on the Demo the way the engine would:
// a contract-breaking answer is retried (up to maxTries), promising spawns a
// child per new direction.
func simulateSolo(t *testing.T, direction string) questStats {
	t.Helper()
	const maxTries, maxNodes = 3, 50
	st := questStats{verdicts: map[string]int{}}
	queue := []demoNode{{hypothesis: direction}}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		st.nodes++
		if st.nodes > maxNodes {
			t.Fatalf("demo quest on %q did not converge within %d nodes", direction, maxNodes)
		}
		role := "scout"
		if n.depth > 0 {
			role = "poc"
		}
		for attempt := 1; ; attempt++ {
			if attempt > maxTries {
				t.Fatalf("node %q exhausted %d tries", n.hypothesis, maxTries)
			}
			st.runs++
			st.maxAttempt = max(st.maxAttempt, attempt)
			req := Request{
				Prompt: "Direction: " + direction + "\nHypothesis: " + n.hypothesis, Quest: "q1",
				Role: role, Direction: direction, Hypothesis: n.hypothesis, Attempt: attempt, Depth: n.depth,
			}
			block := lastJSONBlock(t, runDemo(t, req))
			var a workerAnswer
			decodeStrict(t, block, &a)
			if why := validWorker(a, fieldsOf(t, block)); why != "" {
				continue // gate FAIL: try again
			}
			if attempt > 1 {
				st.failedThenPassed++
			}
			st.verdicts[a.Verdict]++
			if !strings.HasPrefix(a.Evidence, DemoLabel) || len(a.Evidence) < 20 {
				st.evidenceUnlabelledOrShort = append(st.evidenceUnlabelledOrShort, a.Evidence)
			}
			for _, c := range a.Citations {
				if c.Source != DemoCitationSource || c.Quote == "" || !strings.Contains(req.Prompt, c.Quote) {
					st.citationQuoteNotInHypothesis = append(st.citationQuoteNotInHypothesis, c.Source+": "+c.Quote)
				}
			}
			if a.Verdict == "conclusion" && len(a.Citations) > 0 {
				st.conclusionsWithCitation++
			}
			if a.Verdict == "promising" && len(a.NewDirections) > 0 {
				st.promisingWithDirections++
				lineage := append(slices.Clone(n.ancestors), n.hypothesis)
				for _, d := range a.NewDirections {
					if slices.Contains(lineage, d) {
						st.directionRepeatsAnAncestor = append(st.directionRepeatsAnAncestor, d)
					}
					queue = append(queue, demoNode{hypothesis: d, depth: n.depth + 1, ancestors: lineage})
				}
			}
			break
		}
	}
	return st
}

func TestDemoSoloQuestConverges(t *testing.T) {
	directions := []string{
		"find the most accurate free OCR for Japanese invoices",
		"is the office printer's toner really cheaper in bulk?",
		"which Pi power supply browns out under load",
		"x",
		"請求書のOCR & <the> \"best\" one",
	}
	for _, dir := range directions {
		t.Run(dir, func(t *testing.T) {
			st := simulateSolo(t, dir)
			if st.promisingWithDirections < 2 {
				t.Errorf("promising verdicts with new directions: got %d, want the root and at least one more", st.promisingWithDirections)
			}
			if st.verdicts["dead"] == 0 {
				t.Errorf("no dead verdict over the quest: %v", st.verdicts)
			}
			if st.failedThenPassed == 0 || st.maxAttempt != 2 {
				t.Errorf("fail-then-retry: got %d nodes passing on a retry, max attempt %d; want some, and 2", st.failedThenPassed, st.maxAttempt)
			}
			if st.conclusionsWithCitation == 0 {
				t.Errorf("no conclusion with a citation: %v", st.verdicts)
			}
			if len(st.directionRepeatsAnAncestor) > 0 {
				t.Errorf("new directions repeat the hypothesis or an ancestor: %q", st.directionRepeatsAnAncestor)
			}
			if len(st.evidenceUnlabelledOrShort) > 0 {
				t.Errorf("evidence not labelled %q or under 20 bytes: %q", DemoLabel, st.evidenceUnlabelledOrShort)
			}
			if len(st.citationQuoteNotInHypothesis) > 0 {
				t.Errorf("citations whose quote is not in the prompt: %q", st.citationQuoteNotInHypothesis)
			}
			// 1 root + 3 directions + 1 narrower one; one extra run for the retry.
			if st.nodes != 5 || st.runs != 6 {
				t.Errorf("quest size: got %d nodes, %d runs; want 5 and 6", st.nodes, st.runs)
			}
		})
	}
}

func TestDemoDeterministic(t *testing.T) {
	reqs := []Request{
		{Role: "scout", Direction: "d", Hypothesis: "d", Attempt: 1},
		{Role: "poc", Hypothesis: demoRetryPrefix + "d", Attempt: 1, Depth: 1},
		{Role: "poc", Hypothesis: demoRetryPrefix + "d", Attempt: 2, Depth: 1},
		{Role: "poc", Hypothesis: "scanned hypothesis", Attempt: 1, Depth: 1},
		{Role: "strategist", Hypothesis: "s", Attempt: 1, Depth: 3},
		{Role: "owner", Direction: "d", Proposals: []Proposal{{"n2", "a"}, {"n3", "b"}, {"n4", "c"}}},
	}
	for _, req := range reqs {
		first := runDemo(t, req)
		for range 3 {
			if again := runDemo(t, req); !bytes.Equal(first, again) {
				t.Errorf("Run(%+v) is not deterministic:\n%s\nthen\n%s", req, first, again)
			}
		}
	}
}

func TestDemoDepthOneByHash(t *testing.T) {
	// Hypotheses the Demo did not write (scanned, spawned) still get every
	// behaviour, chosen by a hash of their text.
	seen := map[string]int{}
	for i := range 30 {
		req := Request{Role: "poc", Hypothesis: fmt.Sprintf("scanned hypothesis %d", i), Depth: 1, Attempt: 1}
		block := lastJSONBlock(t, runDemo(t, req))
		var a workerAnswer
		decodeStrict(t, block, &a)
		fields := fieldsOf(t, block)
		switch why := validWorker(a, fields); {
		case why != "":
			seen["fail"]++
			req.Attempt = 2
			var retry workerAnswer
			retryBlock := lastJSONBlock(t, runDemo(t, req))
			decodeStrict(t, retryBlock, &retry)
			if why := validWorker(retry, fieldsOf(t, retryBlock)); why != "" {
				t.Errorf("attempt 2 of %q still breaks the contract: %s", req.Hypothesis, why)
			}
			if _, ok := fields["evidence"]; !ok {
				seen["fail: no evidence"]++
			} else {
				seen["fail: bad verdict"]++
			}
		default:
			seen[a.Verdict]++
			for _, d := range a.NewDirections {
				if d == req.Hypothesis {
					t.Errorf("new direction repeats the hypothesis %q", d)
				}
			}
		}
	}
	for _, want := range []string{"promising", "dead", "fail", "fail: no evidence", "fail: bad verdict"} {
		if seen[want] == 0 {
			t.Errorf("behaviour %q never occurred over 30 hypotheses: %v", want, seen)
		}
	}
}

func TestDemoStrategistConcludes(t *testing.T) {
	for _, depth := range []int{0, 1, 5} {
		req := Request{Role: "strategist", Direction: "dir", Hypothesis: "what now", Depth: depth, Attempt: 1}
		var a workerAnswer
		decodeStrict(t, lastJSONBlock(t, runDemo(t, req)), &a)
		if a.Verdict != "conclusion" || len(a.Citations) == 0 {
			t.Errorf("strategist at depth %d: got verdict %q with %d citations, want a conclusion with a citation", depth, a.Verdict, len(a.Citations))
		}
	}
}

func TestDemoOwner(t *testing.T) {
	type action struct{ action, node string }
	tests := []struct {
		name      string
		proposals []Proposal
		want      []action
	}{
		{"none: finish", nil, []action{{"finish", ""}}},
		{"one", []Proposal{{"n2", "a"}}, []action{{"promote", "n2"}}},
		{"two", []Proposal{{"n2", "a"}, {"n3", "b"}}, []action{{"promote", "n2"}, {"promote", "n3"}}},
		{"four", []Proposal{{"n2", "a"}, {"n3", "b"}, {"n7", "c"}, {"n9", "d"}},
			[]action{{"promote", "n2"}, {"promote", "n3"}, {"abort", "n7"}, {"abort", "n9"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := Request{Role: "owner", Direction: "the direction", Proposals: tt.proposals, Attempt: 1}
			var a ownerAnswer
			decodeStrict(t, lastJSONBlock(t, runDemo(t, req)), &a)
			if !strings.HasPrefix(a.Evidence, DemoLabel) || len(a.Evidence) < 20 {
				t.Errorf("evidence %q: want it labelled %q and at least 20 bytes", a.Evidence, DemoLabel)
			}
			var got []action
			for _, act := range a.Actions {
				got = append(got, action{act.Action, act.Node})
				switch act.Action {
				case "abort":
					if !strings.HasPrefix(act.Reason, DemoLabel) {
						t.Errorf("abort of %s: reason %q, want one labelled %q", act.Node, act.Reason, DemoLabel)
					}
				case "finish":
					if !strings.HasPrefix(act.Summary, DemoLabel) || !strings.Contains(act.Summary, "the direction") {
						t.Errorf("finish: summary %q, want one labelled %q naming the direction", act.Summary, DemoLabel)
					}
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("actions: got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestDemoCancelDuringDelay(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := Demo{Delay: time.Hour}.Run(ctx, Request{Role: "scout"})
		errc <- err
	}()
	cancel()
	// An hour-long Delay that ignored ctx would hang here until the test
	// binary's own timeout.
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: got %v, want context.Canceled", err)
	}
}

func TestDemoCancelledBeforeRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	reply, err := Demo{}.Run(ctx, Request{Role: "scout"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: got %v, want context.Canceled", err)
	}
	if len(reply.Output) != 0 {
		t.Errorf("Output: got %q, want none after cancellation", reply.Output)
	}
}

func TestDemoDelayElapses(t *testing.T) {
	reply, err := Demo{Delay: time.Nanosecond}.Run(context.Background(), Request{Role: "scout", Direction: "d"})
	if err != nil || len(reply.Output) == 0 {
		t.Fatalf("Run: got %q, %v; want an answer", reply.Output, err)
	}
}

func ExampleDemo() {
	reply, _ := Demo{}.Run(context.Background(), Request{
		Role:       "scout",
		Direction:  "find the most accurate free OCR for Japanese invoices",
		Hypothesis: "find the most accurate free OCR for Japanese invoices",
		Attempt:    1,
	})
	fmt.Print(string(reply.Output))
	// Output:
	// [demo] Canned survey from the built-in demo provider.
	//
	// ```json
	// {
	//   "verdict": "promising",
	//   "evidence": "[demo] A first look at \"find the most accurate free OCR for Japanese invoices\" found three angles worth a closer look.",
	//   "citations": [],
	//   "new_directions": [
	//     "reproduce it in a small experiment: find the most accurate free OCR for Japanese invoices",
	//     "trace it to a primary source: find the most accurate free OCR for Japanese invoices",
	//     "look for a counter-example: find the most accurate free OCR for Japanese invoices"
	//   ]
	// }
	// ```
}
