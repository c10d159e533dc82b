package api

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/questbox/questbox/engine"
)

// The event watch: what tailscale's IPN bus is to its clients, this is to
// the faces (MQTT, the dashboard, /metrics, the daemon's printer, the
// CLI). A watcher starts after a seq and receives every later event in
// order, once, in batches; when events it had not read yet were pruned (a
// burst larger than the retention), it is told so with a batch that skips
// to the newest event, and re-reads the state it keeps instead of the
// events it missed. It is built on the engine's one follower
// (engine.Subscription.Follow), so every face skips the same way.
//
// In process it is Server.Watch; over HTTP it is
//
//	GET /api/events/watch?since=SEQ
//
// a stream of EventBatch objects, one JSON document per line, each sent
// as soon as its events are committed, until the client goes away.

// FromNewest as the since of a watch starts it after the newest event:
// only what happens from now on.
const FromNewest = ^uint64(0)

// EventBatch is one delivery of the event watch.
type EventBatch struct {
	// Events follow the last seq the watcher saw, oldest first; empty when
	// Skipped.
	Events []Event `json:"events"`
	// Skipped says that events after the last seq the watcher saw were
	// pruned before it read them: it continues after Next, the newest
	// event, and should read the state afresh.
	Skipped bool `json:"skipped,omitempty"`
	// Next is the seq to resume from: the last event of Events, or the
	// newest event when Skipped.
	Next uint64 `json:"next"`
}

// Watch is one watcher of the events. Next must be called from one
// goroutine at a time; Close may be called from any, once Next returned.
type Watch struct {
	sub *engine.Subscription
}

// Watch starts watching the events after since (FromNewest: from now on).
// It fails only when the API has no engine (the store is not open).
func (s *Server) Watch(ctx context.Context, since uint64) (*Watch, error) {
	eng, err := s.opt.Engines.Engine(ctx, false)
	if err != nil {
		return nil, err
	}
	if since == FromNewest {
		since = eng.LastSeq()
	}
	return &Watch{sub: eng.Subscribe(since)}, nil
}

// Next blocks until events after the last delivered one are committed (or
// were pruned: a batch with Skipped), or ctx ends. An error is the store
// failing to give the events; calling Next again retries.
func (w *Watch) Next(ctx context.Context) (EventBatch, error) {
	b, err := w.sub.Follow(ctx)
	if err != nil {
		return EventBatch{}, err
	}
	return batchView(b), nil
}

// batchView is the view of a batch of the engine's follower.
func batchView(b engine.Batch) EventBatch {
	return EventBatch{Events: EventViews(b.Events), Skipped: b.Skipped, Next: b.Last}
}

// Last is the seq the watch stands at: the last event delivered, or where
// it started.
func (w *Watch) Last() uint64 { return w.sub.Last() }

// Close ends the watch.
func (w *Watch) Close() { w.sub.Close() }

// ReadEvents returns, without waiting, up to limit events after since
// (limit ≤ 0: a page of the server's size) as a batch of the watch: when
// events after since were pruned it returns a Skipped batch whose Next is
// the newest event (engine.Engine.ReadEvents, the rule Watch follows too).
func (s *Server) ReadEvents(ctx context.Context, since uint64, limit int) (EventBatch, error) {
	eng, err := s.opt.Engines.Engine(ctx, false)
	if err != nil {
		return EventBatch{}, err
	}
	if limit <= 0 {
		limit = maxEventsPage
	}
	b, err := eng.ReadEvents(since, limit)
	if err != nil {
		return EventBatch{}, err
	}
	return batchView(b), nil
}

// LastSeq is the seq of the newest event.
func (s *Server) LastSeq(ctx context.Context) (uint64, error) {
	eng, err := s.opt.Engines.Engine(ctx, false)
	if err != nil {
		return 0, err
	}
	return eng.LastSeq(), nil
}

// watchEvents is GET /api/events/watch?since=SEQ: the watch as a stream of
// EventBatch lines, flushed one by one, until the client goes away. A
// store that fails ends the stream (the client resumes from its last
// Next).
func (s *Server) watchEvents(w http.ResponseWriter, r *http.Request, eng *engine.Engine) error {
	since, err := queryUint(r, "since", 0)
	if err != nil {
		return err
	}
	if since > eng.LastSeq() && since != FromNewest {
		return errorf(CodeInvalid, "?since=%d is after the newest event (%d)", since, eng.LastSeq())
	}
	if since == FromNewest {
		since = eng.LastSeq()
	}
	wa := &Watch{sub: eng.Subscribe(since)}
	defer wa.Close()
	// The stream outlives the door's write timeout (meant for one answer):
	// each batch has WriteTimeout to go out instead, so a client that
	// stops reading is still dropped.
	rc := http.NewResponseController(w)
	send := func() error {
		_ = rc.SetWriteDeadline(time.Now().Add(WriteTimeout)) // a door without deadlines has none to move
		if err := rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return err
		}
		return nil
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Cache-Control", "no-store")
	_ = rc.SetWriteDeadline(time.Now().Add(WriteTimeout))
	w.WriteHeader(http.StatusOK)
	if err := send(); err != nil { // the client knows the watch began
		return nil
	}
	enc := json.NewEncoder(w)
	for {
		b, err := wa.Next(r.Context())
		if err != nil {
			if r.Context().Err() == nil {
				s.opt.Log.Warn("API event watch ended: reading events failed", "err", err)
			}
			return nil // the status line went out: the stream just ends
		}
		_ = rc.SetWriteDeadline(time.Now().Add(WriteTimeout))
		if err := enc.Encode(b); err != nil {
			return nil // the client went away
		}
		if err := send(); err != nil {
			return nil
		}
	}
}

// Watch is GET /api/events/watch?since=SEQ: it calls fn with each batch of
// the watch until ctx ends, fn returns an error (which Watch returns), or
// the server ends the stream (an *Error with CodeUnavailable; resume from
// the last batch's Next).
func (c *Client) Watch(ctx context.Context, since uint64, fn func(EventBatch) error) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://questbox/api/events/watch?since="+strconv.FormatUint(since, 10), nil)
	if err != nil {
		return errorf(CodeInvalid, "%v", err)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return errorf(CodeUnavailable, "%s: %v: daemon unavailable", c.where, unwrapURL(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var eb errorBody
		if err := json.NewDecoder(resp.Body).Decode(&eb); err != nil || eb.Error == nil {
			return errorf(CodeUnavailable, "%s answered %s without an error message", c.where, resp.Status)
		}
		return eb.Error
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var b EventBatch
		if err := json.Unmarshal(sc.Bytes(), &b); err != nil {
			return errorf(CodeUnavailable, "%s: read the event watch: %v", c.where, err)
		}
		if err := fn(b); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return errorf(CodeUnavailable, "%s: the event watch ended: daemon unavailable", c.where)
}
