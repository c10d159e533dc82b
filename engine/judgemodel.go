package engine

import (
	"context"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/gates/judge"
)

// JudgeModel adapts provider p, whose prompts go to vendor, to one tier of
// the L2 judge (judge.Model): the judge prompt is the whole request, and
// the provider's output is the judge's answer (which judge.Parse reads
// strictly). The prompt leaves through r exactly as an agent's prompt to
// the same vendor does (Redaction.Outbound): masked unless the vendor is
// local. A clear that quotes a masked part of a source no longer quotes
// the source, so it counts as doubt: masking never makes a judge clear
// more.
func JudgeModel(p Provider, vendor string, r *Redaction) judge.Model {
	return judgeModel{p: p, vendor: vendor, r: r}
}

type judgeModel struct {
	p      Provider
	vendor string
	r      *Redaction
}

// Judge implements judge.Model.
func (m judgeModel) Judge(ctx context.Context, prompt string) (string, error) {
	// A command judge reaches the network only when its vendor is not
	// local; a quest runs only the judges its egress allows.
	req, _ := m.r.Outbound(m.vendor, agent.Request{Prompt: prompt, Network: m.vendor != VendorLocal})
	rep, err := m.p.Run(ctx, req)
	if err != nil {
		return "", m.r.Error(err) // kept as a doubt's reason, in the store
	}
	return string(rep.Output), nil
}
