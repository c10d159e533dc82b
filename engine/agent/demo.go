package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"
	"time"
	"unicode/utf8"
)

// DemoModel is the Model of every Demo reply.
const DemoModel = "demo"

// DemoLabel starts every evidence, reason and summary the Demo writes, so
// that no demo answer can pass for real work.
const DemoLabel = "[demo] "

// DemoCitationSource is the source of the Demo's citations: the prompt of the
// request itself. The quoted words are the node's hypothesis (or the quest's
// direction), which the engine puts into the prompt verbatim.
const DemoCitationSource = "demo:prompt"

// Demo is the built-in provider that needs no model and no network, so that a
// fresh box shows a quest working end to end. Its answers are a pure function
// of the Request (role, depth, attempt, hypothesis, proposals); they are canned
// text, and every evidence starts with DemoLabel.
//
// Over one quest the Demo exercises every path of the ratchet and converges:
//
//   - the root (Depth 0) is "promising" with three new directions, one of each
//     kind below;
//   - at Depth 1 the kind of direction decides (a hypothesis the Demo did not
//     write gets a kind from a hash of its text):
//     "trace it to a primary source: …" is "promising" with one narrower
//     direction; "look for a counter-example: …" is "dead";
//     "reproduce it in a small experiment: …" breaks the output contract on
//     Attempt 1 (no "evidence", or the verdict "maybe") so the gate FAILs,
//     and is a valid "dead" from Attempt 2 on;
//   - at Depth 2 and below, and for the strategist, it is a "conclusion"
//     citing DemoCitationSource;
//   - the owner promotes the two oldest proposals, aborts the rest with a
//     reason, and finishes the quest when no proposal is left.
//
// The zero Demo answers at once. A Demo is safe for concurrent Run calls.
type Demo struct {
	// Delay is how long each Run pretends to think, so that a demo quest
	// can be watched on the dashboard. Cancelling ctx cuts it short.
	Delay time.Duration
}

// Demo direction prefixes; each sets the behaviour of the child it becomes.
const (
	demoRetryPrefix     = "reproduce it in a small experiment: "
	demoPromisingPrefix = "trace it to a primary source: "
	demoDeadPrefix      = "look for a counter-example: "
	demoNarrowPrefix    = "narrow it to one measurable claim: "
)

// Run waits Delay (or until ctx is done, returning its error) and answers.
func (d Demo) Run(ctx context.Context, req Request) (Reply, error) {
	reply := Reply{Model: DemoModel}
	req.started()
	if d.Delay > 0 {
		timer := time.NewTimer(d.Delay)
		defer timer.Stop()
		select {
		case <-ctx.Done():
		case <-timer.C:
		}
	}
	if err := ctx.Err(); err != nil {
		return reply, fmt.Errorf("demo provider: %w", err)
	}
	reply.Output = []byte(DemoAnswer(req))
	reply.Tokens = EstimateTokens(req.Prompt, reply.Output)
	return reply, nil
}

// DemoAnswer is the answer the Demo gives to req: a line of prose, then a
// fenced JSON block in the worker or owner contract.
func DemoAnswer(req Request) string {
	if req.Role == "owner" {
		return demoOwner(req)
	}
	if req.Role == "reviewer" || req.Role == "judge" {
		return demoMember(req)
	}
	if req.Stage != "" {
		return demoStage(req)
	}
	subject := demoSubject(req)
	conclusion := demoWorkerAnswer{
		Verdict:  "conclusion",
		Evidence: fmt.Sprintf("%sNarrowed down far enough: %q is settled as far as this demo quest goes.", DemoLabel, subject),
		Citations: []demoCitation{{
			Source: DemoCitationSource,
			Quote:  demoClip(subject, 120),
		}},
	}
	if req.Role == "strategist" || req.Depth >= 2 {
		return demoFence("Canned conclusion from the built-in demo provider.", conclusion)
	}
	if req.Depth <= 0 {
		return demoFence("Canned survey from the built-in demo provider.", demoWorkerAnswer{
			Verdict:  "promising",
			Evidence: fmt.Sprintf("%sA first look at %q found three angles worth a closer look.", DemoLabel, subject),
			NewDirections: []string{
				demoRetryPrefix + subject,
				demoPromisingPrefix + subject,
				demoDeadPrefix + subject,
			},
		})
	}

	switch demoKindOf(req.Hypothesis) {
	case demoPromising:
		return demoFence("Canned finding from the built-in demo provider.", demoWorkerAnswer{
			Verdict:       "promising",
			Evidence:      fmt.Sprintf("%sThe source behind %q holds up; one narrower claim is worth testing.", DemoLabel, subject),
			NewDirections: []string{demoNarrowPrefix + subject},
		})
	case demoDead:
		return demoFence("Canned finding from the built-in demo provider.", demoWorkerAnswer{
			Verdict:  "dead",
			Evidence: fmt.Sprintf("%sA counter-example was easy to find for %q, so this branch is closed.", DemoLabel, subject),
		})
	}
	// demoRetry
	if req.Attempt <= 1 {
		const prose = "[demo] This first attempt breaks the output contract on purpose, so the gate can be seen failing; the retry is valid."
		if demoHash(req.Hypothesis)%2 == 0 {
			return demoFence(prose, demoWorkerAnswer{Verdict: "dead"}) // no "evidence"
		}
		return demoFence(prose, demoWorkerAnswer{
			Verdict:  "maybe",
			Evidence: fmt.Sprintf("%sThe experiment for %q was not run yet.", DemoLabel, subject),
		})
	}
	return demoFence("Canned retry from the built-in demo provider.", demoWorkerAnswer{
		Verdict:  "dead",
		Evidence: fmt.Sprintf("%sOn attempt %d the experiment for %q ran cleanly and showed no effect, so this branch is closed.", DemoLabel, req.Attempt, subject),
	})
}

func demoOwner(req Request) string {
	if len(req.Proposals) == 0 {
		return demoFence("Canned owner decision from the built-in demo provider.", demoOwnerAnswer{
			Evidence: DemoLabel + "No proposals are waiting, so the quest has run its course.",
			Actions: []demoAction{{
				Action:  "finish",
				Summary: fmt.Sprintf("%sThe demo quest on %q explored its branches and reached a conclusion.", DemoLabel, demoClip(req.Direction, 120)),
			}},
		})
	}
	const promote = 2
	actions := make([]demoAction, 0, len(req.Proposals))
	for i, p := range req.Proposals {
		if i < promote {
			actions = append(actions, demoAction{Action: "promote", Node: p.Node})
			continue
		}
		actions = append(actions, demoAction{
			Action: "abort",
			Node:   p.Node,
			Reason: fmt.Sprintf("%sonly the %d oldest proposals are promoted per owner turn, to keep the demo short", DemoLabel, promote),
		})
	}
	promoted := min(promote, len(req.Proposals))
	return demoFence("Canned owner decision from the built-in demo provider.", demoOwnerAnswer{
		Evidence: fmt.Sprintf("%sPromoting the %d oldest of %d proposals and aborting the other %d.",
			DemoLabel, promoted, len(req.Proposals), len(req.Proposals)-promoted),
		Actions: actions,
	})
}

type demoKind int

const (
	demoPromising demoKind = iota
	demoDead
	demoRetry
)

// demoKindOf decides the fate of a Depth-1 node: by the direction the Demo
// wrote, or by a hash for a hypothesis from elsewhere (scan, owner spawn).
func demoKindOf(hypothesis string) demoKind {
	switch {
	case strings.HasPrefix(hypothesis, demoPromisingPrefix):
		return demoPromising
	case strings.HasPrefix(hypothesis, demoDeadPrefix):
		return demoDead
	case strings.HasPrefix(hypothesis, demoRetryPrefix):
		return demoRetry
	}
	return demoKind(demoHash(hypothesis) % 3)
}

func demoHash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// demoSubject is what the node is about: its hypothesis, else the quest's
// direction.
func demoSubject(req Request) string {
	for _, s := range []string{req.Hypothesis, req.Direction} {
		if s = strings.TrimSpace(s); s != "" {
			return s
		}
	}
	return "the quest's direction"
}

// demoClip cuts s to at most n bytes on a rune boundary; the result is still
// a substring of s, so it remains an exact quote.
func demoClip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

type demoCitation struct {
	Source string `json:"source"`
	Quote  string `json:"quote"`
}

type demoWorkerAnswer struct {
	Verdict       string         `json:"verdict"`
	Evidence      string         `json:"evidence,omitempty"` // empty only in a deliberate FAIL
	Citations     []demoCitation `json:"citations"`
	NewDirections []string       `json:"new_directions"`
}

type demoAction struct {
	Action  string `json:"action"`
	Node    string `json:"node,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Summary string `json:"summary,omitempty"`
}

type demoOwnerAnswer struct {
	Evidence string       `json:"evidence"`
	Actions  []demoAction `json:"actions"`
}

// demoFence renders a line of prose and v as a fenced JSON block.
func demoFence(prose string, v any) string {
	if w, ok := v.(demoWorkerAnswer); ok {
		// Empty lists, not null: the contract's fields are always present.
		if w.Citations == nil {
			w.Citations = []demoCitation{}
		}
		if w.NewDirections == nil {
			w.NewDirections = []string{}
		}
		v = w
	}
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic("BUG: demo answer does not encode: " + err.Error())
	}
	if !strings.HasPrefix(prose, DemoLabel) {
		prose = DemoLabel + prose
	}
	return prose + "\n\n```json\n" + string(data) + "\n```\n"
}
