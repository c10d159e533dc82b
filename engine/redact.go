package engine

import (
	"slices"

	"github.com/questbox/questbox/engine/agent"
)

// RedactMask replaces each match of a [privacy] redact pattern in a prompt
// that leaves for a non-local vendor.
const RedactMask = "[redacted]"

// redact masks Options.Redact in req when provider's vendor is not local
// (SPEC §2.8 "Privacy egress"): the prompt and every text field a provider
// could send on (direction, hypothesis, proposals). It is the one place
// a prompt is redacted, called just before the provider runs, and it
// reports whether anything was masked (the run records it). A replay
// sends nothing anywhere and is never redacted.
func redact(o *Options, provider string, req agent.Request) (agent.Request, bool) {
	if len(o.Redact) == 0 || provider == "replay" || vendorIn(o, provider) == VendorLocal {
		return req, false
	}
	masked := false
	mask := func(s string) string {
		for _, re := range o.Redact {
			if re.MatchString(s) {
				s, masked = re.ReplaceAllLiteralString(s, RedactMask), true
			}
		}
		return s
	}
	req.Prompt = mask(req.Prompt)
	req.Direction = mask(req.Direction)
	req.Hypothesis = mask(req.Hypothesis)
	if len(req.Proposals) > 0 {
		req.Proposals = slices.Clone(req.Proposals)
		for i := range req.Proposals {
			req.Proposals[i].Hypothesis = mask(req.Proposals[i].Hypothesis)
		}
	}
	return req, masked
}

// noteRedacted records on run id of node n that its prompt was redacted.
func (t *txn) noteRedacted(n *Node, id string) error {
	r, ok, err := getRun(t.tx, id, n.Quest, n.ID)
	if err != nil || !ok {
		return err
	}
	r.Redacted = true
	return t.putRun(&r)
}
