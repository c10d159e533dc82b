package outbox

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
)

// kOutboxTrimmed is the meta key of the newest seq the outbox bound dropped.
var kOutboxTrimmed = []byte("outbox_trimmed")

// trimBatch bounds the events one tick looks at for the outbox bound, so a
// tick stays cheap however large the backlog is.
const trimBatch = 5000

// Droppable reports whether the outbox bound may drop undelivered events
// of kind: node, quest and device events may go (the quest state and the
// device summary carry their latest word); verdict and consent events never
// do.
func Droppable(kind string) bool {
	return kind == domain.KindNode || kind == domain.KindQuest || kind == domain.KindDevice
}

// TrimmedThrough is the newest seq the outbox bound dropped (0: none).
func TrimmedThrough(tx *store.Tx) uint64 {
	return store.SeqOf(tx.Meta().Get(kOutboxTrimmed))
}

// Trimmed is what one application of the outbox bound did: the records
// it changed (0: it wrote nothing), the undelivered events it dropped, the
// newest seq it looked at and the lowest durable cursor.
type Trimmed struct {
	Changed, Dropped int
	Upto, Low        uint64
}

// Trim applies the outbox bound (see doc.go) in tx: it drops droppable
// events that no cursor passed and that are more than bound behind the
// newest, oldest first, at most trimBatch looked at per call.
func Trim(tx *store.Tx, bound int) (Trimmed, error) {
	if bound <= 0 {
		return Trimmed{}, nil
	}
	b := tx.Events()
	last := b.Sequence()
	if last <= uint64(bound) {
		return Trimmed{}, nil
	}
	limit := last - uint64(bound) // events up to here are past the bound
	low, any := lowestCursor(tx)
	if !any || low >= limit {
		return Trimmed{}, nil // no consumer is behind the bound (retention prunes the rest)
	}
	done := TrimmedThrough(tx)
	from := max(low, done)
	if from >= limit {
		return Trimmed{}, nil
	}
	w := outboxTrim{from: from, limit: limit, upto: from}
	if err := w.walk(b.Cursor()); err != nil {
		return Trimmed{}, err
	}
	if err := w.rewrite(b); err != nil {
		return Trimmed{}, err
	}
	changed := len(w.rewrites)
	if w.upto > done {
		if err := tx.Meta().Put(kOutboxTrimmed, store.U64(w.upto)); err != nil {
			return Trimmed{}, err
		}
		changed++
	}
	return Trimmed{Changed: changed, Dropped: w.dropped, Upto: w.upto, Low: low}, nil
}

// lowestCursor is the lowest seq a durable consumer acknowledged; any is
// false when there is no consumer.
func lowestCursor(tx *store.Tx) (low uint64, any bool) {
	low = math.MaxUint64
	cc := tx.Cursors().Cursor()
	for k, v := cc.First(); k != nil; k, v = cc.Next() {
		low, any = min(low, store.SeqOf(v)), true
	}
	return low, any
}

// outboxTrim is one application of the outbox bound (Trim): the
// events past from and up to limit that it drops. Records are rewritten
// once the walk is over (a bbolt cursor does not survive writes to its
// bucket): a single record or a group whose events all go is deleted, a
// group that keeps some is written again without the others, keyed by its
// first kept seq.
type outboxTrim struct {
	from, limit uint64
	rewrites    []outboxRewrite
	dropped     int
	// upto is the newest seq looked at; looked how many were.
	upto   uint64
	looked int
}

// outboxRewrite is a record of the outbox to write again without the
// events the bound drops: keep nil deletes it.
type outboxRewrite struct {
	key  []byte
	keep []domain.Event
}

// walk looks at the records from the one holding w.from+1 on, up to
// w.limit and trimBatch events.
func (w *outboxTrim) walk(c *store.Cursor) error {
	for k, v := records.SeekEvents(c, w.from); k != nil && store.SeqOf(k) <= w.limit && w.looked < trimBatch; k, v = c.Next() {
		var err error
		if records.IsGroup(v) {
			err = w.group(k, v)
		} else {
			err = w.single(k, v)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// single looks at a record of one event (before schema 8).
func (w *outboxTrim) single(k, v []byte) error {
	w.looked++
	w.upto = store.SeqOf(k)
	var head struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(v, &head); err != nil {
		return fmt.Errorf("decode event %d: %w", store.SeqOf(k), err)
	}
	if Droppable(head.Kind) {
		w.rewrites = append(w.rewrites, outboxRewrite{key: append([]byte(nil), k...)})
		w.dropped++
	}
	return nil
}

// group looks at the events of a group record.
func (w *outboxTrim) group(k, v []byte) error {
	var all, keep []domain.Event
	_, err := records.EachEvent(k, v, 0, func(ev *domain.Event) bool {
		all = append(all, *ev)
		if ev.Seq > w.from && ev.Seq <= w.limit && w.looked < trimBatch {
			w.looked++
			w.upto = ev.Seq
			if Droppable(ev.Kind) {
				return true
			}
		}
		keep = append(keep, *ev)
		return true
	})
	if err != nil {
		return err
	}
	if len(keep) < len(all) {
		w.rewrites = append(w.rewrites, outboxRewrite{key: append([]byte(nil), k...), keep: keep})
		w.dropped += len(all) - len(keep)
	}
	return nil
}

// rewrite writes the records the walk changed into the outbox b.
func (w *outboxTrim) rewrite(b *store.Bucket) error {
	for _, r := range w.rewrites {
		if err := b.Delete(r.key); err != nil {
			return err
		}
		if len(r.keep) == 0 {
			continue
		}
		g, err := records.EncodeGroup(r.keep)
		if err != nil {
			return fmt.Errorf("BUG: encode events from %d: %w", r.keep[0].Seq, err)
		}
		if err := b.Put(store.U64(r.keep[0].Seq), g); err != nil {
			return err
		}
	}
	return nil
}

// PruneBatch bounds how many events one PruneRetention drops, so that a
// tick after a long outage stays cheap: the oldest go first, the rest at
// the next ticks.
const PruneBatch = 5000

// PruneRetention drops events older than the retention window that every
// durable cursor has passed, the oldest first, at most PruneBatch. A
// group record (engine/records/eventgroup.go) goes whole, once its newest event is old
// enough: the outbox keeps at least retention events, and up to a group's
// worth more.
//
// It deletes walking backwards from the newest record it drops: after a
// bbolt cursor deletes its element, the element before it is still where
// Prev finds it (a delete shifts only what follows), whereas a forward
// walk would skip one, so a forward prune had to search the tree from its
// root again for every event (First after each Delete).
func PruneRetention(tx *store.Tx, retention int) (int, error) {
	b := tx.Events()
	last := b.Sequence()
	if retention <= 0 || last <= uint64(retention) {
		return 0, nil
	}
	limit := last - uint64(retention)
	cc := tx.Cursors().Cursor()
	for k, v := cc.First(); k != nil; k, v = cc.Next() {
		if s := store.SeqOf(v); s < limit {
			limit = s
		}
	}
	c := b.Cursor()
	k, _ := c.First()
	if k == nil || store.SeqOf(k) > limit {
		return 0, nil
	}
	oldest := store.SeqOf(k)
	// Seqs are unique: at most PruneBatch events lie in this range (fewer
	// where the outbox bound dropped some already).
	limit = min(limit, oldest+PruneBatch-1)
	var v []byte
	if k, v = c.Seek(store.U64(limit + 1)); k == nil {
		k, v = c.Last()
	} else {
		k, v = c.Prev()
	}
	// The record found starts at or before limit; a group may end past
	// it, and then it stays, with every record after it.
	if k != nil {
		past, err := records.HoldsPast(k, v, limit)
		if err != nil {
			return 0, fmt.Errorf("prune events: %w", err)
		}
		if past {
			k, _ = c.Prev()
		}
	}
	n := 0
	for ; k != nil && store.SeqOf(k) >= oldest; k, _ = c.Prev() {
		if store.SeqOf(k) > limit {
			return n, fmt.Errorf("BUG: pruning events: cursor at %d, past %d", store.SeqOf(k), limit)
		}
		if err := c.Delete(); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
