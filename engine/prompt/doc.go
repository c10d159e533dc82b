// Package prompt builds what an agent is sent: a node's prompt and output
// contract (the worker's, docs/design.md, "Providers and the worker's
// answer"; the owner's; a council member's and a Team stage's, which their
// rules write), the owner's material (the proposals and the locked nodes'
// evidence, within the evidence cap), a role's prompt template and the
// data it renders ([Data]), and the redaction that masks every prompt
// leaving for a vendor that is not local and every run's log
// (docs/design.md, "Privacy egress").
//
// It reads the store only through [Records], in a transaction the engine
// gives it, and asks the roles' settings and the other concerns' parts of
// a prompt through [Roles]; the engine's transaction keeps a [Memo] so
// that the members of a council read their owner's material once
// (docs/design.md, "Memory on a small box").
package prompt
