package dashboard

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/questbox/questbox/ui/api"
)

// client is one websocket. Its writer goroutine is the only one writing to
// conn; the handler's goroutine reads (pongs and the close).
type client struct {
	conn *websocket.Conn
	send chan *websocket.PreparedMessage
	// req is the upgrade request: its cookie or password is asked again
	// at every ping, so a socket ends with the right to read it came with
	// (a logout elsewhere, a new password, an expired session).
	req     *http.Request
	session []byte // the session id it was opened with, or nil

	once   sync.Once
	done   chan struct{} // closed by kick
	reason closeReason   // set once, before done closes
}

// closeLoggedOut ends a socket whose reader may no longer read (an
// application code: the page asks /session and shows the login).
const closeLoggedOut = 4001

type closeReason struct {
	code int
	text string
}

// queue hands pm to the writer without waiting; false (and the client is
// kicked) when it is SendQueue frames behind.
func (c *client) queue(pm *websocket.PreparedMessage) bool {
	select {
	case <-c.done:
		return false
	default:
	}
	select {
	case c.send <- pm:
		return true
	default:
		c.kick(websocket.CloseTryAgainLater, "too slow: reconnect and resync")
		return false
	}
}

// kick ends the client; the writer sends the close frame.
func (c *client) kick(code int, text string) {
	c.once.Do(func() {
		c.reason = closeReason{code, text}
		close(c.done)
	})
}

// websocket streams the events to a page, from ?since=SEQ, for readers.
func (s *Server) websocket(w http.ResponseWriter, r *http.Request) {
	if !s.canRead(r) {
		s.unauthorized(w, r)
		return
	}
	if !s.sameOrigin(r) || r.Header.Get("Origin") == "null" {
		api.WriteError(w, api.CodeForbidden, "websocket from another site's page")
		return
	}
	var since uint64
	if v := r.URL.Query().Get("since"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			api.WriteError(w, api.CodeInvalid, "?since="+strconv.Quote(v)+" is not a whole number")
			return
		}
		since = n
	}
	if !s.hub.admit() {
		api.WriteError(w, api.CodeUnavailable, "too many dashboard clients (dashboard.max_clients)")
		return
	}
	up := websocket.Upgrader{ReadBufferSize: 512, WriteBufferSize: 4096, WriteBufferPool: &s.writeBuffers,
		HandshakeTimeout: readHeaderTimeout,
		// Checked above, with the configured origins; gorilla's own check
		// would refuse those.
		CheckOrigin: func(*http.Request) bool { return true }}
	conn, err := up.Upgrade(w, r, nil)
	if err != nil {
		s.hub.unadmit()
		return // Upgrade has answered
	}
	c := &client{conn: conn, send: make(chan *websocket.PreparedMessage, s.opt.SendQueue), done: make(chan struct{}),
		// Without the handler's cancel: the request's context may end
		// with the hijack, and the checks must outlive it.
		req: r.Clone(context.WithoutCancel(r.Context()))}
	if sess := s.auth.session(r); sess != nil {
		c.session = sess.id
	}
	seq, ok := s.hub.join(c)
	if !ok {
		conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, "the daemon is stopping"), time.Now().Add(time.Second))
		conn.Close()
		return
	}
	defer s.hub.leave(c)
	snap, err := s.hub.snapshot(seq, since)
	if err != nil {
		s.opt.Log.Warn("dashboard: no snapshot for a websocket", "err", err)
		c.kick(websocket.CloseInternalServerErr, "the box cannot answer now; retrying")
	}
	var wg sync.WaitGroup
	wg.Go(func() { s.write(c, snap) })
	s.read(c)
	c.kick(websocket.CloseNormalClosure, "")
	wg.Wait()
	conn.Close()
}

// read reads until the peer goes away or stays silent for two pings;
// pongs extend the deadline. Pages send nothing else that matters.
func (s *Server) read(c *client) {
	wait := 2 * s.opt.PingInterval
	c.conn.SetReadLimit(512)
	c.conn.SetReadDeadline(time.Now().Add(wait))
	c.conn.SetPongHandler(func(string) error { return c.conn.SetReadDeadline(time.Now().Add(wait)) })
	for {
		if _, _, err := c.conn.NextReader(); err != nil {
			return
		}
		select {
		case <-c.done:
			return
		default:
		}
	}
}

// write sends the snapshot, then queued frames and pings, until the client
// is kicked or a write fails; then it says why in a close frame.
func (s *Server) write(c *client, snap []byte) {
	ping := time.NewTicker(s.opt.PingInterval)
	defer ping.Stop()
	fail := func(err error) {
		c.kick(websocket.CloseAbnormalClosure, "")
		c.conn.Close() // unblocks the reader
	}
	if snap != nil {
		c.conn.SetWriteDeadline(time.Now().Add(s.opt.WriteTimeout))
		if err := c.conn.WriteMessage(websocket.TextMessage, snap); err != nil {
			fail(err)
			return
		}
	}
	for {
		select {
		case <-c.done:
			if c.reason.code != websocket.CloseAbnormalClosure {
				c.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(c.reason.code, c.reason.text),
					time.Now().Add(time.Second))
			}
			c.conn.Close()
			return
		case pm := <-c.send:
			c.conn.SetWriteDeadline(time.Now().Add(s.opt.WriteTimeout))
			if err := c.conn.WritePreparedMessage(pm); err != nil {
				fail(err)
				return
			}
		case <-ping.C:
			if !s.canRead(c.req) {
				c.kick(closeLoggedOut, "logged out: log in again")
				continue
			}
			if err := c.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(s.opt.WriteTimeout)); err != nil {
				fail(err)
				return
			}
		}
	}
}
