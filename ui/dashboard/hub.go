package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/questbox/questbox/ui/api"
)

// The websocket protocol (GET /ws?since=SEQ), server to page only. Every
// frame is a JSON object whose "type" says what it carries; the rest are
// the API's own view types, never a second shape of them:
//
//	{"type": "snapshot", "seq": S, "quests": [api.Quest], "consents": [api.Consent],
//	 "device": api.Device or null, "events": [api.Event]}
//	{"type": "events", "events": [api.Event]}   // every event after S, in order, once
//	{"type": "device", "device": api.Device}    // the LEDs or the box changed
//
// The snapshot is the first frame. Its quests, consents and device are what
// GET /api/quests, /api/consents and /api/device answer at that moment; its
// events are those after the page's since (the ones it missed while it was
// away: at most maxCatchUp), or, for a new page, the last few for its log.
// Events after S follow in "events" frames. A page that reconnects asks with
// since = the last seq it saw, so it never misses nor repeats one.
//
// # Slow clients
//
// The engine is never slowed by the websocket: one event watch of the API
// reads the outbox for all clients (the engine wakes it without blocking), and each
// frame is encoded once and queued to every client without waiting. A
// client whose queue is full (SendQueue frames behind) or whose socket does
// not take a frame within WriteTimeout is disconnected, not skipped: its
// page reconnects and resyncs from its last seq, so it loses nothing,
// whereas dropping frames would leave it showing a state that never was.

const (
	// maxCatchUp bounds the events a snapshot carries for a returning page;
	// a page away for longer relies on the snapshot's state.
	maxCatchUp = 500
	// logEvents is how many recent events a new page gets for its log.
	logEvents = 50
	// maxFrameEvents ends a coalescing window early.
	maxFrameEvents = 1000
)

// hub fans the engine's events out to the websocket clients.
type hub struct {
	s       *Server
	devWake chan struct{} // capacity 1: "look at the box now", coalesced

	mu      sync.Mutex // guards the fields below
	clients map[*client]struct{}
	joining int    // clients admitted but not yet in clients
	seq     uint64 // the last seq sent to the clients
	device  []byte // the last device JSON sent
	closed  bool
	frames  int // event frames broadcast (for the benchmark)
}

func newHub(s *Server) (*hub, error) {
	seq, err := s.opt.Events.LastSeq(context.Background())
	if err != nil {
		return nil, err
	}
	return &hub{s: s, devWake: make(chan struct{}, 1), clients: map[*client]struct{}{}, seq: seq}, nil
}

func (h *hub) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.clients)
}

// run follows the engine's events until ctx ends, then closes every client.
func (h *hub) run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { h.pollDevice(ctx) })
	h.follow(ctx)
	wg.Wait()
	h.mu.Lock()
	h.closed = true
	for c := range h.clients {
		c.kick(websocket.CloseGoingAway, "the daemon is stopping; reconnecting")
	}
	h.clients = map[*client]struct{}{}
	h.mu.Unlock()
}

// follow sends the API's event watch to the clients until ctx ends.
func (h *hub) follow(ctx context.Context) {
	h.mu.Lock()
	w, err := h.s.opt.Events.Watch(ctx, h.seq)
	h.mu.Unlock()
	if err != nil {
		h.s.opt.Log.Error("dashboard: cannot watch the events; the pages get no live updates", "err", err)
		return
	}
	defer w.Close()
	var sent time.Time // when the last frame went out
	for {
		b, err := w.Next(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			h.s.opt.Log.Error("dashboard: reading events failed; retrying", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			continue
		}
		if b.Skipped {
			h.resync(b.Next)
			continue
		}
		evs, skip := h.gather(ctx, w, b.Events, sent)
		if skip != nil {
			h.send(evs)
			h.resync(skip.Next)
			continue
		}
		h.send(evs)
		sent = time.Now()
	}
}

// resync sends every page back to a snapshot: events went before the hub
// read them (a burst larger than the retention), and the watch goes on
// after next, the newest.
func (h *hub) resync(next uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq = next
	for c := range h.clients {
		c.kick(websocket.CloseTryAgainLater, "events were pruned; resyncing")
		delete(h.clients, c)
	}
}

// send broadcasts a frame of events (none: nothing) and counts them.
func (h *hub) send(evs []api.Event) {
	if len(evs) == 0 {
		return
	}
	if m := h.s.opt.Metrics; m != nil {
		m.ObserveEvents(evs)
	}
	if h.unwatched(evs[len(evs)-1].Seq) {
		return
	}
	frame, err := json.Marshal(struct {
		Type   string      `json:"type"`
		Events []api.Event `json:"events"`
	}{"events", evs})
	if err != nil {
		h.s.opt.Log.Error("BUG: dashboard: cannot encode events", "err", err)
		return
	}
	h.broadcast(frame, evs[len(evs)-1].Seq)
	select { // the LEDs follow the events: look at the box now
	case h.devWake <- struct{}{}:
	default:
	}
}

// gather holds back events that come within Coalesce of the last frame
// sent, adding every event committed until then: a burst (a tick's
// dispatches and the results that follow) becomes a few frames per client
// instead of one per commit, while a change after a quiet spell goes out
// at once. Each frame costs a write per client, so this is what keeps a
// hundred clients from costing the box more than a few writes per tick.
// A skip within the window ends it, and is returned: the events gathered
// before it go out, then every page resyncs.
//
// With no page open there is no frame to save: the events go on at once
// (to /metrics only, send), not gathered (their views appended a busy tick's
// worth, ~2 MB, for nothing).
func (h *hub) gather(ctx context.Context, w *api.Watch, evs []api.Event, last time.Time) ([]api.Event, *api.EventBatch) {
	wait := time.Until(last.Add(h.s.opt.Coalesce))
	if h.s.opt.Coalesce <= 0 || wait <= 0 || h.count() == 0 {
		return evs, nil
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for len(evs) < maxFrameEvents {
		more, err := w.Next(wctx)
		if err != nil {
			return evs, nil // the window closed (or the store failed: the next Next says so)
		}
		if more.Skipped {
			return evs, &more
		}
		evs = append(evs, more.Events...)
	}
	return evs, nil
}

// unwatched moves the hub's seq to seq and returns true when no client
// watches: then a frame would go to no one, and a page that joins later
// has these events in its snapshot. A headless box has no page open
// nearly always, and the frames' JSON was ~4 % of what a busy cycle allocates.
func (h *hub) unwatched(seq uint64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.clients) > 0 {
		return false
	}
	h.seq = seq
	return true
}

// broadcast queues frame to every client without waiting; seq, if not 0,
// is the last event it carries.
func (h *hub) broadcast(frame []byte, seq uint64) {
	pm, err := websocket.NewPreparedMessage(websocket.TextMessage, frame)
	if err != nil {
		h.s.opt.Log.Error("BUG: dashboard: cannot prepare a frame", "err", err)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if seq != 0 {
		h.seq = seq
		h.frames++
	}
	for c := range h.clients {
		if !c.queue(pm) {
			delete(h.clients, c)
		}
	}
}

// pollDevice sends the box's state when it changes, while anyone watches:
// the LEDs change with the events, but also with the network, the broker,
// the end of the boot chase and faults, which are not all events.
func (h *hub) pollDevice(ctx context.Context) {
	if h.s.opt.API.Box == nil {
		return
	}
	t := time.NewTicker(h.s.opt.DevicePoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-h.devWake:
		}
		if h.count() == 0 {
			continue
		}
		dev := h.s.apiGet("/api/device")
		h.mu.Lock()
		same := dev == nil || bytes.Equal(dev, h.device)
		if !same {
			h.device = dev
		}
		h.mu.Unlock()
		if same {
			continue
		}
		frame, err := json.Marshal(struct {
			Type   string          `json:"type"`
			Device json.RawMessage `json:"device"`
		}{"device", dev})
		if err == nil {
			h.broadcast(frame, 0)
		}
	}
}

// admit reserves a place for a new client; false when the hub is full or
// closed.
func (h *hub) admit() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || len(h.clients)+h.joining >= h.s.opt.Config.MaxClients {
		return false
	}
	h.joining++
	return true
}

// join adds c (admitted before) and returns the seq its snapshot must
// start after: every later event is queued to c.
func (h *hub) join(c *client) (seq uint64, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.joining--
	if h.closed {
		return 0, false
	}
	h.clients[c] = struct{}{}
	return h.seq, true
}

// unadmit gives back a place admit reserved for a client that never joined.
func (h *hub) unadmit() {
	h.mu.Lock()
	h.joining--
	h.mu.Unlock()
}

// logout ends every socket opened with the session id.
func (h *hub) logout(id []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.clients {
		if c.session != nil && bytes.Equal(c.session, id) {
			c.kick(closeLoggedOut, "logged out")
		}
	}
}

func (h *hub) leave(c *client) {
	h.mu.Lock()
	delete(h.clients, c)
	h.mu.Unlock()
}

// snapshot is the first frame for a client that joined at seq and last
// saw since (0: a new page).
func (h *hub) snapshot(seq, since uint64) ([]byte, error) {
	ev := h.s.opt.Events
	var b api.EventBatch
	var err error
	switch {
	case since > 0 && since < seq && seq-since <= maxCatchUp:
		b, err = ev.ReadEvents(context.Background(), since, int(seq-since))
	case since == 0 && seq > 0:
		b, err = ev.ReadEvents(context.Background(), max(logEvents, seq)-logEvents, logEvents)
	}
	if err != nil {
		return nil, err
	}
	kept := []api.Event{}
	for _, e := range b.Events { // none when they were pruned
		if e.Seq <= seq {
			kept = append(kept, e)
		}
	}
	quests, consents := h.s.apiGet("/api/quests"), h.s.apiGet("/api/consents")
	if quests == nil || consents == nil {
		return nil, errors.New("the API cannot answer now")
	}
	dev := h.s.apiGet("/api/device")
	return json.Marshal(struct {
		Type     string          `json:"type"`
		Seq      uint64          `json:"seq"`
		Quests   json.RawMessage `json:"quests"`
		Consents json.RawMessage `json:"consents"`
		Device   json.RawMessage `json:"device"`
		Events   []api.Event     `json:"events"`
	}{"snapshot", seq, quests, consents, orNull(dev), kept})
}

func orNull(b []byte) json.RawMessage {
	if b == nil {
		return json.RawMessage("null")
	}
	return b
}

// apiGet asks the dashboard's own API for path, as any client would, and
// returns the JSON body of a 200 answer (nil otherwise): the websocket's
// frames carry exactly what the API serves.
func (s *Server) apiGet(path string) []byte {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, path, nil)
	if err != nil {
		return nil
	}
	w := &recorder{header: http.Header{}}
	s.api.ServeHTTP(w, req)
	if w.status != http.StatusOK && w.status != 0 {
		return nil
	}
	return bytes.TrimSpace(w.body.Bytes())
}

// recorder is the ResponseWriter of apiGet.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}
func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}
