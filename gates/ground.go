package gates

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// RequestKind is what a ground request asks of the world.
type RequestKind uint8

const (
	// ReqFetchURL is an HTTP(S) GET of Target; answered by Status and Body.
	ReqFetchURL RequestKind = 1
	// ReqLookupMX looks up the MX hosts of the domain Target.
	ReqLookupMX RequestKind = 2
	// ReqDial opens (and closes) a TCP connection to Target ("host:port").
	ReqDial RequestKind = 3
	// ReqRun runs the program Argv with Stdin, killed after TimeoutMillis.
	// It needs no network, so it is not skipped while the box is offline.
	ReqRun RequestKind = 4
)

// String returns "fetch", "mx", "dial" or "run".
func (k RequestKind) String() string {
	switch k {
	case ReqFetchURL:
		return "fetch"
	case ReqLookupMX:
		return "mx"
	case ReqDial:
		return "dial"
	case ReqRun:
		return "run"
	}
	return "RequestKind(" + strconv.Itoa(int(k)) + ")"
}

// Network reports whether answering a request of this kind needs the network.
func (k RequestKind) Network() bool { return k != ReqRun }

// Request is one fact a ground rule needs from outside (docs/design.md,
// "Staged evaluation and ground"). Rules declare requests
// ([GroundRule.Needs]); ground answers them, each at most once per
// evaluation, before the rules run.
type Request struct {
	Kind          RequestKind
	Target        string   // URL, domain or host:port
	Argv          []string // ReqRun only
	Stdin         string   // ReqRun only
	TimeoutMillis int64    // ReqRun only; 0 means ground's default
}

// Key is the request's identity: two requests with the same key are the same
// request and are answered once. It is unambiguous (lengths are encoded).
func (r Request) Key() string {
	var b strings.Builder
	b.WriteString(r.Kind.String())
	b.WriteByte(' ')
	b.WriteString(strconv.Quote(r.Target))
	if r.Kind == ReqRun {
		for _, a := range r.Argv {
			b.WriteByte(' ')
			b.WriteString(strconv.Quote(a))
		}
		sum := sha256.Sum256([]byte(r.Stdin))
		b.WriteString(" stdin=")
		b.WriteString(hex.EncodeToString(sum[:8]))
		b.WriteString(" timeout=")
		b.WriteString(strconv.FormatInt(r.TimeoutMillis, 10))
	}
	return b.String()
}

// String is a short human description, e.g. `fetch "https://example.org/"`.
func (r Request) String() string {
	if r.Kind == ReqRun {
		return "run " + strconv.Quote(strings.Join(r.Argv, " "))
	}
	return r.Kind.String() + " " + strconv.Quote(r.Target)
}

// Observation is ground's answer to one request.
//
// Transport and Err are the two ways a request can go wrong, and they mean
// different things. Transport is set when the request could not be answered
// because of the box's own connectivity (connection refused, DNS timeout, no
// route, reset): nobody said no, so staged evaluation defers the node instead
// of failing it. Err is set when the world did answer, with something that is
// a fact about the target (an invalid URL, too many redirects, a bad TLS
// certificate, a blocked private address, a program that could not start):
// rules turn it into a fact. A 404 is neither: it is Status 404.
type Observation struct {
	Transport string `json:"transport,omitempty"`
	Err       string `json:"err,omitempty"`

	Status    int    `json:"status,omitempty"`    // ReqFetchURL: HTTP status of the final response
	Body      string `json:"body,omitempty"`      // ReqFetchURL: the body, at most ground's limit
	Truncated bool   `json:"truncated,omitempty"` // ReqFetchURL: the body was longer than the limit

	MX []string `json:"mx,omitempty"` // ReqLookupMX: MX hosts; empty when there are none

	Reachable bool `json:"reachable,omitempty"` // ReqDial

	ExitCode int    `json:"exit_code,omitempty"` // ReqRun; -1 if killed
	Stdout   string `json:"stdout,omitempty"`    // ReqRun, bounded
	TimedOut bool   `json:"timed_out,omitempty"` // ReqRun
}

// GroundFacts holds the observations of one evaluation, keyed by
// [Request.Key]. Ground fills it; rules only read it.
type GroundFacts map[string]Observation

// Get returns the observation for r.
func (g GroundFacts) Get(r Request) (Observation, bool) {
	o, ok := g[r.Key()]
	return o, ok
}

// GroundRule is implemented by ground-stage rules that need facts from
// outside. Needs must be pure and deterministic like Check, and must return
// every request Check will read for the same input. A ground rule without
// Needs needs nothing.
type GroundRule interface {
	Rule
	Needs(in Input) []Request
}

// missingGround is the fact a ground rule gives when the observation it
// needs is absent: evaluated without ground (fail closed).
func missingGround(rule string, r Request) Fact {
	return Fact{Rule: rule, Level: Fail, Where: "ground",
		Expected: "an observation for " + r.String(),
		Actual:   "none: the rule was evaluated without ground facts"}
}

// observe returns in.Ground's observation for r, or a fact explaining why
// there is no usable one. Rules call it before reading an observation.
func observe(rule string, in Input, r Request) (Observation, *Fact) {
	o, ok := in.Ground.Get(r)
	if !ok {
		f := missingGround(rule, r)
		return o, &f
	}
	if o.Transport != "" {
		// Unreachable through EvaluateStaged (it defers); fail closed otherwise.
		f := Fact{Rule: rule, Level: Fail, Where: "ground",
			Expected: "an answer for " + r.String(),
			Actual:   fmt.Sprintf("transport error: %s", o.Transport)}
		return o, &f
	}
	return o, nil
}
