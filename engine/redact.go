package engine

import (
	"regexp"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/prompt"
	"github.com/questbox/questbox/engine/records"
)

// RedactMask replaces each match of a [privacy] redact pattern in a prompt
// that leaves for a non-local vendor, and in a run's log (prompt.RedactMask).
const RedactMask = prompt.RedactMask

// Secrets masks the configured secrets in a text (prompt.Secrets).
type Secrets = prompt.Secrets

// Redaction is the one rule that masks what leaves the box and what the box
// writes of an agent's output (prompt.Redaction).
type Redaction = prompt.Redaction

// NewRedaction returns the rule of patterns and secrets; secrets may be
// nil. It returns nil when both are empty: nothing to mask.
func NewRedaction(patterns []*regexp.Regexp, secrets Secrets) *Redaction {
	return prompt.NewRedaction(patterns, secrets)
}

// redact is req as it leaves for provider under the options o a run was
// dispatched with (Redaction.Outbound with the provider's vendor), called
// just before the provider runs. A replay sends nothing anywhere and is
// never redacted.
func redact(o *Options, provider string, req agent.Request) (agent.Request, bool) {
	if provider == "replay" {
		return req, false
	}
	return o.Redaction.Outbound(vendorIn(o, provider), req)
}

// NoteRedacted records on run id of node n that its prompt was redacted.
func (t *txn) NoteRedacted(n *Node, id string) error {
	r, ok, err := records.GetRun(t.tx, id, n.Quest, n.ID)
	if err != nil || !ok {
		return err
	}
	r.Redacted = true
	return t.PutRun(&r)
}
