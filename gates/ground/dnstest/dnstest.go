// Package dnstest is a minimal DNS server for tests of DNS failures: it
// answers one name's A record with 127.0.0.1 over UDP, or SERVFAIL for
// every query, and counts the queries it read.
package dnstest

import (
	"encoding/binary"
	"net"
	"strings"
	"sync/atomic"
)

// Server answers DNS queries over UDP. Set Name before Serve; the other
// methods are safe for concurrent use.
type Server struct {
	// Name is the one name it knows, fully qualified and lower case
	// ("site.test."); other names get NXDOMAIN.
	Name string

	servfail atomic.Bool
	queries  atomic.Int64
}

// SetServfail makes every query fail with SERVFAIL (true) or be answered
// (false, the default).
func (s *Server) SetServfail(on bool) { s.servfail.Store(on) }

// Queries is how many well-formed queries it read.
func (s *Server) Queries() int64 { return s.queries.Load() }

// Serve answers on pc until pc is closed.
func (s *Server) Serve(pc net.PacketConn) {
	buf := make([]byte, 1500)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			return
		}
		if resp := s.answer(buf[:n]); resp != nil {
			pc.WriteTo(resp, from)
		}
	}
}

// answer builds the reply to query q, or nil for a packet it cannot read.
func (s *Server) answer(q []byte) []byte {
	if len(q) < 12 || binary.BigEndian.Uint16(q[4:]) != 1 {
		return nil
	}
	// The question: labels, then type and class.
	i, name := 12, ""
	for i < len(q) && q[i] != 0 {
		l := int(q[i])
		if i+1+l > len(q) {
			return nil
		}
		name += strings.ToLower(string(q[i+1:i+1+l])) + "."
		i += 1 + l
	}
	if i+5 > len(q) {
		return nil
	}
	qtype := binary.BigEndian.Uint16(q[i+1:])
	s.queries.Add(1)
	resp := append([]byte(nil), q[:i+5]...)
	resp[2] = 0x80 | q[2]&0x01 // QR, keep RD
	resp[3] = 0x80             // RA, RCODE 0
	binary.BigEndian.PutUint16(resp[6:], 0)
	binary.BigEndian.PutUint16(resp[8:], 0)
	binary.BigEndian.PutUint16(resp[10:], 0)
	switch {
	case s.servfail.Load():
		resp[3] |= 2
	case name != s.Name:
		resp[3] |= 3 // NXDOMAIN
	case qtype == 1: // A
		binary.BigEndian.PutUint16(resp[6:], 1)
		resp = append(resp, 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 5, 0, 4, 127, 0, 0, 1)
	}
	return resp
}
