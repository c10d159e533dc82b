package agent

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The Demo as a Team's stages (docs/design.md, "Teams"), deterministic so
// that a demo Teams quest shows one rejection and its revision:
//
//   - planner: a canned plan in plain text;
//   - executer: the answer the Demo gives a worker on the Team's
//     hypothesis at the Team's depth (so the Team locks by that verdict),
//     except on a revised "reproduce it in a small experiment: …" Team:
//     there the experiment's result is a conclusion that cites no source,
//     which the L1 gate sends to a human (REVIEW), so the accept of that
//     one Team waits for the button (awaiting_consent) while the rest of
//     the quest keeps running;
//   - accepter: on revision 0 it rejects, sending the executer back; from
//     revision 1 on it accepts, quoting the deliverable (the first words
//     of the evidence the prompt shows of the stage above it).
func demoStage(req Request) string {
	subject := demoTeamSubject(req.Hypothesis)
	switch req.Stage {
	case "plan":
		return fmt.Sprintf("%sPlan for %q:\n1. find the claim's primary source\n2. check it against one counter-example\n3. report the verdict with a quote\n", DemoLabel, demoClip(subject, 200))
	case "exec":
		if req.Revision >= 1 && demoKindOf(subject) == demoRetry {
			return demoFence("Canned experiment from the built-in demo provider; it cites nothing, so a person must look.", demoWorkerAnswer{
				Verdict:  "conclusion",
				Evidence: fmt.Sprintf("%sThe small experiment for %q reproduced the claim on the sample invoices; there is no source to cite, so a person must approve it with the button.", DemoLabel, demoClip(subject, 200)),
			})
		}
		w := req
		w.Stage, w.Hypothesis = "", subject
		return DemoAnswer(w)
	}
	var a demoAccept
	if req.Revision == 0 {
		a = demoAccept{Decision: "reject", RevisionTarget: "executer",
			Reason: DemoLabel + "the deliverable does not say which source it checked; the demo accepter rejects every first delivery once"}
	} else {
		a = demoAccept{Decision: "accept", Reason: DemoLabel + "the revised deliverable follows the plan",
			Citations: []demoQuote{{Quote: demoDeliverableQuote(req.Prompt)}}}
	}
	data, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		panic("BUG: demo accept does not encode: " + err.Error())
	}
	return DemoLabel + "Canned accepter decision from the built-in demo provider.\n\n```json\n" + string(data) + "\n```\n"
}

type demoQuote struct {
	Quote string `json:"quote"`
}

type demoAccept struct {
	Decision       string      `json:"decision"`
	Reason         string      `json:"reason"`
	RevisionTarget string      `json:"revision_target,omitempty"`
	Citations      []demoQuote `json:"citations,omitempty"`
}

// demoTeamSubject is the Team's hypothesis in a stage's hypothesis ("exec
// stage of Team n1 (scout), revision 0: HYPOTHESIS").
func demoTeamSubject(h string) string {
	if _, rest, ok := strings.Cut(h, ": "); ok && strings.Contains(h[:len(h)-len(rest)], " stage of Team ") {
		return rest
	}
	return h
}

// demoDeliverableQuote is the first words of the first evidence the prompt
// shows (the nearest stage above the accepter: its executer).
func demoDeliverableQuote(prompt string) string {
	const mark = "  evidence: "
	i := strings.Index(prompt, mark)
	if i < 0 {
		return DemoLabel
	}
	line, _, _ := strings.Cut(prompt[i+len(mark):], "\n")
	return demoClip(line, 60)
}
