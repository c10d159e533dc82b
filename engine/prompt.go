package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/prompttmpl"
	"github.com/questbox/questbox/engine/store"
	"github.com/questbox/questbox/engine/team"
)

// workerContract is the output contract of a worker (docs/design.md,
// "Providers and the worker's answer"), as the agent reads it.
const workerContract = "Finish your answer with exactly one fenced ```json block (the last one counts):\n" +
	"```json\n" +
	`{"verdict": "promising" | "dead" | "conclusion",` + "\n" +
	` "evidence": "what you found, in your own words (at least 20 characters)",` + "\n" +
	` "citations": [{"source": "https://… or a path", "quote": "exact words from that source"}],` + "\n" +
	` "new_directions": ["a new hypothesis worth exploring", "…"]}` + "\n" +
	"```\n" +
	"promising: worth growing further; dead: a dead end; conclusion: a settled answer (cite it).\n" +
	"Unknown fields, missing fields or anything else is a FAIL.\n"

const ownerContract = "You are the quest's owner. Decide what happens to the proposals. Finish your answer with exactly one fenced ```json block:\n" +
	"```json\n" +
	`{"evidence": "why you decided this",` + "\n" +
	` "actions": [{"action": "promote", "node": "n4"},` + "\n" +
	`             {"action": "abort", "node": "n5", "reason": "duplicate of n4"},` + "\n" +
	`             {"action": "spawn", "hypothesis": "a new hypothesis", "role": "poc"},` + "\n" +
	`             {"action": "finish", "summary": "the quest's answer"}]}` + "\n" +
	"```\n" +
	"Every action is validated; an invalid one is recorded and not applied.\n"

// request builds the agent request for dispatching n.
func (t *txn) request(q *Quest, n *Node) (agent.Request, error) {
	return t.e.requestBy(t.opt, t.tx, &t.material, q, n)
}

// runRequest is the request of a dispatch, built by its run when the tick
// did not build it (see dispatch.req). It reads the same data the tick's
// transaction would have: the quest and the node are the dispatch's own
// copies, and the only records it reads are the node's ancestors, each a
// node that was terminal before its child existed (a child is created
// with or after its parent's verdict), so its record never changes
// again (the ratchet). A node with no parent reads nothing. (The owner,
// whose prompt also reads the proposals and the locked nodes, is always
// built by the tick.) A council member's prompt also shows the owner's
// material, which the next commit may change (another member's vote, a
// proposal): the tick read it, with the member's ancestors, in its own
// transaction (dispatch.member), and the run only renders it, reading
// nothing; a later state of the store never reaches that prompt.
func (e *Engine) runRequest(d *dispatch) (agent.Request, error) {
	if d.req != nil {
		return *d.req, nil
	}
	if d.member != nil {
		return e.renderRequest(d.opt, d.quest, d.member.node, &d.member.src), nil
	}
	if d.node.Parent == "" {
		return e.requestBy(d.opt, nil, nil, d.quest, d.node)
	}
	var req agent.Request
	err := e.store.view(func(tx *store.Tx) error {
		var err error
		req, err = e.requestBy(d.opt, tx, nil, d.quest, d.node)
		return err
	})
	return req, err
}

// DefaultEvidenceCap bounds the locked nodes' evidence in the owner's
// prompt, in bytes, when [roles.owner] evidence_cap does not: newest
// first, each node's evidence cut to a quarter of the cap (so that one
// long answer cannot crowd out the others) and to what is left of it,
// with a marker saying how much was cut.
const DefaultEvidenceCap = 8 << 10

// PromptData is what a role's prompt template ([roles.NAME] template) is
// rendered with, in the template language of package prompttmpl (a part
// of Go's text/template): {{.Quest.Direction}}, {{.Node.Hypothesis}},
// {{range .Ancestors}}…{{end}}, {{.Parts.Contract}}. Parts are the
// default prompt's pieces, so that a template can reword one part and
// keep the rest; Parts.Default is the whole default prompt. A field added
// here is added to promptDataType too (TestPromptSchemaHasEveryField).
type PromptData struct {
	Quest PromptQuest
	Node  PromptNode
	// Parent is the node's parent; its ID is "" for a root node.
	Parent PromptNode
	// Ancestors are the nodes above this one, nearest first (at most 16).
	Ancestors []PromptNode
	// Feedback is what the last attempt was rejected for; "" on a first
	// try.
	Feedback string
	// Proposals (owner only) are the quest's proposed nodes, oldest first.
	Proposals []PromptNode
	// Locked (owner only) are the quest's locked nodes with their
	// evidence, newest first, within the evidence cap.
	Locked []PromptNode
	Parts  PromptParts
}

// PromptQuest is the quest in a [PromptData].
type PromptQuest struct {
	ID, Name, Direction, Mode string
}

// PromptNode is a node in a [PromptData]. Evidence is cut (with a marker)
// where the default prompt cuts it; Try and MaxTries are set for the
// node being prompted only.
type PromptNode struct {
	ID, Role, Status, Hypothesis, Verdict, Evidence string
	Depth, Try, MaxTries                            int
}

// PromptParts are the default prompt's pieces, each ending in a newline
// (or empty): Header (role, quest, direction, node, try), Ancestors,
// Feedback, Proposals (owner), Locked (owner), Contract (the output
// contract of the role), and Default, all of them in order.
type PromptParts struct {
	Header, Ancestors, Feedback, Proposals, Locked, Contract, Default string
}

// The template types of PromptData and its parts: what a template may
// read, field by field, without reflection.
var (
	promptQuestType = prompttmpl.NewStruct("PromptQuest",
		prompttmpl.Str("ID", func(q *PromptQuest) string { return q.ID }),
		prompttmpl.Str("Name", func(q *PromptQuest) string { return q.Name }),
		prompttmpl.Str("Direction", func(q *PromptQuest) string { return q.Direction }),
		prompttmpl.Str("Mode", func(q *PromptQuest) string { return q.Mode }))
	promptNodeType = prompttmpl.NewStruct("PromptNode",
		prompttmpl.Str("ID", func(n *PromptNode) string { return n.ID }),
		prompttmpl.Str("Role", func(n *PromptNode) string { return n.Role }),
		prompttmpl.Str("Status", func(n *PromptNode) string { return n.Status }),
		prompttmpl.Str("Hypothesis", func(n *PromptNode) string { return n.Hypothesis }),
		prompttmpl.Str("Verdict", func(n *PromptNode) string { return n.Verdict }),
		prompttmpl.Str("Evidence", func(n *PromptNode) string { return n.Evidence }),
		prompttmpl.Num("Depth", func(n *PromptNode) int { return n.Depth }),
		prompttmpl.Num("Try", func(n *PromptNode) int { return n.Try }),
		prompttmpl.Num("MaxTries", func(n *PromptNode) int { return n.MaxTries }))
	promptPartsType = prompttmpl.NewStruct("PromptParts",
		prompttmpl.Str("Header", func(p *PromptParts) string { return p.Header }),
		prompttmpl.Str("Ancestors", func(p *PromptParts) string { return p.Ancestors }),
		prompttmpl.Str("Feedback", func(p *PromptParts) string { return p.Feedback }),
		prompttmpl.Str("Proposals", func(p *PromptParts) string { return p.Proposals }),
		prompttmpl.Str("Locked", func(p *PromptParts) string { return p.Locked }),
		prompttmpl.Str("Contract", func(p *PromptParts) string { return p.Contract }),
		prompttmpl.Str("Default", func(p *PromptParts) string { return p.Default }))
	promptDataType = prompttmpl.NewStruct("PromptData",
		prompttmpl.Sub("Quest", promptQuestType, func(d *PromptData) *PromptQuest { return &d.Quest }),
		prompttmpl.Sub("Node", promptNodeType, func(d *PromptData) *PromptNode { return &d.Node }),
		prompttmpl.Sub("Parent", promptNodeType, func(d *PromptData) *PromptNode { return &d.Parent }),
		prompttmpl.Slice("Ancestors", promptNodeType, func(d *PromptData) []PromptNode { return d.Ancestors }),
		prompttmpl.Str("Feedback", func(d *PromptData) string { return d.Feedback }),
		prompttmpl.Slice("Proposals", promptNodeType, func(d *PromptData) []PromptNode { return d.Proposals }),
		prompttmpl.Slice("Locked", promptNodeType, func(d *PromptData) []PromptNode { return d.Locked }),
		prompttmpl.Sub("Parts", promptPartsType, func(d *PromptData) *PromptParts { return &d.Parts }))
)

// ParsePromptTemplate parses a role's prompt template (the text of its
// file, named name in errors) over [PromptData]. What the template
// language does not have, and a field that PromptData lacks, are a
// *prompttmpl.Error naming the line and column, at load time, not at a
// dispatch; a template that parses always renders.
func ParsePromptTemplate(name, text string) (*prompttmpl.Template, error) {
	return prompttmpl.Parse(name, text, promptDataType)
}

// buildRequest builds the request for dispatching n, reading its ancestors
// and (for an owner) the quest's proposals and locked nodes in tx, which
// may be nil for a worker node without a parent. memo, which may be nil,
// is the transaction's memory of the owner's material (materialMemo).
// The prompt is the default one, or the role's template rendered with the
// same data, by the options in force.
func (e *Engine) buildRequest(tx *store.Tx, memo *materialMemo, q *Quest, n *Node) (agent.Request, error) {
	return e.requestBy(e.conf(), tx, memo, q, n)
}

// requestBy is buildRequest by the options o (the templates, the caps):
// a dispatch's, which its run keeps.
func (e *Engine) requestBy(o *Options, tx *store.Tx, memo *materialMemo, q *Quest, n *Node) (agent.Request, error) {
	src, err := e.readPromptSource(o, tx, memo, q, n)
	if err != nil {
		return agent.Request{Quest: q.ID, Node: n.ID}, err
	}
	return e.renderRequest(o, q, n, &src), nil
}

// promptSource is what a node's prompt shows of the store, read in one
// transaction (readPromptSource); the rest of the prompt (renderRequest)
// is made of the quest and the node alone. Nothing in it is changed once
// read: a council's members share their owner's ancestry and material.
type promptSource struct {
	// ancestors are the nodes above the node, nearest first (at most 16).
	ancestors []PromptNode
	// gate, for a council member, is set when its owner is a phase
	// gate: the council closes the phase gatePhase.
	gate      bool
	gatePhase string
	// material is the owner's material (members and owners), nil for
	// the others.
	material *ownerMaterial
	// teamFacts are an owner's blocked Teams (ownerTeamFacts).
	teamFacts string
}

// readPromptSource reads in tx (through memo, which may be nil) what n's
// prompt shows of the store: see buildRequest.
func (e *Engine) readPromptSource(o *Options, tx *store.Tx, memo *materialMemo, q *Quest, n *Node) (promptSource, error) {
	var src promptSource
	var d PromptData
	parent, err := memo.readAncestors(tx, q, n, &d)
	if err != nil {
		return src, err
	}
	src.ancestors = slices.Clip(d.Ancestors)
	switch {
	case isMember(n.Role):
		if err := e.memberSource(o, tx, memo, q, parent, &src); err != nil {
			return src, err
		}
	case n.Role == RoleOwner:
		if src.material, err = e.memoisedMaterial(tx, memo, q, o.Roles[n.Role].EvidenceCap); err != nil {
			return src, err
		}
		// What its Teams came to (a blocked Team is a FAIL the owner
		// decides on again) comes before its contract.
		var b strings.Builder
		if err := ownerTeamFacts(tx, q, &b); err != nil {
			return src, err
		}
		src.teamFacts = b.String()
	}
	return src, nil
}

// memberSource sets in src what a council member's prompt shows of the
// store besides the nodes above it, read in tx (through memo, which may
// be nil): its owner's material, and the phase its owner gates, parent
// being the member's parent (its owner; nil for none).
func (e *Engine) memberSource(o *Options, tx *store.Tx, memo *materialMemo, q *Quest, parent *Node, src *promptSource) error {
	// A member weighs what the owner would: the same proposals and
	// locked evidence, within the owner's cap.
	var err error
	if src.material, err = e.memoisedMaterial(tx, memo, q, o.Roles[RoleOwner].EvidenceCap); err != nil {
		return err
	}
	if parent != nil && isGateRole(parent.Role) {
		src.gate, src.gatePhase = true, parent.Phase
	}
	return nil
}

// renderRequest is the request for dispatching n of q with what its
// prompt shows of the store, src; it reads nothing else, so a run can
// build it from what its dispatch read (dispatch.src).
func (e *Engine) renderRequest(o *Options, q *Quest, n *Node, src *promptSource) agent.Request {
	req := agent.Request{Quest: q.ID, Node: n.ID, Role: n.Role, Direction: q.Direction, Hypothesis: n.Hypothesis,
		Attempt: n.Tries + 1, Depth: n.Depth}
	d := PromptData{Quest: PromptQuest{ID: q.ID, Name: q.Name, Direction: q.Direction, Mode: q.Mode},
		Node: PromptNode{ID: n.ID, Role: n.Role, Status: string(n.Status), Hypothesis: n.Hypothesis,
			Depth: n.Depth, Try: n.Tries + 1, MaxTries: maxTriesIn(o, q, n.Role)},
		Feedback: n.Feedback, Ancestors: src.ancestors}
	d.Parts.Header = promptHeader(q, n, &d)
	if n.Stage != "" {
		req.Stage, req.Revision = n.Stage, n.RevisionCount
		for _, a := range d.Ancestors {
			if a.ID == n.Team {
				req.Depth = a.Depth
			}
		}
	}
	if len(d.Ancestors) > 0 {
		d.Parent = d.Ancestors[0]
	}
	d.Parts.Ancestors = ancestorsPart(d.Ancestors)
	if n.Feedback != "" {
		d.Parts.Feedback = "\nYour previous attempt was rejected. Fix exactly this:\n" + n.Feedback
	}
	e.contractPart(q, n, src, &req, &d)
	p := &d.Parts
	p.Default = p.Header + p.Ancestors + p.Feedback + p.Proposals + p.Locked + p.Contract
	req.Prompt = renderPrompt(o, n, &d)
	return req
}

// promptHeader is the prompt's opening: who the agent is, the direction,
// the hypothesis and the try.
func promptHeader(q *Quest, n *Node, d *PromptData) string {
	var b strings.Builder
	fmt.Fprintf(&b, "You are the %s of questbox quest %s (%q).\n", n.Role, q.ID, q.Name)
	fmt.Fprintf(&b, "Direction: %s\n", q.Direction)
	fmt.Fprintf(&b, "Node %s, hypothesis: %s\n", n.ID, n.Hypothesis)
	fmt.Fprintf(&b, "This is try %d of %d.\n", d.Node.Try, d.Node.MaxTries)
	return b.String()
}

// readAncestors fills d.Ancestors with up to 16 nodes above n, nearest
// first, and returns n's parent (nil for a root).
func readAncestors(tx *store.Tx, n *Node, d *PromptData) (*Node, error) {
	return readAncestorsFrom(tx, n.Parent, nil, d)
}

// readAncestorsFrom is readAncestors from the node p up, p included;
// first, when it is p's record as readNode reads it, is used instead of
// reading it again.
func readAncestorsFrom(tx *store.Tx, p string, first *Node, d *PromptData) (*Node, error) {
	var parent *Node
	for ; p != "" && len(d.Ancestors) < 16; first = nil {
		a := first
		if a == nil || a.ID != p {
			var err error
			if a, err = readNode(tx, p); err != nil {
				return nil, err
			}
		}
		if parent == nil {
			parent = a
		}
		d.Ancestors = append(d.Ancestors, PromptNode{ID: a.ID, Role: a.Role, Status: string(a.Status), Hypothesis: a.Hypothesis,
			Verdict: a.Verdict, Evidence: truncate(a.Evidence, 1000), Depth: a.Depth})
		p = a.Parent
	}
	return parent, nil
}

// ancestorsPart is what the nodes above established, as the prompt says it.
func ancestorsPart(ancestors []PromptNode) string {
	if len(ancestors) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nWhat the nodes above this one established (nearest first):\n")
	for _, a := range ancestors {
		fmt.Fprintf(&b, "- %s (%s, %s): %s\n", a.ID, a.Role, a.Status, a.Hypothesis)
		if a.Evidence != "" {
			fmt.Fprintf(&b, "  evidence: %s\n", a.Evidence)
		}
	}
	return b.String()
}

// contractPart sets d.Parts.Contract by the node's role (member, owner,
// Team stage or worker), and for members and owners the owner's material.
func (e *Engine) contractPart(q *Quest, n *Node, src *promptSource, req *agent.Request, d *PromptData) {
	switch {
	case isMember(n.Role):
		// What comes before councilMaterialEnd is the material a judge's
		// quotes must occur in.
		src.material.apply(req, d)
		d.Parts.Contract = memberContractPart(n.Role)
		if src.gate {
			d.Parts.Contract += fmt.Sprintf("This council is the gate of the %s phase: a strict majority of judges saying pass opens the next phase; revise sends the phase's newest node back for a revision. Actions are not needed here.\n", src.gatePhase)
		}
	case n.Role == RoleOwner:
		src.material.apply(req, d)
		var b strings.Builder
		b.WriteString(src.teamFacts)
		if q.Teams {
			b.WriteString("\nThis quest runs Teams: each node you spawn or promote becomes a Team (planner, executer, accepter).\n")
		}
		d.Parts.Contract = b.String() + "\n" + ownerContract
	case n.Stage != "":
		d.Parts.Contract = "\n" + team.StageContract(q, n, workerContract)
	default:
		d.Parts.Contract = "\n" + workerContract
	}
}

// renderPrompt renders the role's template over d, or returns the default
// prompt when the role has none.
func renderPrompt(o *Options, n *Node, d *PromptData) string {
	tmpl := o.Roles[n.Role].Prompt
	if tmpl == nil {
		return d.Parts.Default
	}
	return tmpl.Render(d)
}

// memoisedMaterial is what the owner decides on (ownerMaterial): from
// memo when it holds q's material at q's revision and cap, else read in
// tx (and kept in memo, which may be nil).
func (e *Engine) memoisedMaterial(tx *store.Tx, memo *materialMemo, q *Quest, evidenceCap int) (*ownerMaterial, error) {
	if evidenceCap <= 0 {
		evidenceCap = DefaultEvidenceCap
	}
	if m := memo.get(q, evidenceCap); m != nil {
		return m, nil
	}
	m, err := readOwnerMaterial(tx, q, evidenceCap)
	if err != nil {
		return nil, err
	}
	memo.put(q, m)
	return m, nil
}

// cutEvidence returns ev whole when it fits in limit bytes, else its
// first bytes (on a character boundary) and a marker saying how much of
// it was cut, the whole within limit when limit leaves room for the
// marker.
func cutEvidence(ev string, limit int) string {
	if len(ev) <= limit {
		return ev
	}
	marker := fmt.Sprintf(" […cut: %d of %d bytes]", len(ev)-limit, len(ev))
	keep := max(limit-len(marker), 0)
	for keep > 0 && !isRuneStart(ev[keep]) {
		keep--
	}
	return ev[:keep] + fmt.Sprintf(" […cut: %d of %d bytes]", len(ev)-keep, len(ev))
}
