// Package gates decides, deterministically, whether an agent's submission may
// be locked. It is the L1 machine authority (docs/design.md, "Authority"):
// values in, verdicts out.
//
// # Contracts
//
// A gate is a [Catalog] of [Rule] values. Each rule detects one way of cheating
// and, when it fires, returns one or more [Fact] values saying where the answer is
// wrong, what was expected and what was found. Severity is a [Level], never a
// weight: [Fail] or [Review]. [Aggregate] turns facts into a [Verdict]: any Fail
// fact gives [OutcomeFail]; otherwise any Review fact gives [OutcomeReview];
// otherwise [OutcomePass]. A fact whose level is not a known level counts as Fail
// (fail closed).
//
// Catalogs are validated when built ([NewCatalog]): an empty catalog, a nil rule,
// an empty or duplicate id, an unknown level or an unknown stage is a load error.
// [Catalog.Evaluate] runs every rule, stamps each fact with the id and level of
// the rule that produced it (a rule cannot speak for another rule or soften its
// own declared level), turns a panicking rule into a Fail fact, and aggregates.
//
// Catalogs come from Go ([NewCatalog], [NewGraphCatalog]) or from
// configuration ([LoadCatalog] over [RuleSpec] values naming built-in kinds,
// listed by [Kinds]); loading fails closed with an error naming the rule and
// the problem. [Catalog.Describe] is the audit list `questbox rules` prints.
//
// # Stages and ground (docs/design.md, "Staged evaluation and ground")
//
// Rules never touch the network. A ground-stage rule declares what it needs
// ([GroundRule.Needs] returning [Request] values) and reads the answers
// ([Observation]) from Input.Ground. [Catalog.EvaluateStaged] runs the pure
// rules first; if they FAIL, no request is made at all. Otherwise it asks a
// [Grounder] (package gates/ground: one Snapshot per evaluation) for the
// deduplicated requests; offline, or on a transport error, the result is
// Deferred, which is not a FAIL. Staged and full evaluation agree on the
// outcome (property-tested).
//
// # Defeat graph (docs/design.md, "The defeat graph")
//
// A catalog may declare attacks and supersedes edges between its rules; the
// weighted h-Categoriser decides which fired rules survive (see graph.go for
// the exact semantics). With no edges the verdict is exactly [Aggregate].
// Every evaluation also yields [Feedback]: the root cause, side branches and
// which rules to clear to flip the verdict; its String is the one canonical
// text shown to the agent and to humans.
//
// The worker output contract (docs/design.md, "Providers and the worker's
// answer") is parsed by [ParseAnswer], and the owner's action list by
// [ParseOwnerAnswer]. Both are strict: they reject unknown, duplicate,
// missing and wrongly typed fields with a precise fact, and they never panic,
// whatever the input.
//
// # Authority
//
// Authority is enforced by types and by the import graph (docs/design.md,
// "Authority"):
//
//   - L1, this package's deterministic rules, is the only authority that can
//     produce a PASS, and only through [Aggregate] (used by every Evaluate
//     method). Verdict's fields are exported so that the engine can store and
//     display it; code that receives a Verdict from outside (for example from
//     the store) should call [Verdict.Check] before trusting it.
//   - L2 judges live in package gates/judge. Their result type has no way to
//     say PASS (an Effect is Clear or Doubt), and judge.Combine can only keep
//     or lower an L1 verdict.
//   - L3 consent lives in package gates/consent. A consent.Consent can only
//     be made from a sealed consent.Source (the physical button, or an
//     authenticated dashboard session or MQTT consent the owner enabled), names the
//     [ClaimHash] it was shown, and is rejected for any other hash. It can
//     approve a REVIEW, never a FAIL. Neither this package nor gates/judge
//     imports gates/consent.
//
// # Purity
//
// The package does no I/O, reads no clock, has no mutable package state and
// imports nothing of questbox and no net/* package; imports_test.go pins this.
// Network facts reach rules only through the ground stage ([StageGround]), which
// is supplied from outside. Every function here is safe for concurrent use; a
// Catalog is immutable once built.
package gates
