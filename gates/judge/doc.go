// Package judge is the L2 authority of SPEC §4.3 and §4.6: AI judges that can
// raise doubt about a claim but never grant completion.
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
package judge
