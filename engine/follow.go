package engine

import (
	"context"
	"errors"

	"github.com/questbox/questbox/engine/store"
)

// Batch is one delivery of Subscription.Follow.
type Batch struct {
	// Events are the events after the last one delivered, oldest first
	// (empty when Skipped).
	Events []Event
	// Skipped says that events after the last one delivered were pruned
	// before they were read (a burst larger than the retention): the
	// subscription went on after the newest event, Last. A follower that
	// keeps state from the events reads that state again instead.
	Skipped bool
	// Last is the seq the subscription stands at now: the last event of
	// Events, or the newest event when Skipped.
	Last uint64
}

// Follow is Next for a follower that must never stop: it blocks until
// events after the last delivered one exist, or ctx ends, and when those
// events were pruned it starts again after the newest event and says so
// (Batch.Skipped) instead of failing. It reads with ReadEvents, the one
// copy of "start again at the newest when pruned" that every reader of
// the stream (the box, the API's event watch and its reads) uses. Other
// errors (the store failed) are returned; calling Follow again retries
// from the same seq.
func (s *Subscription) Follow(ctx context.Context) (Batch, error) {
	for {
		b, err := s.e.ReadEvents(s.next, subscriptionPage)
		if err != nil {
			return Batch{}, err
		}
		if b.Skipped || len(b.Events) > 0 {
			s.next = b.Last
			return b, nil
		}
		select {
		case <-ctx.Done():
			return Batch{}, ctx.Err()
		case <-s.wake:
		}
	}
}

// ReadEvents returns, without waiting, up to limit events after since
// (limit <= 0: a page of Events' default) as a Batch: when events after
// since were pruned it returns a Skipped batch whose Last is the newest
// event, instead of ErrEventsPruned. Other errors are the store failing.
func (e *Engine) ReadEvents(since uint64, limit int) (Batch, error) {
	evs, err := e.Events(since, limit)
	switch {
	case errors.Is(err, ErrEventsPruned):
		return Batch{Skipped: true, Last: e.LastSeq()}, nil
	case err != nil:
		return Batch{}, err
	}
	b := Batch{Events: evs, Last: since}
	if len(evs) > 0 {
		b.Last = evs[len(evs)-1].Seq
	}
	return b, nil
}

// Last is the seq of the last event delivered (or the since it started
// from, or the newest event after a skip).
func (s *Subscription) Last() uint64 { return s.next }

// Await is Follow for a follower that needs to know only that events came,
// not which (the LEDs read the state afresh on each): it blocks until events
// after the last delivered one are committed, or ctx ends, and then stands at
// the newest without reading them. Reading every event of a busy tick only to
// drop it was ~3 MB a tick. An error is the store failing; calling Await
// again retries.
func (s *Subscription) Await(ctx context.Context) error {
	for {
		var last uint64
		err := s.e.store.view(func(tx *store.Tx) error {
			last = tx.Events().Sequence()
			return nil
		})
		if err != nil {
			return err
		}
		if last > s.next {
			s.next = last
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.wake:
		}
	}
}
