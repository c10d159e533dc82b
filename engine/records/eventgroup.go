package records

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/store"
)

// The outbox's records (schema 8): a write transaction's events are one
// group record, keyed by its first event's seq, whose binary form is the
// store's (store.AppendGroupEvent, engine/store/eventgroup.go); stores
// written before schema 8 hold one JSON record per event (AppendEvent),
// keyed by its seq. The writes a group commit runs in one transaction
// share one group (sharedGroup, engine/event.go): a commit of 250 results writes
// one record. Every event keeps its own Seq: seqs are still taken one by
// one from the bucket's sequence, so nothing outside the engine sees the
// difference.
//
// Readers start at the record that holds the first seq they want: the one
// Seek finds, or the group before it (EventsAfter). Retention prunes a
// group whole, once its newest event is past the window (pruneRetention),
// so the outbox keeps at least EventRetention events and at most one
// group's worth more (GroupEvents).

// GroupEvents bounds the events of one group record: a transaction with
// more writes several, each keyed by its first seq. It is the granularity
// of retention (see above) and bounds what a reader decodes to find one
// event.
const GroupEvents = 1024

// eventString is string field i of ev, in the order of their bits in the
// field mask; after them come facts, counters and the device (bitFacts...).
// A switch, not a table of functions: an event passed through a function
// value escapes to the heap, one allocation per event of a tick.
// TestEveryEventFieldIsInAGroup fails until a new Event field is written
// here too.
func eventString(ev *domain.Event, i int) *string {
	switch i {
	case 0:
		return &ev.Kind
	case 1:
		return &ev.Quest
	case 2:
		return &ev.Node
	case 3:
		return &ev.Role
	case 4:
		return &ev.Team
	case 5:
		return &ev.Stage
	case 6:
		return &ev.Phase
	case 7:
		return &ev.From
	case 8:
		return &ev.To
	case 9:
		return &ev.Outcome
	case 10:
		return &ev.Feedback
	case 11:
		return &ev.RootCause
	case 12:
		return &ev.ClaimHash
	case 13:
		return &ev.Reason
	case 14:
		return &ev.Detail
	}
	panic(fmt.Sprintf("BUG: event string field %d", i))
}

// eventStringsOf is ev's string fields in eventString's order, read in
// one go: an encoder (AppendGroupEvent) reads each twice, and a tick
// encodes a thousand events.
func eventStringsOf(ev *domain.Event) [eventStrings]string {
	return [eventStrings]string{ev.Kind, ev.Quest, ev.Node, ev.Role, ev.Team, ev.Stage, ev.Phase,
		ev.From, ev.To, ev.Outcome, ev.Feedback, ev.RootCause, ev.ClaimHash, ev.Reason, ev.Detail}
}

// eventStrings is how many string fields eventString has: every one a
// group record keeps.
const eventStrings = store.GroupStrings

// ErrGroup is returned when a group record does not decode.
var ErrGroup = store.ErrGroup

// IsGroup reports whether v, a record of the events bucket, is a group.
func IsGroup(v []byte) bool { return store.IsGroup(v) }

// AppendGroupHead starts a group whose first event is seq, at time at.
func AppendGroupHead(b []byte, seq uint64, at time.Time) []byte {
	return store.AppendGroupHead(b, seq, at)
}

// AppendGroupEvent appends ev, whose seq follows prev (the group's first
// seq for its first event), to a group; Seq and Time are the group's.
// blob is room for the JSON of ev's facts and device event, which it
// returns for the next event (nil: none yet).
func AppendGroupEvent(b []byte, prev uint64, ev *domain.Event, blob []byte) ([]byte, []byte, error) {
	ge := store.GroupEvent{Seq: ev.Seq, Strings: eventStringsOf(ev)}
	if len(ev.Facts) > 0 || ev.Device != nil {
		// Facts are rare (verdicts) and nested: their JSON, as the
		// single-event record has it; so is the device event's.
		blob = blob[:0]
		if len(ev.Facts) > 0 {
			var err error
			if blob, err = AppendFacts(blob, ev.Facts); err != nil {
				return nil, blob, err
			}
		}
		facts := len(blob)
		if d := ev.Device; d != nil {
			blob = PutDevice(blob, d)
			ge.Device = blob[facts:]
		}
		if len(ev.Facts) > 0 {
			ge.Facts = blob[:facts:facts]
		}
	}
	if c := ev.Counters; c != nil {
		ge.HasCounters = true
		ge.Counters = [3]int64{int64(c.AgentRuns), int64(c.Tokens), int64(c.WallUsed)}
	}
	b, err := store.AppendGroupEvent(b, prev, &ge)
	return b, blob, err
}

// PutDevice appends the JSON of d, as the single-event record (AppendEvent)
// and a group record have it.
func PutDevice(b []byte, d *domain.DeviceEvent) []byte {
	b = append(b, `{"what":`...)
	b = store.AppendJSONString(b, d.What)
	b = store.AppendOptString(b, `,"press":`, d.Press)
	b = store.AppendOptString(b, `,"result":`, d.Result)
	b = store.AppendOptString(b, `,"target":`, d.Target)
	b = store.AppendOptString(b, `,"broker":`, d.Broker)
	b = store.AppendOptString(b, `,"error":`, d.Error)
	if d.Fault {
		b = append(b, `,"fault":true`...)
	}
	return append(b, '}')
}

// AppendGroupEnd seals a group with its checksum.
func AppendGroupEnd(b []byte) []byte { return store.SealGroup(b) }

// EncodeGroup is the group record of evs (at least one, in seq order, all
// of the same time).
func EncodeGroup(evs []domain.Event) ([]byte, error) {
	b := AppendGroupHead(nil, evs[0].Seq, evs[0].Time)
	prev := evs[0].Seq
	var blob []byte
	for i := range evs {
		var err error
		if b, blob, err = AppendGroupEvent(b, prev, &evs[i], blob); err != nil {
			return nil, err
		}
		prev = evs[i].Seq
	}
	return AppendGroupEnd(b), nil
}

// GroupKey is the first seq a group record says it holds, if its checksum
// holds: the key it belongs under.
func GroupKey(v []byte) (uint64, bool) { return store.GroupKey(v) }

// eventOf sets ev to the event f of a group of time at.
func eventOf(f *store.GroupFields, at time.Time, ev *domain.Event) error {
	*ev = domain.Event{Seq: f.Seq, Time: at}
	for i := range eventStrings {
		if s := f.Strings[i]; s != nil {
			*eventString(ev, i) = string(s)
		}
	}
	bad := func(what string, err error) error {
		return fmt.Errorf("%w: event %d: %s: %w", ErrGroup, f.Seq, what, err)
	}
	if f.Facts != nil {
		if err := json.Unmarshal(f.Facts, &ev.Facts); err != nil {
			return bad("facts", err)
		}
	}
	if f.HasCounters {
		ev.Counters = &domain.Counters{AgentRuns: int(f.Counters[0]), Tokens: int(f.Counters[1]), WallUsed: time.Duration(f.Counters[2])}
	}
	if f.Device != nil {
		ev.Device = new(domain.DeviceEvent)
		if err := json.Unmarshal(f.Device, ev.Device); err != nil {
			return bad("device", err)
		}
	}
	return nil
}

// EachEvent calls fn with the events of the record k, v of the events
// bucket, in either form, oldest first, skipping those with Seq <= since
// without decoding them; fn returns false to stop. It returns false when
// fn did.
func EachEvent(k, v []byte, since uint64, fn func(ev *domain.Event) bool) (bool, error) {
	if !IsGroup(v) {
		if store.SeqOf(k) <= since {
			return true, nil
		}
		var ev domain.Event
		if err := json.Unmarshal(v, &ev); err != nil {
			return false, fmt.Errorf("decode event %d: %w", store.SeqOf(k), err)
		}
		return fn(&ev), nil
	}
	r, err := store.OpenGroup(k, v)
	if err != nil {
		return false, fmt.Errorf("decode events from %d: %w", store.SeqOf(k), err)
	}
	var f store.GroupFields
	var ev domain.Event
	for {
		more, err := r.Next(&f, since)
		switch {
		case err != nil:
			return false, fmt.Errorf("decode events from %d: %w", store.SeqOf(k), err)
		case !more:
			return true, nil
		case f.Seq <= since:
			continue
		}
		if err := eventOf(&f, r.Time(), &ev); err != nil {
			return false, fmt.Errorf("decode events from %d: %w", store.SeqOf(k), err)
		}
		if !fn(&ev) {
			return false, nil
		}
	}
}

// CheckGroup decodes every event of a group record: nil when it is sound.
func CheckGroup(k, v []byte) error {
	_, err := EachEvent(k, v, 0, func(*domain.Event) bool { return true })
	return err
}

// LastSeqIn is the seq of the newest event of the record k, v.
func LastSeqIn(k, v []byte) (uint64, error) { return store.LastSeqIn(k, v) }

// HoldsPast reports whether the events record k, v holds an event whose
// seq is past limit (store.HoldsPast).
func HoldsPast(k, v []byte, limit uint64) (bool, error) { return store.HoldsPast(k, v, limit) }

// EventsAfter calls fn with every event with Seq > since, oldest first,
// until fn returns false. The seqs it gives only rise: were two records
// ever to overlap (a salvage that found an older copy of a group the
// outbox bound had rewritten under a later key), no event is given twice.
func EventsAfter(c *store.Cursor, since uint64, fn func(ev *domain.Event) bool) error {
	last := since
	give := func(ev *domain.Event) bool {
		last = ev.Seq
		return fn(ev)
	}
	for k, v := SeekEvents(c, since); k != nil; k, v = c.Next() {
		more, err := EachEvent(k, v, last, give)
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// SeekEvents moves c to the record that holds since+1, or the first one
// after it (store.SeekEvents).
func SeekEvents(c *store.Cursor, since uint64) (k, v []byte) { return store.SeekEvents(c, since) }
