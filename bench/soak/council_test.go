//go:build soak

package soak

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"time"
)

// The soak agent as a council member (docs/design.md, "Councils and Teams"):
// it recognises a member's prompt by its contract, and votes (promoting the
// oldest proposal, or finishing when there is none; a judge passes, quoting
// the direction), breaks the member contract, or hangs past the provider's
// timeout.

// memberRole is "reviewer" or "judge" when prompt is a council member's,
// else "".
func memberRole(prompt string) string {
	for _, role := range []string{"reviewer", "judge"} {
		if strings.Contains(prompt, "You are a "+role+" on the owner's council") {
			return role
		}
	}
	return ""
}

// pickMember is a member's outcome: vote 70%, fail 15%, hang 15%.
func pickMember(r *rand.Rand) string {
	switch n := r.IntN(100); {
	case n < 70:
		return "vote"
	case n < 85:
		return "fail"
	}
	return "hang"
}

var proposalRE = regexp.MustCompile(`(?m)^- (n[0-9]+): `)

// memberAnswer prints the member's answer for outcome what; it returns the
// exit code.
func memberAnswer(prompt, role, what string) int {
	switch what {
	case "hang":
		time.Sleep(agentHang)
		return 0
	case "fail":
		fmt.Println("a member with no vote at all")
		return 0
	}
	material, _, _ := strings.Cut(prompt, "\nEvidence of the quest's latest locked nodes")
	action := map[string]string{"action": "finish", "summary": "the soak council has seen enough"}
	if m := proposalRE.FindStringSubmatch(material); m != nil {
		action = map[string]string{"action": "promote", "node": m[1]}
	}
	a := map[string]any{"confidence": 0.5, "actions": []any{action}, "dissent": "a soak dissent"}
	if role == "judge" {
		a["verdict_source"] = "pass"
		a["citations"] = []any{map[string]string{"source": "prompt", "quote": "through kill -9"}}
	} else {
		a["notes"] = "soak notes"
	}
	b, _ := json.Marshal(a)
	fmt.Printf("Soak vote.\n```json\n%s\n```\n", b)
	return 0
}
