package prompt

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/prompttmpl"
	"github.com/questbox/questbox/engine/store"
)

// Records is what a prompt reads of the store, in the transaction tx it
// is given: the node records as the engine reads them. Its methods only
// read; they are called within tx.
type Records interface {
	// Node is node id's record, with its running entry laid over it.
	Node(tx *store.Tx, id string) (*domain.Node, error)
	// WithoutEvidence reports, without decoding it, that the locked node
	// id shows no evidence (on a store without the evidence index).
	WithoutEvidence(tx *store.Tx, id string) bool
	// ShownEvidence reports whether n's evidence is shown in its quest's
	// owner's prompt (a locked node's with evidence, not a member's).
	ShownEvidence(n *domain.Node) bool
}

// Roles is what a prompt asks of the roles' settings in force (a
// dispatch's, which its run keeps) and of the rules that write a part of
// a prompt: the council's and the Teams'.
type Roles interface {
	// MaxTries is how many FAILs a node of role may take in q.
	MaxTries(q *domain.Quest, role string) int
	// Template is role's prompt template, nil for the default prompt.
	Template(role string) *prompttmpl.Template
	// EvidenceCap is role's evidence cap in bytes, 0 for the default
	// (DefaultEvidenceCap).
	EvidenceCap(role string) int
	// MemberContract is the contract part of a council member's prompt.
	MemberContract(role string) string
	// StageContract is the answer contract of a Team stage's node n.
	StageContract(q *domain.Quest, n *domain.Node) string
}

// Rules is what building a prompt asks of the engine: the records it
// reads, the roles' settings, and an owner's blocked Teams.
type Rules interface {
	Records
	Roles
	// TeamFacts writes q's blocked Teams into an owner's prompt, read in
	// tx.
	TeamFacts(tx *store.Tx, q *domain.Quest, b *strings.Builder) error
}

// WorkerContract is the output contract of a worker (docs/design.md,
// "Providers and the worker's answer"), as the agent reads it.
const WorkerContract = "Finish your answer with exactly one fenced ```json block (the last one counts):\n" +
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

// DefaultEvidenceCap bounds the locked nodes' evidence in the owner's
// prompt, in bytes, when [roles.owner] evidence_cap does not: newest
// first, each node's evidence cut to a quarter of the cap (so that one
// long answer cannot crowd out the others) and to what is left of it,
// with a marker saying how much was cut.
const DefaultEvidenceCap = 8 << 10

// Data is what a role's prompt template ([roles.NAME] template) is
// rendered with, in the template language of package prompttmpl (a part
// of Go's text/template): {{.Quest.Direction}}, {{.Node.Hypothesis}},
// {{range .Ancestors}}…{{end}}, {{.Parts.Contract}}. Parts are the
// default prompt's pieces, so that a template can reword one part and
// keep the rest; Parts.Default is the whole default prompt. A field added
// here is added to dataType too (TestPromptSchemaHasEveryField).
type Data struct {
	Quest Quest
	Node  Node
	// Parent is the node's parent; its ID is "" for a root node.
	Parent Node
	// Ancestors are the nodes above this one, nearest first (at most 16).
	Ancestors []Node
	// Feedback is what the last attempt was rejected for; "" on a first
	// try.
	Feedback string
	// Proposals (owner only) are the quest's proposed nodes, oldest first.
	Proposals []Node
	// Locked (owner only) are the quest's locked nodes with their
	// evidence, newest first, within the evidence cap.
	Locked []Node
	Parts  Parts
}

// Quest is the quest in a [Data].
type Quest struct {
	ID, Name, Direction, Mode string
}

// Node is a node in a [Data]. Evidence is cut (with a marker)
// where the default prompt cuts it; Try and MaxTries are set for the
// node being prompted only.
type Node struct {
	ID, Role, Status, Hypothesis, Verdict, Evidence string
	Depth, Try, MaxTries                            int
}

// Parts are the default prompt's pieces, each ending in a newline
// (or empty): Header (role, quest, direction, node, try), Ancestors,
// Feedback, Proposals (owner), Locked (owner), Contract (the output
// contract of the role), and Default, all of them in order.
type Parts struct {
	Header, Ancestors, Feedback, Proposals, Locked, Contract, Default string
}

// The template types of Data and its parts: what a template may
// read, field by field, without reflection.
var (
	questType = prompttmpl.NewStruct("PromptQuest",
		prompttmpl.Str("ID", func(q *Quest) string { return q.ID }),
		prompttmpl.Str("Name", func(q *Quest) string { return q.Name }),
		prompttmpl.Str("Direction", func(q *Quest) string { return q.Direction }),
		prompttmpl.Str("Mode", func(q *Quest) string { return q.Mode }))
	nodeType = prompttmpl.NewStruct("PromptNode",
		prompttmpl.Str("ID", func(n *Node) string { return n.ID }),
		prompttmpl.Str("Role", func(n *Node) string { return n.Role }),
		prompttmpl.Str("Status", func(n *Node) string { return n.Status }),
		prompttmpl.Str("Hypothesis", func(n *Node) string { return n.Hypothesis }),
		prompttmpl.Str("Verdict", func(n *Node) string { return n.Verdict }),
		prompttmpl.Str("Evidence", func(n *Node) string { return n.Evidence }),
		prompttmpl.Num("Depth", func(n *Node) int { return n.Depth }),
		prompttmpl.Num("Try", func(n *Node) int { return n.Try }),
		prompttmpl.Num("MaxTries", func(n *Node) int { return n.MaxTries }))
	partsType = prompttmpl.NewStruct("PromptParts",
		prompttmpl.Str("Header", func(p *Parts) string { return p.Header }),
		prompttmpl.Str("Ancestors", func(p *Parts) string { return p.Ancestors }),
		prompttmpl.Str("Feedback", func(p *Parts) string { return p.Feedback }),
		prompttmpl.Str("Proposals", func(p *Parts) string { return p.Proposals }),
		prompttmpl.Str("Locked", func(p *Parts) string { return p.Locked }),
		prompttmpl.Str("Contract", func(p *Parts) string { return p.Contract }),
		prompttmpl.Str("Default", func(p *Parts) string { return p.Default }))
	dataType = prompttmpl.NewStruct("PromptData",
		prompttmpl.Sub("Quest", questType, func(d *Data) *Quest { return &d.Quest }),
		prompttmpl.Sub("Node", nodeType, func(d *Data) *Node { return &d.Node }),
		prompttmpl.Sub("Parent", nodeType, func(d *Data) *Node { return &d.Parent }),
		prompttmpl.Slice("Ancestors", nodeType, func(d *Data) []Node { return d.Ancestors }),
		prompttmpl.Str("Feedback", func(d *Data) string { return d.Feedback }),
		prompttmpl.Slice("Proposals", nodeType, func(d *Data) []Node { return d.Proposals }),
		prompttmpl.Slice("Locked", nodeType, func(d *Data) []Node { return d.Locked }),
		prompttmpl.Sub("Parts", partsType, func(d *Data) *Parts { return &d.Parts }))
)

// ParseTemplate parses a role's prompt template (the text of its
// file, named name in errors) over [Data]. What the template
// language does not have, and a field that Data lacks, are a
// *prompttmpl.Error naming the line and column, at load time, not at a
// dispatch; a template that parses always renders.
func ParseTemplate(name, text string) (*prompttmpl.Template, error) {
	return prompttmpl.Parse(name, text, dataType)
}

// Request builds the request for dispatching n, reading its ancestors
// and (for an owner) the quest's proposals and locked nodes in tx, which
// may be nil for a worker node without a parent. memo, which may be nil,
// is the transaction's memory of the owner's material ([Memo]).
// The prompt is the default one, or the role's template rendered with the
// same data, by the rules r of the options in force (the templates, the
// caps): a dispatch's, which its run keeps.
func Request(r Rules, tx *store.Tx, memo *Memo, q *domain.Quest, n *domain.Node) (agent.Request, error) {
	src, err := ReadSource(r, tx, memo, q, n)
	if err != nil {
		return agent.Request{Quest: q.ID, Node: n.ID}, err
	}
	return Render(r, q, n, &src), nil
}

// Source is what a node's prompt shows of the store, read in one
// transaction (ReadSource); the rest of the prompt (Render)
// is made of the quest and the node alone. Nothing in it is changed once
// read: a council's members share their owner's ancestry and material.
type Source struct {
	// ancestors are the nodes above the node, nearest first (at most 16).
	ancestors []Node
	// gate, for a council member, is set when its owner is a phase
	// gate: the council closes the phase gatePhase.
	gate      bool
	gatePhase string
	// material is the owner's material (members and owners), nil for
	// the others.
	material *Material
	// teamFacts are an owner's blocked Teams (Rules.TeamFacts).
	teamFacts string
}

// ReadSource reads in tx (through memo, which may be nil) what n's
// prompt shows of the store: see [Request].
func ReadSource(r Rules, tx *store.Tx, memo *Memo, q *domain.Quest, n *domain.Node) (Source, error) {
	var src Source
	var d Data
	parent, err := memo.readAncestors(r, tx, q, n, &d)
	if err != nil {
		return src, err
	}
	src.ancestors = slices.Clip(d.Ancestors)
	switch {
	case domain.IsMember(n.Role):
		if err := memberSource(r, tx, memo, q, parent, &src); err != nil {
			return src, err
		}
	case n.Role == domain.RoleOwner:
		if src.material, err = memoisedMaterial(r, tx, memo, q, r.EvidenceCap(n.Role)); err != nil {
			return src, err
		}
		// What its Teams came to (a blocked Team is a FAIL the owner
		// decides on again) comes before its contract.
		var b strings.Builder
		if err := r.TeamFacts(tx, q, &b); err != nil {
			return src, err
		}
		src.teamFacts = b.String()
	}
	return src, nil
}

// MemberSource sets in src what a council member's prompt shows of the
// store when the nodes above it are known, ancestors (its owner's, shared
// by the sitting's members, read only): those, and what memberSource
// reads.
func MemberSource(r Rules, tx *store.Tx, memo *Memo, q *domain.Quest, parent *domain.Node, ancestors []Node, src *Source) error {
	src.ancestors = ancestors
	return memberSource(r, tx, memo, q, parent, src)
}

// memberSource sets in src what a council member's prompt shows of the
// store besides the nodes above it, read in tx (through memo, which may
// be nil): its owner's material, and the phase its owner gates, parent
// being the member's parent (its owner; nil for none).
func memberSource(r Rules, tx *store.Tx, memo *Memo, q *domain.Quest, parent *domain.Node, src *Source) error {
	// A member weighs what the owner would: the same proposals and
	// locked evidence, within the owner's cap.
	var err error
	if src.material, err = memoisedMaterial(r, tx, memo, q, r.EvidenceCap(domain.RoleOwner)); err != nil {
		return err
	}
	if parent != nil && domain.IsGateRole(parent.Role) {
		src.gate, src.gatePhase = true, parent.Phase
	}
	return nil
}

// Render is the request for dispatching n of q with what its prompt
// shows of the store, src, by the rules r; it reads nothing else, so a
// run can build it from what its dispatch read.
func Render(r Roles, q *domain.Quest, n *domain.Node, src *Source) agent.Request {
	req := agent.Request{Quest: q.ID, Node: n.ID, Role: n.Role, Direction: q.Direction, Hypothesis: n.Hypothesis,
		Attempt: n.Tries + 1, Depth: n.Depth}
	d := Data{Quest: Quest{ID: q.ID, Name: q.Name, Direction: q.Direction, Mode: q.Mode},
		Node: Node{ID: n.ID, Role: n.Role, Status: string(n.Status), Hypothesis: n.Hypothesis,
			Depth: n.Depth, Try: n.Tries + 1, MaxTries: r.MaxTries(q, n.Role)},
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
	contractPart(r, q, n, src, &req, &d)
	p := &d.Parts
	p.Default = p.Header + p.Ancestors + p.Feedback + p.Proposals + p.Locked + p.Contract
	req.Prompt = renderPrompt(r, n, &d)
	return req
}

// promptHeader is the prompt's opening: who the agent is, the direction,
// the hypothesis and the try.
func promptHeader(q *domain.Quest, n *domain.Node, d *Data) string {
	var b strings.Builder
	fmt.Fprintf(&b, "You are the %s of questbox quest %s (%q).\n", n.Role, q.ID, q.Name)
	fmt.Fprintf(&b, "Direction: %s\n", q.Direction)
	fmt.Fprintf(&b, "Node %s, hypothesis: %s\n", n.ID, n.Hypothesis)
	fmt.Fprintf(&b, "This is try %d of %d.\n", d.Node.Try, d.Node.MaxTries)
	return b.String()
}

// readAncestors fills d.Ancestors with up to 16 nodes above n, nearest
// first, and returns n's parent (nil for a root).
func readAncestors(r Records, tx *store.Tx, n *domain.Node, d *Data) (*domain.Node, error) {
	return ReadAncestorsFrom(r, tx, n.Parent, nil, d)
}

// ReadAncestorsFrom fills d.Ancestors with up to 16 nodes from the node
// p up, p included, nearest first, read in tx, and returns p's record;
// first, when it is p's record as r.Node reads it, is used instead of
// reading it again.
func ReadAncestorsFrom(r Records, tx *store.Tx, p string, first *domain.Node, d *Data) (*domain.Node, error) {
	var parent *domain.Node
	for ; p != "" && len(d.Ancestors) < 16; first = nil {
		a := first
		if a == nil || a.ID != p {
			var err error
			if a, err = r.Node(tx, p); err != nil {
				return nil, err
			}
		}
		if parent == nil {
			parent = a
		}
		d.Ancestors = append(d.Ancestors, Node{ID: a.ID, Role: a.Role, Status: string(a.Status), Hypothesis: a.Hypothesis,
			Verdict: a.Verdict, Evidence: domain.Truncate(a.Evidence, 1000), Depth: a.Depth})
		p = a.Parent
	}
	return parent, nil
}

// ancestorsPart is what the nodes above established, as the prompt says it.
func ancestorsPart(ancestors []Node) string {
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
func contractPart(r Roles, q *domain.Quest, n *domain.Node, src *Source, req *agent.Request, d *Data) {
	switch {
	case domain.IsMember(n.Role):
		// What comes before the member contract's start is the material a judge's
		// quotes must occur in.
		src.material.Apply(req, d)
		d.Parts.Contract = r.MemberContract(n.Role)
		if src.gate {
			d.Parts.Contract += fmt.Sprintf("This council is the gate of the %s phase: a strict majority of judges saying pass opens the next phase; revise sends the phase's newest node back for a revision. Actions are not needed here.\n", src.gatePhase)
		}
	case n.Role == domain.RoleOwner:
		src.material.Apply(req, d)
		var b strings.Builder
		b.WriteString(src.teamFacts)
		if q.Teams {
			b.WriteString("\nThis quest runs Teams: each node you spawn or promote becomes a Team (planner, executer, accepter).\n")
		}
		d.Parts.Contract = b.String() + "\n" + ownerContract
	case n.Stage != "":
		d.Parts.Contract = "\n" + r.StageContract(q, n)
	default:
		d.Parts.Contract = "\n" + WorkerContract
	}
}

// renderPrompt renders the role's template over d, or returns the default
// prompt when the role has none.
func renderPrompt(r Roles, n *domain.Node, d *Data) string {
	tmpl := r.Template(n.Role)
	if tmpl == nil {
		return d.Parts.Default
	}
	return tmpl.Render(d)
}

// memoisedMaterial is what the owner decides on (Material): from
// memo when it holds q's material at q's revision and cap, else read in
// tx (and kept in memo, which may be nil).
func memoisedMaterial(r Records, tx *store.Tx, memo *Memo, q *domain.Quest, evidenceCap int) (*Material, error) {
	if evidenceCap <= 0 {
		evidenceCap = DefaultEvidenceCap
	}
	if m := memo.Material(q, evidenceCap); m != nil {
		return m, nil
	}
	m, err := ReadMaterial(r, tx, q, evidenceCap)
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
	for keep > 0 && !utf8.RuneStart(ev[keep]) {
		keep--
	}
	return ev[:keep] + fmt.Sprintf(" […cut: %d of %d bytes]", len(ev)-keep, len(ev))
}
