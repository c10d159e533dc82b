// Package consent is the L3 authority (docs/design.md, "Authority"): a
// human's consent, bound to the claim hash that was shown to them.
//
// # Contract
//
// A [Consent] can only be made by [New] from a [Source], and Source is a
// sealed interface: its unexported method means that only this package's
// [Button] (the physical consent button), [Dashboard] (an authenticated
// dashboard session, and only when the owner has enabled dashboard consent)
// and [MQTT] (a consent command from the owner's MQTT broker, only when the
// owner has enabled MQTT consent) implement it. A Consent's fields are unexported, and its zero value
// consents to nothing.
//
// A Consent names exactly one claim hash ([gates.ClaimHash] of the answer as
// shown). [Consent.For] rejects any other hash with [ErrWrongClaim]: if one
// byte of the claim changed after the human looked, the consent is void.
// [Consent.Approve] additionally refuses to approve anything but a
// consistent REVIEW verdict: a human can resolve doubt, not overrule a FAIL,
// and a PASS needs no consent.
//
// The L2 judge (package gates/judge) does not import this package (a test in
// this package pins it), so no judge code path can construct consent.
//
// This package does no I/O; the device and ui packages decide when a press
// or a session counts, and call [New].
package consent

import (
	"errors"
	"fmt"
	"strings"

	"github.com/questbox/questbox/gates"
)

// Sentinel errors; test with errors.Is.
var (
	// ErrWrongClaim is returned when a consent is used for a claim hash other
	// than the one it was given for.
	ErrWrongClaim = errors.New("consent was given for a different claim")
	// ErrNoConsent is returned for the zero Consent, or a nil or disabled source.
	ErrNoConsent = errors.New("no consent")
	// ErrBadClaimHash is returned when a claim hash is not a lower-case hex SHA-256.
	ErrBadClaimHash = errors.New("malformed claim hash")
	// ErrNotReviewable is returned by Approve for a verdict that is not a
	// consistent REVIEW.
	ErrNotReviewable = errors.New("only a REVIEW verdict can be approved")
)

// Source is where a consent came from. It is sealed: only [Button],
// [Dashboard] and [MQTT] implement it.
type Source interface {
	// Via names the source for the ledger, e.g. "button" or "dashboard:alice".
	Via() string
	// check reports why this source cannot consent, or nil.
	check() error
}

// Button is the physical consent button. The device layer creates one when
// it has classified a press as consent for the claim on display.
type Button struct{}

// Via returns "button".
func (Button) Via() string  { return "button" }
func (Button) check() error { return nil }

// Dashboard is an authenticated dashboard session. Make one with
// [NewDashboard]; the zero value cannot consent.
type Dashboard struct{ user string }

// NewDashboard returns the dashboard source for an authenticated user. It
// fails with [ErrNoConsent] unless the owner enabled dashboard consent and
// the user is non-blank: consent is physical unless the owner says otherwise.
func NewDashboard(enabled bool, user string) (Dashboard, error) {
	if !enabled {
		return Dashboard{}, fmt.Errorf("consent: dashboard consent is not enabled by the owner: %w", ErrNoConsent)
	}
	if strings.TrimSpace(user) == "" {
		return Dashboard{}, fmt.Errorf("consent: dashboard consent needs an authenticated user: %w", ErrNoConsent)
	}
	return Dashboard{user: user}, nil
}

// Via returns "dashboard:USER".
func (d Dashboard) Via() string { return "dashboard:" + d.user }

func (d Dashboard) check() error {
	if d.user == "" {
		return fmt.Errorf("consent: a dashboard source not made by NewDashboard: %w", ErrNoConsent)
	}
	return nil
}

// MQTT is a consent command received over MQTT (the owner's broker, which
// authenticated the sender). Make one with [NewMQTT]; the zero value cannot
// consent.
type MQTT struct{ enabled bool }

// NewMQTT returns the MQTT source. It fails with [ErrNoConsent] unless the
// owner enabled MQTT consent: consent is physical unless the owner says
// otherwise.
func NewMQTT(enabled bool) (MQTT, error) {
	if !enabled {
		return MQTT{}, fmt.Errorf("consent: MQTT consent is not enabled by the owner: %w", ErrNoConsent)
	}
	return MQTT{enabled: true}, nil
}

// Via returns "mqtt".
func (MQTT) Via() string { return "mqtt" }

func (m MQTT) check() error {
	if !m.enabled {
		return fmt.Errorf("consent: an MQTT source not made by NewMQTT: %w", ErrNoConsent)
	}
	return nil
}

// Consent is a human's consent to one claim. The zero value consents to
// nothing.
type Consent struct {
	claim string
	via   string
}

// New records consent from src for the claim whose [gates.ClaimHash] is
// claimHash (the hash of what was shown).
func New(src Source, claimHash string) (Consent, error) {
	if src == nil {
		return Consent{}, fmt.Errorf("consent: nil source: %w", ErrNoConsent)
	}
	if err := src.check(); err != nil {
		return Consent{}, err
	}
	if !validHash(claimHash) {
		return Consent{}, fmt.Errorf("consent: claim hash %q: %w", claimHash, ErrBadClaimHash)
	}
	return Consent{claim: claimHash, via: src.Via()}, nil
}

// ClaimHash returns the hash this consent was given for ("" for the zero value).
func (c Consent) ClaimHash() string { return c.claim }

// Via returns the source's name ("" for the zero value).
func (c Consent) Via() string { return c.via }

// For returns nil if c is consent for claimHash, [ErrNoConsent] for the zero
// value and [ErrWrongClaim] for any other hash.
func (c Consent) For(claimHash string) error {
	if c.claim == "" {
		return fmt.Errorf("consent: %w", ErrNoConsent)
	}
	if c.claim != claimHash {
		return fmt.Errorf("consent: given for claim %.12s…, asked for %.12s…: %w", c.claim, claimHash, ErrWrongClaim)
	}
	return nil
}

// Approve returns nil if c may lock v for claimHash: c is consent for that
// hash ([Consent.For]) and v is a consistent REVIEW. A FAIL is never
// approvable and a PASS needs no approval ([ErrNotReviewable]).
func (c Consent) Approve(v gates.Verdict, claimHash string) error {
	if err := c.For(claimHash); err != nil {
		return err
	}
	if err := v.Check(); err != nil {
		return fmt.Errorf("consent: %w: %w", ErrNotReviewable, err)
	}
	if v.Outcome != gates.OutcomeReview {
		return fmt.Errorf("consent: verdict is %s: %w", v.Outcome, ErrNotReviewable)
	}
	return nil
}

func validHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
