package mqtt

import (
	"bufio"
	"crypto/tls"
	"errors"
	"net"
	"net/url"
	"os"
	"sync"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	netproxy "golang.org/x/net/proxy"
)

// The connection to the broker, batched.
//
// paho writes each packet with a write of its own and reads each packet
// a byte at a time (its fixed header) then whole: a busy tick's few
// thousand events cost four system calls or more each, on the box and in
// the broker, and a burst of them reached the broker at the pace of those
// calls. So the session's connection (openBatched, paho's
// CustomOpenConnectionFn) reads through a buffer, and gathers what paho
// writes while its previous write is on its way into one write: one call
// for a burst, and none held back when there is no burst (a write that
// finds the connection idle goes out at once). Dialing is paho's own for
// each scheme (tcp and mqtt through ALL_PROXY, ssl and its aliases, ws
// and wss, unix).

// batchedWriteTimeout bounds one gathered write: a broker that stops
// reading fails the connection (paho's own write timeout, whose deadlines
// the batched connection takes over).
const batchedWriteTimeout = writeTimeout

// closeFlush bounds how long Close waits for what paho wrote last (its
// DISCONNECT) to go out.
const closeFlush = time.Second

// openBatched is the session's paho.OpenConnectionFunc.
func openBatched(uri *url.URL, o paho.ClientOptions) (net.Conn, error) {
	c, err := dial(uri, o)
	if err != nil {
		return nil, err
	}
	return newBatchedConn(c), nil
}

// dial opens the network connection to the broker at uri as paho does.
func dial(uri *url.URL, o paho.ClientOptions) (net.Conn, error) {
	dialer := o.Dialer
	if dialer == nil {
		dialer = &net.Dialer{Timeout: connectTimeout}
	}
	switch uri.Scheme {
	case "ws", "wss":
		u := *uri // gorilla/websocket refuses a URL with user information
		u.User = nil
		var tlsc *tls.Config
		if uri.Scheme == "wss" {
			tlsc = o.TLSConfig
		}
		return paho.NewWebsocket(u.String(), tlsc, o.ConnectTimeout, o.HTTPHeaders, o.WebsocketOptions)
	case "mqtt", "tcp":
		return netproxy.FromEnvironmentUsing(dialer).Dial("tcp", uri.Host)
	case "unix":
		if uri.Host != "" {
			return dialer.Dial("unix", uri.Host)
		}
		return dialer.Dial("unix", uri.Path)
	case "ssl", "tls", "mqtts", "mqtt+ssl", "tcps":
		if os.Getenv("all_proxy") == "" {
			return tls.DialWithDialer(dialer, "tcp", uri.Host, o.TLSConfig)
		}
		c, err := netproxy.FromEnvironment().Dial("tcp", uri.Host)
		if err != nil {
			return nil, err
		}
		tc := tls.Client(c, o.TLSConfig)
		if err := tc.Handshake(); err != nil {
			c.Close()
			return nil, err
		}
		return tc, nil
	}
	return nil, errors.New("unknown protocol")
}

// batchedConn is a connection whose reads are buffered and whose writes
// are gathered (see the top of this file). A write returns once its bytes
// are queued; a failed write fails the connection, and every later Write
// returns the error (paho then sees the connection lost, as it does when
// the read side fails). It is safe for paho's concurrent reader, writer
// and Close.
type batchedConn struct {
	net.Conn
	r *bufio.Reader

	mu     sync.Mutex // guards out, spare, err, closed
	out    []byte     // queued, not yet handed to the connection
	spare  []byte     // the previous batch's array, for the next
	err    error
	closed bool
	wake   chan struct{} // capacity 1: "bytes queued", coalesced
	stop   chan struct{} // closed by Close: flush and end
	done   chan struct{} // closed when the flusher ended
}

func newBatchedConn(c net.Conn) *batchedConn {
	b := &batchedConn{Conn: c, r: bufio.NewReaderSize(c, 16<<10), wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go b.flusher()
	return b
}

// Read reads through the buffer.
func (b *batchedConn) Read(p []byte) (int, error) { return b.r.Read(p) }

// Write queues p for the next gathered write.
func (b *batchedConn) Write(p []byte) (int, error) {
	b.mu.Lock()
	switch {
	case b.err != nil:
		err := b.err
		b.mu.Unlock()
		return 0, err
	case b.closed:
		b.mu.Unlock()
		return 0, net.ErrClosed
	}
	b.out = append(b.out, p...)
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
	return len(p), nil
}

// SetWriteDeadline is the flusher's to set (batchedWriteTimeout): paho's
// deadline for a write that only queues would bound nothing.
func (b *batchedConn) SetWriteDeadline(time.Time) error { return nil }

// SetDeadline sets the read deadline only (see SetWriteDeadline).
func (b *batchedConn) SetDeadline(t time.Time) error { return b.Conn.SetReadDeadline(t) }

// flusher hands the queued bytes to the connection, one write for all
// that was queued since the last, until Close.
func (b *batchedConn) flusher() {
	defer close(b.done)
	for {
		select {
		case <-b.wake:
		case <-b.stop:
			b.flush()
			return
		}
		if !b.flush() {
			return
		}
	}
}

// flush writes what is queued, batch after batch, until nothing is; it
// reports false once the connection failed.
func (b *batchedConn) flush() bool {
	for {
		b.mu.Lock()
		if b.err != nil {
			b.mu.Unlock()
			return false
		}
		if len(b.out) == 0 {
			b.mu.Unlock()
			return true
		}
		batch := b.out
		b.out = b.spare[:0]
		b.mu.Unlock()
		_ = b.Conn.SetWriteDeadline(time.Now().Add(batchedWriteTimeout))
		_, err := b.Conn.Write(batch)
		b.mu.Lock()
		b.spare = batch[:0]
		if err != nil && b.err == nil {
			b.err = err
		}
		b.mu.Unlock()
		if err != nil {
			b.Conn.Close() // the reader sees it, and paho the connection lost
			return false
		}
	}
}

// Close sends what is queued (paho's DISCONNECT), waiting closeFlush at
// most, and closes the connection.
func (b *batchedConn) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return b.Conn.Close()
	}
	b.closed = true
	b.mu.Unlock()
	close(b.stop)
	t := time.NewTimer(closeFlush)
	defer t.Stop()
	select {
	case <-b.done:
	case <-t.C:
	}
	err := b.Conn.Close()
	<-b.done
	return err
}
