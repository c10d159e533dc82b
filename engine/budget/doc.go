// Package budget holds the budgets a dispatch must fit (docs/budgets.md;
// docs/design.md, "Loop control"): max_agent_runs and token_budget,
// checked before every run is dispatched and before a council is seated,
// what a run reserves of its quest's token_budget until it ends, the
// reason a refused dispatch gives, and which budget a quest has used up;
// and the wall_clock budget's sessions, the clock on which a quest's time
// under a running daemon is counted.
//
// It sits below package engine, which checks these budgets inside its
// transactions and answers a refusal (a wait, an abort, a quest ended); it
// speaks the domain and never imports the engine.
package budget
