package outbox

import (
	"fmt"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
)

// DefaultPage is how many events a read returns when it names no limit.
const DefaultPage = 500

// Read returns from tx up to limit events with Seq > since, oldest first
// (limit <= 0: DefaultPage). It returns domain.ErrEventsPruned if events
// after since were already pruned, or dropped by the outbox bound.
func Read(tx *store.Tx, since uint64, limit int) ([]domain.Event, error) {
	if limit <= 0 {
		limit = DefaultPage
	}
	var out []domain.Event
	// At most the events up to the newest, the bucket's sequence: a
	// slice grown by appends allocated twice what a page holds, four
	// readers (printer, hub, MQTT, a tick's answer) a page each.
	if last := tx.Events().Sequence(); last > since {
		out = make([]domain.Event, 0, min(uint64(limit), last-since))
	}
	var gap error
	err := records.EventsAfter(tx.Events().Cursor(), since, func(ev *domain.Event) bool {
		if len(out) == 0 && since > 0 && ev.Seq > since+1 {
			gap = fmt.Errorf("events %d..%d: %w", since+1, ev.Seq-1, domain.ErrEventsPruned)
			return false
		}
		out = append(out, *ev)
		return len(out) < limit
	})
	if gap != nil {
		return nil, gap
	}
	if trim := TrimmedThrough(tx); since > 0 && since < trim {
		return nil, fmt.Errorf("events after %d: the outbox bound dropped some up to %d: %w", since, trim, domain.ErrEventsPruned)
	}
	return out, err
}

// ReadPast is Read for a durable consumer: it does not fail over events
// the outbox bound dropped, but skips them, and the caller sees the gap
// in Seq.
func ReadPast(tx *store.Tx, since uint64, limit int) ([]domain.Event, error) {
	if limit <= 0 {
		limit = DefaultPage
	}
	var out []domain.Event
	err := records.EventsAfter(tx.Events().Cursor(), since, func(ev *domain.Event) bool {
		out = append(out, *ev)
		return len(out) < limit
	})
	return out, err
}
