package engine

import (
	"strings"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/prompt"
	"github.com/questbox/questbox/engine/prompttmpl"
	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
	"github.com/questbox/questbox/engine/team"
)

// What an agent is sent is package prompt's: the names the engine and its
// callers use for it.
type (
	// PromptData is what a role's prompt template is rendered with
	// (prompt.Data).
	PromptData = prompt.Data
	// PromptQuest is the quest in a [PromptData].
	PromptQuest = prompt.Quest
	// PromptNode is a node in a [PromptData].
	PromptNode = prompt.Node
	// PromptParts are the default prompt's pieces.
	PromptParts = prompt.Parts

	// promptSource is what a node's prompt shows of the store, read in
	// one transaction (prompt.Source).
	promptSource = prompt.Source
	// materialMemo is a write transaction's memory of the owner's
	// material (prompt.Memo).
	materialMemo = prompt.Memo
)

// DefaultEvidenceCap bounds the locked nodes' evidence in the owner's
// prompt, in bytes, when [roles.owner] evidence_cap does not
// (prompt.DefaultEvidenceCap).
const DefaultEvidenceCap = prompt.DefaultEvidenceCap

// workerContract is the output contract of a worker (prompt.WorkerContract).
const workerContract = prompt.WorkerContract

// ParsePromptTemplate parses a role's prompt template (the text of its
// file, named name in errors) over [PromptData] (prompt.ParseTemplate).
func ParsePromptTemplate(name, text string) (*prompttmpl.Template, error) {
	return prompt.ParseTemplate(name, text)
}

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
		return prompt.Render(promptRulesOf(d.opt), d.quest, d.member.node, &d.member.src), nil
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

// buildRequest builds the request for dispatching n (prompt.Request) by
// the options in force, reading in tx (which may be nil for a worker node
// without a parent) through memo (which may be nil).
func (e *Engine) buildRequest(tx *store.Tx, memo *materialMemo, q *Quest, n *Node) (agent.Request, error) {
	return e.requestBy(e.conf(), tx, memo, q, n)
}

// requestBy is buildRequest by the options o (the templates, the caps):
// a dispatch's, which its run keeps.
func (e *Engine) requestBy(o *Options, tx *store.Tx, memo *materialMemo, q *Quest, n *Node) (agent.Request, error) {
	return prompt.Request(promptRulesOf(o), tx, memo, q, n)
}

// readPromptSource reads in tx (through memo, which may be nil) what n's
// prompt shows of the store (prompt.ReadSource).
func (e *Engine) readPromptSource(o *Options, tx *store.Tx, memo *materialMemo, q *Quest, n *Node) (promptSource, error) {
	return prompt.ReadSource(promptRulesOf(o), tx, memo, q, n)
}

// memberSource sets in src what a council member's prompt shows of the
// store when the nodes above it are known, ancestors
// (prompt.MemberSource).
func (e *Engine) memberSource(o *Options, tx *store.Tx, memo *materialMemo, q *Quest, parent *Node, ancestors []PromptNode, src *promptSource) error {
	return prompt.MemberSource(promptRulesOf(o), tx, memo, q, parent, ancestors, src)
}

// readAncestorsFrom fills d.Ancestors with the nodes from p up, p
// included (prompt.ReadAncestorsFrom).
func readAncestorsFrom(tx *store.Tx, p string, first *Node, d *PromptData) (*Node, error) {
	return prompt.ReadAncestorsFrom(promptRecords(), tx, p, first, d)
}

// promptRules are the options o as a prompt asks them (prompt.Rules): a
// conversion, so that passing them allocates nothing.
type promptRules Options

func promptRulesOf(o *Options) *promptRules { return (*promptRules)(o) }

// promptRecords is what a prompt reads of the store (prompt.Records),
// which needs no options.
func promptRecords() prompt.Records { return (*promptRules)(nil) }

var _ prompt.Rules = (*promptRules)(nil)

func (*promptRules) Node(tx *store.Tx, id string) (*Node, error)  { return records.ReadNode(tx, id) }
func (*promptRules) WithoutEvidence(tx *store.Tx, id string) bool { return withoutEvidence(tx, id) }
func (*promptRules) ShownEvidence(n *Node) bool                   { return shownEvidence(n) }
func (*promptRules) TeamFacts(tx *store.Tx, q *Quest, b *strings.Builder) error {
	return ownerTeamFacts(tx, q, b)
}
func (r *promptRules) MaxTries(q *Quest, role string) int        { return maxTriesIn((*Options)(r), q, role) }
func (r *promptRules) Template(role string) *prompttmpl.Template { return r.Roles[role].Prompt }
func (r *promptRules) EvidenceCap(role string) int               { return r.Roles[role].EvidenceCap }
func (*promptRules) MemberContract(role string) string           { return memberContractPart(role) }
func (*promptRules) StageContract(q *Quest, n *Node) string {
	return team.StageContract(q, n, workerContract)
}
