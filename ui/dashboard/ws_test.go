package dashboard

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"golang.org/x/crypto/bcrypt"

	"github.com/questbox/questbox/internal/config"
	"github.com/questbox/questbox/ui/api"
)

// TestWebsocket: a snapshot first, then every event once and in order; a
// page that comes back with since gets exactly what it missed.
func TestWebsocket(t *testing.T) {
	f := start(t, setup{})
	f.quest(nil, "alpha", "beta")
	b := f.browser()
	b.login(testPassword)
	c, _, err := b.dial(0, f.origin)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	snap := read(t, c)
	if snap.Type != "snapshot" || len(snap.Quests) != 1 || snap.Quests[0].ID != "q1" || snap.Quests[0].Counts["pending"] != 2 ||
		snap.Seq > f.eng.LastSeq() || snap.Consents == nil || snap.Device != nil {
		t.Fatalf("snapshot: %+v", snap)
	}
	if n := len(snap.Events); n > 0 && snap.Events[n-1].Seq != snap.Seq {
		t.Errorf("a new page's log ends at %d, the snapshot at %d", snap.Events[n-1].Seq, snap.Seq)
	}
	// The events the hub had not sent yet when the page came follow it.
	seen := snap.Seq
	for seen < f.eng.LastSeq() {
		fr := until(t, c, "the events after the snapshot", func(fr frame) bool { return fr.Type == "events" })
		if fr.Events[0].Seq != seen+1 {
			t.Fatalf("after seq %d came %+v", seen, fr.Events)
		}
		seen = fr.Events[len(fr.Events)-1].Seq
	}

	// An event appears without asking.
	if _, err := f.eng.AbortNode("n2", "from the test"); err != nil {
		t.Fatal(err)
	}
	ev := until(t, c, "n2 aborted", func(fr frame) bool {
		return fr.Type == "events" && len(fr.Events) > 0 && fr.Events[0].Node == "n2"
	})
	if e := ev.Events[0]; e.Kind != "node" || e.To != "aborted" || e.Seq != seen+1 {
		t.Errorf("event %+v, want n2 → aborted with seq %d", e, seen+1)
	}
	last := ev.Events[len(ev.Events)-1].Seq
	c.Close()

	// Away: two changes. Back with since: exactly those.
	f.quest(nil, "gamma")
	missed := f.eng.LastSeq()
	c2, _, err := b.dial(last, f.origin)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	snap = read(t, c2)
	if snap.Type != "snapshot" || len(snap.Quests) != 2 || snap.Seq > missed {
		t.Fatalf("snapshot after a reconnect: %+v", snap)
	}
	// What it missed: in the snapshot, and (if the hub had not sent them
	// yet when the page came back) in the frames that follow.
	got := snap.Events
	for len(got) == 0 || got[len(got)-1].Seq < missed {
		got = append(got, until(t, c2, "the missed events", func(fr frame) bool { return fr.Type == "events" }).Events...)
	}
	for i, ev := range got {
		if ev.Seq != last+1+uint64(i) {
			t.Fatalf("events after a reconnect: %+v, want %d..%d once each", got, last+1, missed)
		}
	}
}

// TestWebsocketOrigin: a page of another site cannot open it, nor can
// anyone who may not read.
func TestWebsocketOrigin(t *testing.T) {
	f := start(t, setup{cfg: config.Dashboard{Origins: []string{"https://questbox.example.org"}}})
	b := f.browser()
	b.login(testPassword)
	for _, origin := range []string{"http://evil.example", "null", "http://127.0.0.1.evil.example"} {
		_, resp, err := b.dial(0, origin)
		if !errors.Is(err, websocket.ErrBadHandshake) || resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("Origin %s: %v %v, want 403", origin, err, resp)
		}
	}
	for _, origin := range []string{f.origin, "https://questbox.example.org", ""} {
		c, _, err := b.dial(0, origin)
		if err != nil {
			t.Errorf("Origin %q: %v", origin, err)
			continue
		}
		c.Close()
	}
	if _, resp, err := f.browser().dial(0, f.origin); err == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without a session: %v %v, want 401", err, resp)
	}
}

// TestWebsocketLimits: max_clients, and the daemon stopping says so.
func TestWebsocketLimits(t *testing.T) {
	f := start(t, setup{cfg: config.Dashboard{Read: config.ReadPublic, MaxClients: 2}})
	b := f.browser()
	var conns []*websocket.Conn
	for range 2 {
		c, _, err := b.dial(0, f.origin)
		if err != nil {
			t.Fatal(err)
		}
		read(t, c)
		conns = append(conns, c)
	}
	if _, resp, err := b.dial(0, f.origin); err == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("third client: %v %v, want 503", err, resp)
	}
	f.stop()
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(time.Minute))
		_, _, err := c.ReadMessage()
		if !websocket.IsCloseError(err, websocket.CloseGoingAway) {
			t.Errorf("after the daemon stopped: %v, want close 1001", err)
		}
	}
}

// TestSlowClient: a client whose queue is full is disconnected at once,
// and the broadcast that found it full did not wait for it.
func TestSlowClient(t *testing.T) {
	f := start(t, setup{tweak: func(o *Options) { o.SendQueue = 2 }})
	slow := &client{send: make(chan *websocket.PreparedMessage, 2), done: make(chan struct{})}
	fast := &client{send: make(chan *websocket.PreparedMessage, 100), done: make(chan struct{})}
	h := f.srv.hub
	for _, c := range []*client{slow, fast} {
		if !h.admit() {
			t.Fatal("not admitted")
		}
		h.join(c)
	}
	for i := range 3 {
		h.broadcast([]byte(`{"type":"events","events":[]}`), uint64(100+i))
	}
	select {
	case <-slow.done:
	default:
		t.Fatal("the slow client was not disconnected")
	}
	if slow.reason.code != websocket.CloseTryAgainLater {
		t.Errorf("close code %d, want %d", slow.reason.code, websocket.CloseTryAgainLater)
	}
	if len(fast.send) != 3 || h.count() != 1 {
		t.Errorf("fast client got %d frames; %d clients left", len(fast.send), h.count())
	}
}

// TestLEDMirror: with the sim backend the snapshot carries the box, and
// a change of the LEDs is pushed.
func TestLEDMirror(t *testing.T) {
	f := start(t, setup{sim: true, cfg: config.Dashboard{Read: config.ReadPublic}, tweak: func(o *Options) { o.DevicePoll = 20 * time.Millisecond }})
	c, _, err := f.browser().dial(0, f.origin)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	snap := read(t, c)
	if snap.Device == nil || snap.Device.Backend != "sim" || !snap.Device.Button.Simulated {
		t.Fatalf("snapshot device: %+v", snap.Device)
	}
	f.quest([]string{"scout"}, "alpha")
	f.submit("q1", "n1", answer("promising", "alpha reads all twenty sample invoices."))
	fr := until(t, c, "amber blinking", func(fr frame) bool {
		return fr.Type == "device" && fr.Device.Amber.Pattern == "blink 2Hz"
	})
	if len(fr.Device.Consents) != 1 || fr.Device.Consents[0].Node != "n1" {
		t.Errorf("device consents: %+v", fr.Device.Consents)
	}
}

// TestWebsocketEndsWithTheRightToRead: a socket lives no longer than the
// session or password it was opened with. A logout ends every socket of
// that session at once (another tab of the same browser too) and no
// other; a new password, an expired session or Basic auth with the old
// password end theirs at the next ping.
func TestWebsocketEndsWithTheRightToRead(t *testing.T) {
	t.Run("logout", func(t *testing.T) {
		// Pings an hour apart: only the logout itself can end the sockets.
		f := start(t, setup{tweak: func(o *Options) { o.PingInterval = time.Hour }})
		f.quest(nil, "alpha")
		a, other := f.browser(), f.browser()
		a.login(testPassword)
		other.login(testPassword)
		tab1, tab2, kept := openTab(t, f, a), openTab(t, f, a), openTab(t, f, other)
		if r := a.change("/logout", nil); r.status != http.StatusOK {
			t.Fatalf("logout: %d %s", r.status, r.body)
		}
		tab1.loggedOut(t, "the tab that logged out")
		tab2.loggedOut(t, "another tab of the session that logged out")
		if _, err := f.eng.AbortNode("n1", "from the test"); err != nil {
			t.Fatal(err)
		}
		kept.event(t, "n1", "the other session's socket")
	})
	t.Run("password and expiry", func(t *testing.T) {
		f := start(t, setup{
			cfg: config.Dashboard{SessionTTL: config.Duration{Duration: time.Hour}},
			// Short enough for the test (the right to read is checked at
			// each ping), long enough that a client is not dropped as
			// silent (two pings) while a bcrypt under the race detector
			// shares two loaded cores with the rest of `make test`: 250 ms
			// failed there once.
			tweak: func(o *Options) { o.PingInterval = time.Second },
		})
		f.quest(nil, "alpha")
		b := f.browser()
		b.login(testPassword)
		kept := openTab(t, f, b)
		basic := openSock(t, f, websocket.Dialer{}, http.Header{"Authorization": {"Basic " + base64.StdEncoding.EncodeToString([]byte("owner:"+testPassword))}})
		// Pings pass while the right to read holds.
		if _, err := f.eng.AbortNode("n1", "from the test"); err != nil {
			t.Fatal(err)
		}
		kept.event(t, "n1", "a session's socket")
		basic.event(t, "n1", "a Basic-auth socket")
		if err := writeCredentials(f.pwfile, "a-brand-new-password", bcrypt.MinCost); err != nil {
			t.Fatal(err)
		}
		kept.loggedOut(t, "a session's socket after a new password")
		basic.loggedOut(t, "a Basic-auth socket after a new password")

		late := f.browser()
		if r := late.login("a-brand-new-password"); r.status != http.StatusOK {
			t.Fatalf("login with the new password: %d %s", r.status, r.body)
		}
		s := openTab(t, f, late)
		f.clock.add(time.Hour)
		s.loggedOut(t, "a socket whose session expired")
	})
}

// sock is a websocket read from its opening on (a gorilla client answers
// pings only while it reads, and the server drops a silent one).
type sock struct {
	frames chan frame // after the snapshot
	closed chan error // how it ended
}

func openSock(t *testing.T, f *fixture, d websocket.Dialer, h http.Header) sock {
	t.Helper()
	h.Set("Origin", f.origin)
	c, _, err := d.Dial(strings.Replace(f.url, "http://", "ws://", 1)+"/ws", h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	read(t, c) // the snapshot
	s := sock{frames: make(chan frame, 100), closed: make(chan error, 1)}
	go func() {
		c.SetReadDeadline(time.Now().Add(time.Minute))
		for {
			var fr frame
			if err := c.ReadJSON(&fr); err != nil {
				s.closed <- err
				return
			}
			select {
			case s.frames <- fr:
			default:
			}
		}
	}()
	return s
}

func openTab(t *testing.T, f *fixture, b *browser) sock {
	t.Helper()
	return openSock(t, f, websocket.Dialer{Jar: b.hc.Jar}, http.Header{})
}

// event waits for an event of node; the socket must stay open.
func (s sock) event(t *testing.T, node, what string) {
	t.Helper()
	for {
		select {
		case fr := <-s.frames:
			if fr.Type == "events" && len(fr.Events) > 0 && fr.Events[len(fr.Events)-1].Node == node {
				return
			}
		case err := <-s.closed:
			t.Fatalf("%s closed before %s's event: %v", what, node, err)
		}
	}
}

func (s sock) loggedOut(t *testing.T, what string) {
	t.Helper()
	if err := <-s.closed; !websocket.IsCloseError(err, closeLoggedOut) {
		t.Errorf("%s: %v, want close %d", what, err, closeLoggedOut)
	}
}

// With no page open the hub builds no frame for the events it reads, and
// a page that opens later starts after them; a page open gets them.
func TestHubFramesEventsOnlyForAPageOpen(t *testing.T) {
	f := start(t, setup{})
	h, err := newHub(f.srv) // not running: the test calls it
	if err != nil {
		t.Fatal(err)
	}
	last := h.seq + 2
	h.send([]api.Event{{Seq: last - 1, Kind: "node"}, {Seq: last, Kind: "node"}})
	if h.frames != 0 {
		t.Errorf("%d frames built with no page open", h.frames)
	}
	c := &client{send: make(chan *websocket.PreparedMessage, 1), done: make(chan struct{})}
	if !h.admit() {
		t.Fatal("a page was not admitted")
	}
	if seq, ok := h.join(c); !ok || seq != last {
		t.Errorf("a page opened after events %d..%d with no page open starts after %d (%v), want %d", last-1, last, seq, ok, last)
	}
	h.send([]api.Event{{Seq: last + 1, Kind: "node"}})
	if len(c.send) != 1 || h.frames != 1 || h.seq != last+1 {
		t.Errorf("the page open was queued %d frames (hub: %d frames, seq %d), want 1 frame to seq %d", len(c.send), h.frames, h.seq, last+1)
	}
}

// With no page open the hub gathers nothing: the events it has go on at
// once and the ones committed meanwhile are left for the watch's next
// read; with a page open it gathers them into one frame.
func TestHubGathersOnlyForAPageOpen(t *testing.T) {
	f := start(t, setup{tweak: func(o *Options) { o.Coalesce = time.Hour }})
	h, err := newHub(f.srv) // not running: the test calls it
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // gather reads what is committed, then its window is closed
	for _, open := range []bool{false, true} {
		if open {
			c := &client{send: make(chan *websocket.PreparedMessage, 1), done: make(chan struct{})}
			if !h.admit() {
				t.Fatal("a page was not admitted")
			}
			if _, ok := h.join(c); !ok {
				t.Fatal("a page did not join")
			}
		}
		w, err := f.srv.opt.Events.Watch(context.Background(), api.FromNewest)
		if err != nil {
			t.Fatal(err)
		}
		f.quest(nil, "a hypothesis") // events committed after the watch began
		first := []api.Event{{Seq: w.Last(), Kind: "node"}}
		evs, skip := h.gather(ctx, w, first, time.Now())
		w.Close()
		if skip != nil {
			t.Fatalf("page open %v: a skip", open)
		}
		if got, want := len(evs) > 1, open; got != want {
			t.Errorf("page open %v: gathered %d events, want more than the first: %v", open, len(evs), want)
		}
	}
}
