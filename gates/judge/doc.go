// Package judge is the L2 authority (docs/design.md, "Authority", "Judge
// discipline"): AI judges that can raise doubt about a claim but never grant
// completion.
//
// # Authority
//
// A judgement is a [Result] whose [Effect] is [Clear] or [Doubt]; there is no
// value for "pass", and an unknown Effect counts as Doubt. The only bridge
// from L2 to a verdict is [Combine], which can keep or lower an L1
// [gates.Verdict] but never raise it: it returns PASS only when L1 already
// passed and every result is Clear, and everything it returns is built by
// [gates.Aggregate]. This package does not import gates/consent, so it cannot
// make L3 consent either (pinned by a test in gates/consent).
//
// # Discipline (docs/design.md, "Judge discipline")
//
//   - Strict output: [Parse] accepts exactly one JSON object with exactly
//     "decision", "quote" and "reason"; anything else is an undecided Doubt.
//   - Citation obligation: a clear must quote the evidence, and the quote
//     must occur in it after normalisation ([gates.ContainsQuote]); an empty,
//     absent or unfound quote is an undecided Doubt.
//   - Cache: decided results are stored under [CacheKey] (claim hash,
//     evidence hash, [Fingerprint] = provider, model and prompt template
//     hash). Any change is a miss. The cache stores verdicts only, with no
//     timestamps and no "touch": recomputing a hash never makes a judgement
//     fresher; only a new judgement does. Undecided results are never cached.
//   - Canaries: every batch with fresh work is mixed with known-bad pairs
//     ([MakeCanaries]) shaped like the real items and shuffled in; a judge
//     that clears more of them than the threshold is not trusted for the
//     batch.
//   - Escalation: light → heavy → human ([Judge.Batch], [Escalation]); an
//     escalation to [Human] carries the reason the engine shows in its
//     consent request.
//   - Fail-closed scope and config: [ItemsFromAnswer] derives the pairs from
//     the answer itself; [Config.Validate] names the first missing or invalid
//     key, and there is no option that skips judging.
//
// The package is pure logic: models reach it through [Model] (the engine
// adapts its providers) and storage through [Cache] (the engine keeps one in
// bbolt; the tests keep one in memory).
package judge
