package council

import (
	"fmt"
	"strings"

	"github.com/questbox/questbox/engine/domain"
)

// ContractPart is the contract part of a council member's prompt
// (PromptParts.Contract, before a gate's note): the end of the material,
// then the member's output contract. A reviewer's and a judge's are made
// once (memberContracts), not once for each member's prompt.
func ContractPart(role string) string {
	if c, ok := memberContracts[role]; ok {
		return c
	}
	return MaterialEnd + memberContract(role)
}

// memberContracts are ContractPart of a reviewer and of a judge, never
// changed.
var memberContracts = map[string]string{
	domain.RoleReviewer: MaterialEnd + memberContract(domain.RoleReviewer),
	domain.RoleJudge:    MaterialEnd + memberContract(domain.RoleJudge),
}

// memberContract is the output contract of a council member of role.
func memberContract(role string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "You are a %s on the owner's council. You propose; the engine merges the council's answers by rule. Finish your answer with exactly one fenced ```json block:\n```json\n", role)
	b.WriteString(`{"confidence": 0.8,` + "\n")
	b.WriteString(` "actions": [{"action": "promote", "node": "n4"},` + "\n")
	b.WriteString(`             {"action": "abort", "node": "n5", "reason": "duplicate of n4"},` + "\n")
	b.WriteString(`             {"action": "spawn", "hypothesis": "a new hypothesis", "role": "poc"},` + "\n")
	b.WriteString(`             {"action": "finish", "summary": "the quest's answer"}],` + "\n")
	if role == domain.RoleJudge {
		b.WriteString(` "dissent": "what you disagree with, or an empty string",` + "\n")
		b.WriteString(` "verdict_source": "pass" | "revise",` + "\n")
		b.WriteString(` "citations": [{"source": "evidence", "quote": "exact words of the material above"}]}` + "\n```\n")
		b.WriteString("An action applies when a strict majority of the judges proposes it; a finish counts only with pass.\n")
		b.WriteString("A pass must quote the material above word for word; a pass without such a quote counts as revise.\n")
	} else {
		b.WriteString(` "dissent": "what you disagree with, or an empty string",` + "\n")
		b.WriteString(` "notes": "what the judges should weigh"}` + "\n```\n")
		b.WriteString("With judges on the council, your actions are advice; without, only what every reviewer proposes applies, never a finish.\n")
	}
	b.WriteString("Unknown fields, missing fields or anything else is a FAIL.\n")
	return b.String()
}

// MaterialEnd ends the material of a member's prompt: what comes before
// it is the evidence a judge's quotes must occur in.
const MaterialEnd = "\n---\n"

// EvidenceOf is the evidence a member was given: its prompt up to the end
// of the material.
func EvidenceOf(prompt string) string {
	before, _, _ := strings.Cut(prompt, MaterialEnd)
	return before
}

// MemberAllowed says why a council member may not use provider name, or
// "": every member runs an agent of its own, so never external.
func MemberAllowed(name string) string {
	if name == domain.ProviderExternal {
		return "a council member needs a provider that runs (not external)"
	}
	return ""
}
