package engine

import (
	"fmt"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/questbox/questbox/engine/agent"
)

// workerContract is the output contract of SPEC §2.6, as the agent reads it.
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
	return buildRequest(t.tx, q, n)
}

// runRequest is the request of a dispatch, built by its run when the tick
// did not build it (see dispatch.built). It reads the same data the tick's
// transaction would have: the quest and the node are the dispatch's own
// copies, and the only records it reads are the node's ancestors, each a
// node that was terminal before its child existed (a child is created
// with or after its parent's verdict), so its record never changes
// again (the ratchet). A node with no parent reads nothing.
func (e *Engine) runRequest(d *dispatch) (agent.Request, error) {
	if d.built {
		return d.req, nil
	}
	if d.node.Parent == "" {
		return buildRequest(nil, &d.quest, &d.node)
	}
	var req agent.Request
	err := e.store.view(func(tx *bolt.Tx) error {
		var err error
		req, err = buildRequest(tx, &d.quest, &d.node)
		return err
	})
	return req, err
}

// buildRequest builds the request for dispatching n, reading its ancestors
// and (for an owner) the quest's proposals in tx, which may be nil for a
// worker node without a parent.
func buildRequest(tx *bolt.Tx, q *Quest, n *Node) (agent.Request, error) {
	req := agent.Request{Quest: q.ID, Node: n.ID, Role: n.Role, Direction: q.Direction, Hypothesis: n.Hypothesis,
		Attempt: n.Tries + 1, Depth: n.Depth}
	var b strings.Builder
	fmt.Fprintf(&b, "You are the %s of questbox quest %s (%q).\n", n.Role, q.ID, q.Name)
	fmt.Fprintf(&b, "Direction: %s\n", q.Direction)
	fmt.Fprintf(&b, "Node %s, hypothesis: %s\n", n.ID, n.Hypothesis)
	fmt.Fprintf(&b, "This is try %d of %d.\n", n.Tries+1, q.Limits.MaxTries)
	var anc []*Node
	for p := n.Parent; p != "" && len(anc) < 16; {
		a, err := readNode(tx, p)
		if err != nil {
			return req, err
		}
		anc = append(anc, a)
		p = a.Parent
	}
	if n.Stage != "" {
		req.Stage, req.Revision = n.Stage, n.RevisionCount
		for _, a := range anc {
			if a.ID == n.Team {
				req.Depth = a.Depth
			}
		}
	}
	if len(anc) > 0 {
		b.WriteString("\nWhat the nodes above this one established (nearest first):\n")
		for _, a := range anc {
			fmt.Fprintf(&b, "- %s (%s, %s): %s\n", a.ID, a.Role, a.Status, a.Hypothesis)
			if a.Evidence != "" {
				fmt.Fprintf(&b, "  evidence: %s\n", truncate(a.Evidence, 1000))
			}
		}
	}
	if n.Feedback != "" {
		b.WriteString("\nYour previous attempt was rejected. Fix exactly this:\n")
		b.WriteString(n.Feedback)
	}
	if n.Role == RoleOwner {
		if pb := subRO(tx, bProposed, q.ID); pb != nil {
			c := pb.Cursor()
			for k, v := c.First(); k != nil && len(req.Proposals) < 50; k, v = c.Next() {
				p, err := readNode(tx, string(v))
				if err != nil {
					return req, err
				}
				req.Proposals = append(req.Proposals, agent.Proposal{Node: p.ID, Hypothesis: p.Hypothesis})
			}
		}
		b.WriteString("\nProposals waiting for your decision (oldest first):\n")
		if len(req.Proposals) == 0 {
			b.WriteString("(none: spawn new work or finish the quest)\n")
		}
		for _, p := range req.Proposals {
			fmt.Fprintf(&b, "- %s: %s\n", p.Node, p.Hypothesis)
		}
		if err := ownerTeamFacts(tx, q, &b); err != nil {
			return req, err
		}
		if q.Teams {
			b.WriteString("\nThis quest runs Teams: each node you spawn or promote becomes a Team (planner, executer, accepter).\n")
		}
		b.WriteString("\n" + ownerContract)
	} else if n.Stage != "" {
		b.WriteString("\n" + stageContract(q, n))
	} else {
		b.WriteString("\n" + workerContract)
	}
	req.Prompt = b.String()
	return req, nil
}
