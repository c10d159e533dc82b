package agent

import "fmt"

// demoMember is the Demo's answer as a council member (docs/design.md,
// "Councils and Teams"), so that `make run` shows a council vote with a
// dissent:
//
//   - a judge proposes what the Demo's owner would (promote the two
//     oldest proposals, abort the rest; finish when none is left) and
//     passes it, quoting the oldest proposal (or the direction), words
//     that are in its prompt;
//   - a reviewer promotes the oldest proposal only, and dissents about
//     the second one (which the judge promotes); with no proposal left
//     it too proposes to finish, which is advice only.
func demoMember(req Request) string {
	if req.Role == "judge" {
		quote := req.Direction
		if len(req.Proposals) > 0 {
			quote = req.Proposals[0].Hypothesis
		}
		return demoFence("Canned judge vote from the built-in demo provider.", demoJudgeAnswer{
			Confidence:    0.8,
			Actions:       demoOwnerActions(req),
			Dissent:       "",
			VerdictSource: "pass",
			Citations:     []demoCitation{{Source: "evidence", Quote: quote}},
		})
	}
	a := demoReviewerAnswer{Confidence: 0.6, Actions: []demoAction{}, Dissent: "",
		Notes: DemoLabel + "Weighed the proposals against the evidence of the locked nodes."}
	switch len(req.Proposals) {
	case 0:
		a.Actions = demoOwnerActions(req)
	case 1:
		a.Actions = append(a.Actions, demoAction{Action: "promote", Node: req.Proposals[0].Node})
	default:
		a.Actions = append(a.Actions, demoAction{Action: "promote", Node: req.Proposals[0].Node})
		a.Dissent = fmt.Sprintf("%s%s (%q) repeats %s; I would not promote it yet.", DemoLabel,
			req.Proposals[1].Node, demoClip(req.Proposals[1].Hypothesis, 80), req.Proposals[0].Node)
	}
	return demoFence("Canned reviewer vote from the built-in demo provider.", a)
}

// demoOwnerActions are the actions of the Demo's owner for req.
func demoOwnerActions(req Request) []demoAction {
	if len(req.Proposals) == 0 {
		return []demoAction{{Action: "finish",
			Summary: fmt.Sprintf("%sThe demo quest on %q explored its branches and reached a conclusion.", DemoLabel, demoClip(req.Direction, 120))}}
	}
	const promote = 2
	actions := make([]demoAction, 0, len(req.Proposals))
	for i, p := range req.Proposals {
		if i < promote {
			actions = append(actions, demoAction{Action: "promote", Node: p.Node})
			continue
		}
		actions = append(actions, demoAction{Action: "abort", Node: p.Node,
			Reason: fmt.Sprintf("%sonly the %d oldest proposals are promoted per owner turn, to keep the demo short", DemoLabel, promote)})
	}
	return actions
}

type demoJudgeAnswer struct {
	Confidence    float64        `json:"confidence"`
	Actions       []demoAction   `json:"actions"`
	Dissent       string         `json:"dissent"`
	VerdictSource string         `json:"verdict_source"`
	Citations     []demoCitation `json:"citations"`
}

type demoReviewerAnswer struct {
	Confidence float64      `json:"confidence"`
	Actions    []demoAction `json:"actions"`
	Dissent    string       `json:"dissent"`
	Notes      string       `json:"notes"`
}
