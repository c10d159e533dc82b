// Package gates decides, deterministically, whether an agent's submission may be
// locked. It is the L1 machine authority of SPEC §4: values in, verdicts out.
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
// The worker output contract (SPEC §2.6) is parsed by [ParseAnswer], and the
// owner's action list by [ParseOwnerAnswer]. Both are strict: they reject
// unknown, duplicate, missing and wrongly typed fields with a precise fact, and
// they never panic, whatever the input.
//
// # Authority
//
// Authority is enforced by types and by the import graph (SPEC §4.3):
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
//     authenticated dashboard session the owner enabled), names the
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
