// Package engine is the tick and its transaction: the tick that
// dispatches nodes to agent providers, the runs and their ends, the one
// write transaction every change goes through (with the ratchet's check
// of each move), the answer to a dispatch its budgets refuse, the
// follow-up passes, and the Engine the API calls.
//
// The rules it applies are packages of their own below it, each declaring
// the interface it asks of a transaction, which the engine's transaction
// implements: engine/council (councils and phase gates), engine/team
// (Teams), engine/humangate (the consent queue, egress consent),
// engine/verdict (a judged answer applied to its node), engine/prompt
// (what an agent is sent), engine/ledger (the verdict ledger and its
// signatures), engine/outbox (the event outbox), engine/findings (what
// a quest found), engine/budget (the budgets a dispatch must fit, the
// wall-clock sessions) and engine/followup (which quests have follow-up
// work, and when a pass is due). The tick's memory of what committed
// (decoded quests, first pending nodes, its slabs) is engine/tickmem,
// which the engine feeds each commit. They speak engine/domain's vocabulary, whose names this
// package repeats for its callers (domain.go). The storage — the bbolt
// layout, the file checks, compaction and salvage's page reading — is
// package engine/store; the store handle the engine writes through, with
// its group commit and the ledger head's signature at each commit, is
// package engine/commit; the domain's records, their codecs and what
// salvage derives again from them are package engine/records, between
// the two (the engine adds its rules to a salvage's rebuild: salvage.go).
// What is read of the store for people has packages below it too:
// engine/verify (the store's whole check), engine/runs (the runs and
// their logs), engine/export (an export's state, batch and journal) and
// engine/activity (what runs and what waits, counted once for every face);
// the store's judge cache is engine/judgecache.
// See docs/design.md, "Layers and dependencies".
//
// # The ratchet
//
// A node moves only along the legal moves of the ratchet (docs/design.md,
// "The ratchet"; see [Status.CanMove]). Every status change goes through one
// function inside a store transaction, so an illegal move is a typed error
// from the engine itself: [ErrLocked] for a terminal node, [ErrIllegalMove]
// for anything else the table does not allow. No API path changes a terminal
// node.
//
// # Transactions and fsyncs
//
// One tick is one bbolt write transaction: loop control, deferred nodes coming
// back, every dispatch and the events they emit commit together, so a tick
// costs one commit whatever the number of quests. A verdict — the gate result,
// the node's new status, the children it spawns, its ledger record and its
// events — is one transaction too, and the verdicts, submits, consents and
// device events that arrive together share one commit (group commit, see
// engine/commit): a tick whose agents all answer at once costs its own commit
// and a few for the results, not one per result. A dispatch writes its
// running entry (its run, keyed by quest and node) and its event, and
// neither the node's record nor the quest's (readers lay the running
// entries over them, see dispatch.go): a tick dirties no page of the
// nodes or quests buckets however many the store holds, and picks each
// quest's node from the engine's memory of its first pending node
// (engine/tickmem) instead of searching the nodes bucket. Every write is committed
// before its caller returns. bbolt is never opened with NoSync. A tick
// that changes nothing commits nothing: it reads quests without rewriting
// them, and wall-clock time passes without a write (see below).
//
// # Budgets and fairness
//
// The wall_clock budget counts the time a quest is active while
// [Engine.Serve] runs: downtime and stopped time do not count. The stored
// count is brought up to date with every real change of the quest and at
// least once an hour, so a crash loses at most an hour of it, in the owner's
// favour; reports and budget checks use the current count
// (engine/budget/wallclock.go has the details). Under max_parallel the tick
// serves the quest that waited longest since its last dispatch first, so
// every active quest with work is dispatched within ceil(quests /
// max_parallel) ticks when runs end within a tick.
//
// # The store
//
// [OpenStore] checks a file before bbolt maps it, reading it page by page
// with ordinary reads (internal/boltfile): an empty or cut-short file, a
// garbage page, a damaged freelist is [ErrCorrupt] naming the damage and the
// salvage command, never a panic or a fault. Only a path with no file is a
// new store. One damaged meta page is the mark of a commit cut short: the
// store opens from the other one and rewrites it. A read-only open takes
// the shared lock and writes nothing; with [Options.ReadOnly] the engine
// writes nothing either (no recovery of interrupted runs, [ErrReadOnly] from
// every write). A write that cannot be committed is [ErrStoreFailed].
//
// [Engine.Verify] checks every page and the whole verdict ledger on one
// consistent snapshot while writers go on, and lists every problem.
// [Salvage] rebuilds a damaged store from every record it can still read.
//
// # Events
//
// Every state change appends an [Event] to the outbox bucket in the same
// transaction, with a per-device monotonically increasing Seq. Consumers
// (the device's LEDs, and through ui/api's event watch MQTT, the dashboard
// and the daemon's printer) read the outbox through a [Subscription]:
// the engine only sends a non-blocking wake-up after commit, and a subscriber
// reads the events from the store at its own pace. A slow subscriber therefore
// never blocks the engine and never loses an event; it only sees them later.
// Events are pruned once they are older than the retention window and every
// durable cursor (see [Engine.AckEvents]) has passed them; a subscriber that
// falls behind the pruned range gets [ErrEventsPruned] from Next, and
// [Subscription.Follow] — the one follower every consumer uses — turns that
// into a batch that says it skipped to the newest event, so the consumer
// re-reads its state.
//
// # Concurrency
//
// An Engine is safe for concurrent use. Tick may run while earlier runs are
// still in flight; their completions commit in groups of their own. Under
// Serve, the work a commit enables (a Team's next stage, a council's next
// member and its merge, a retry after a FAIL) is dispatched as the commit
// lands, by follow-up passes on Serve's goroutine (chain.go; docs/design.md,
// "When work is dispatched"). Reconfigure swaps the options a running
// engine takes again (reload.go).
package engine
