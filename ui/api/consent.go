package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/gates/consent"
)

// ConsentDecision is the request of POST /api/consents/{node}/approve and
// POST /api/consents/{node}/reject: the claim hash of the request as it was
// shown to the human. A consent for any other hash is void (409): the
// claim changed after they looked.
type ConsentDecision struct {
	ClaimHash string `json:"claim_hash"`
}

// ConsentSource makes the L3 consent source for a request that approves or
// rejects a consent (an authenticated dashboard session). It returns an
// error wrapping consent.ErrNoConsent when the request may not consent.
type ConsentSource func(r *http.Request) (consent.Source, error)

// DashboardConsent is the dashboard door's ConsentSource: L3 consent from
// the user that user(r) names (the request's authenticated session), only
// when the owner enabled dashboard consent.
func DashboardConsent(enabled bool, user func(*http.Request) string) ConsentSource {
	return func(r *http.Request) (consent.Source, error) {
		return consent.NewDashboard(enabled, user(r))
	}
}

// MQTTConsent is the ConsentSource of MQTT's commands: L3 consent from
// source "mqtt", only when the owner enabled it.
func MQTTConsent(enabled bool) ConsentSource {
	return func(*http.Request) (consent.Source, error) {
		src, err := consent.NewMQTT(enabled)
		if err != nil {
			return nil, fmt.Errorf("%w (set mqtt.commands_consent = true to allow it)", err)
		}
		return src, nil
	}
}

// consentApprove approves a waiting consent request, bound to its claim
// hash (ConsentDecision); only where the owner turned dashboard consent
// on.
func (s *Server) consentApprove(w http.ResponseWriter, r *http.Request, eng *engine.Engine) error {
	return s.decide(w, r, eng, (*engine.Engine).Approve)
}

// consentReject rejects a waiting consent request, bound to its claim
// hash (ConsentDecision); only where the owner turned dashboard consent
// on.
func (s *Server) consentReject(w http.ResponseWriter, r *http.Request, eng *engine.Engine) error {
	return s.decide(w, r, eng, (*engine.Engine).Reject)
}

// decide applies a human's decision from this door. Without Options.Consent
// (the control socket, the CLI) it is refused: consent is physical unless the
// owner enabled dashboard consent (docs/design.md, "Authority").
func (s *Server) decide(w http.ResponseWriter, r *http.Request, eng *engine.Engine, fn func(*engine.Engine, string, consent.Consent) error) error {
	if s.opt.Consent == nil {
		return errorf(CodeForbidden, "consent is given on the box's button; this door cannot give it")
	}
	var req ConsentDecision
	if err := decode(w, r, maxBody, &req); err != nil {
		return err
	}
	src, err := s.opt.Consent(r)
	if err != nil {
		return errorf(CodeForbidden, "%v", err)
	}
	c, err := consent.New(src, req.ClaimHash)
	switch {
	case errors.Is(err, consent.ErrBadClaimHash):
		return errorf(CodeInvalid, "claim_hash %q is not the SHA-256 of a claim (64 lower-case hex digits)", req.ClaimHash)
	case err != nil:
		return errorf(CodeForbidden, "%v", err)
	}
	node := r.PathValue("node")
	if err := fn(eng, node, c); err != nil {
		return err
	}
	n, err := eng.Node(node)
	if err != nil {
		return err
	}
	return ok(w, NodeView(n))
}

// consentShow is GET /api/consents/{node}: the request of one node. A
// node that awaits no consent is not found, saying what it is instead.
func (s *Server) consentShow(w http.ResponseWriter, r *http.Request, eng *engine.Engine) error {
	node := r.PathValue("node")
	cs, err := consentViews(eng)
	if err != nil {
		return err
	}
	for _, c := range cs {
		if c.Node == node {
			return ok(w, c)
		}
	}
	n, err := eng.Node(node)
	if err != nil {
		return err
	}
	return errorf(CodeNotFound, "node %s is %s: no consent waits for it (`questbox consent list` lists those that wait)", n.ID, n.Status)
}

// Consent is GET /api/consents/{node}.
func (c *Client) Consent(ctx context.Context, node string) (v Consent, err error) {
	return v, c.get(ctx, p("/api/consents/%s", node), &v)
}

// Approve approves the consent request of node for the claim hash shown.
func (c *Client) Approve(ctx context.Context, node, claimHash string) (n Node, err error) {
	return n, c.post(ctx, p("/api/consents/%s/approve", node), ConsentDecision{ClaimHash: claimHash}, &n)
}

// Reject rejects the consent request of node for the claim hash shown.
func (c *Client) Reject(ctx context.Context, node, claimHash string) (n Node, err error) {
	return n, c.post(ctx, p("/api/consents/%s/reject", node), ConsentDecision{ClaimHash: claimHash}, &n)
}
