// Package outbox is the event outbox's rules, below the engine that writes
// it: reading events after a seq ([Read]), retention ([PruneRetention]),
// the bound for durable consumers ([Trim]), and the subscriptions that
// wake the stream's followers after each commit ([Hub], [Subscription]),
// with the one rule of "start again at the newest when pruned"
// ([ReadBatch]). See docs/design.md, "Events and the outbox".
//
// A durable consumer has a cursor in the store: the seq up to which it
// has delivered every event to its peer. Retention never prunes an event a
// cursor has not passed, so a consumer that acknowledges only after its peer
// did (the broker's PUBACK) loses nothing across outages and reboots.
//
// The bound. While a consumer's peer is away the outbox grows. With
// the engine's Options.OutboxMax set, once more than OutboxMax events are newer than
// the lowest cursor, the tick drops the oldest undelivered events of the
// kinds whose latest state is also published as state (node, quest,
// device: see Droppable) — never a verdict or a consent event, which stay
// until delivered whatever it costs. Only events older than the retention
// window are ever dropped (OutboxMax is at least EventRetention), so a
// dashboard replaying the retention window sees no hole; a reader asking
// for events before the newest dropped one gets domain.ErrEventsPruned, as if they
// had been pruned. A durable consumer reads past the holes with
// the engine's Outbox.Read: its peer sees a gap in seq.
package outbox
