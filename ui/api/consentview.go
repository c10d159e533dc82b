package api

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/questbox/questbox/engine"
)

// Consent is a node waiting for a human, as every face shows it: GET
// /api/consents and /api/consents/{node}, `device status`, `consent list`
// and `consent show`, MQTT's <base>/consent and consent events, Home
// Assistant's attributes and the dashboard's card. It says what waits,
// why, what a yes approves, the claim hash the press binds to, and how
// old the request is and when it expires.
//
// Agent text in it (the hypothesis, the reasons, the evidence and the
// citations) is capped (see MaxConsentEvidence) and printable: control
// characters other than newline and tab, and the controls of
// bidirectional text, are written as escapes (\x1b, \u202e), so that no
// answer can drive the terminal, the phone or the page that shows it.
type Consent struct {
	Node       string `json:"node"`
	Quest      string `json:"quest"`
	Role       string `json:"role"`
	Team       string `json:"team,omitempty"`  // a stage node's Team
	Stage      string `json:"stage,omitempty"` // plan, exec, accept
	Hypothesis string `json:"hypothesis"`
	// Why is the reasons' texts on one line; for a request made before
	// reasons were recorded, what the request said then.
	Why string `json:"why"`
	// Reasons are why the request was made, as the gate said it then:
	// one per fired rule, judge doubt, checkpoint or Team accept.
	Reasons []ConsentReason `json:"reasons"`
	// Deliverable is what a yes approves.
	Deliverable Deliverable `json:"deliverable"`
	ClaimHash   string      `json:"claim_hash"`
	Since       time.Time   `json:"since"`
	AgeSeconds  int64       `json:"age_seconds"`
	Age         string      `json:"age"`
	// ExpiresAt and ExpiresInSeconds are absent when requests never
	// expire (gpio.consent_expiry = 0).
	ExpiresAt        *time.Time `json:"expires_at,omitempty"`
	ExpiresInSeconds *int64     `json:"expires_in_seconds,omitempty"`
	// Expired requests are listed until the engine sends them back to
	// pending; the button skips them.
	Expired bool `json:"expired,omitempty"`
}

// ConsentReason is one reason a request was made. Kind is open: a face
// shows Text for a kind it does not know, and every kind has one.
type ConsentReason struct {
	// Kind is rule (a gate rule fired at level review), judge (the L2
	// judge doubted a citation, or escalated to a human), checkpoint (the
	// role is a quest checkpoint), team_accept (a Team's accept waits for
	// a human), or not_recorded (a request made before reasons were
	// recorded); more kinds may come.
	Kind string `json:"kind"`
	Text string `json:"text"`
	// Rule and Level: the fired rule (rule, judge).
	Rule  string `json:"rule,omitempty"`
	Level string `json:"level,omitempty"`
	// Source and Quote: the citation a judge doubted.
	Source string `json:"source,omitempty"`
	Quote  string `json:"quote,omitempty"`
	Role   string `json:"role,omitempty"` // checkpoint
	Team   string `json:"team,omitempty"` // team_accept
}

// Deliverable is the answer a consent approves: the node's own, or, for a
// Team's accept, its executer's deliverable (Node says which).
type Deliverable struct {
	Node    string `json:"node"`
	Verdict string `json:"verdict,omitempty"`
	// Evidence is at most MaxConsentEvidence bytes of the evidence, its
	// end when it is longer (EvidenceCut); EvidenceBytes is the whole
	// evidence's size.
	Evidence      string `json:"evidence"`
	EvidenceBytes int    `json:"evidence_bytes"`
	EvidenceCut   bool   `json:"evidence_cut"`
	// Citations are the first MaxConsentCitations; CitationsMore counts
	// the others.
	Citations     []Citation `json:"citations"`
	CitationsMore int        `json:"citations_more,omitempty"`
}

// ConsentRequested is the outcome of the consent event a request makes.
const ConsentRequested = engine.ConsentRequested

// ReasonNotRecorded is the kind of the one reason of a request made
// before reasons were recorded (a store of an older questbox).
const ReasonNotRecorded = "not_recorded"

// The caps of a consent's view: a person reads it before pressing, on a
// phone as on a terminal, and MQTT sends it whole.
const (
	// MaxConsentEvidence bounds the evidence, in bytes of the agent's
	// text: a longer one keeps its end, the newest text written (a
	// conclusion comes last), and says it was cut.
	MaxConsentEvidence = 4 << 10
	// MaxConsentCitations bounds the citations listed.
	MaxConsentCitations = 8
	// maxConsentQuote bounds a citation's quote and a reason's quote,
	// maxConsentSource a source, maxConsentText a hypothesis and a
	// reason's text, each kept from its start; maxConsentReasons the
	// reasons listed.
	maxConsentQuote   = 512
	maxConsentSource  = 256
	maxConsentText    = 1 << 10
	maxConsentReasons = 16
	// MaxConsentPayload bounds the JSON of what MQTT publishes of
	// consents (<base>/consent, a consent event's view): Home Assistant
	// stores an entity's attributes only up to 16 KiB. FitConsents trims
	// to it.
	MaxConsentPayload = 16 << 10
)

// ConsentView is the view of r at now.
func ConsentView(r engine.ConsentRequest, now time.Time) Consent {
	v := Consent{Node: r.Node, Quest: r.Quest, Role: r.Role, Team: r.Team, Stage: r.Stage,
		Hypothesis: Printable(cutHead(r.Hypothesis, maxConsentText), true), ClaimHash: r.ClaimHash, Since: r.Since,
		AgeSeconds: seconds(now.Sub(r.Since)), Age: durText(now.Sub(r.Since)), Expired: r.Expired,
		Reasons: reasonsView(r.Reasons), Deliverable: deliverableView(r.Deliverable)}
	if len(r.Reasons) == 0 {
		v.Reasons = []ConsentReason{{Kind: ReasonNotRecorded, Text: "reason not recorded"}}
		v.Why = Printable(cutHead(r.Why, maxConsentText), false)
	} else {
		texts := make([]string, len(v.Reasons))
		for i, rs := range v.Reasons {
			texts[i] = rs.Text
		}
		v.Why = strings.Join(texts, "; ")
	}
	if !r.Deadline.IsZero() {
		at, in := r.Deadline, seconds(r.Deadline.Sub(now))
		v.ExpiresAt, v.ExpiresInSeconds = &at, &in
	}
	return v
}

func reasonsView(rs []engine.ConsentReason) []ConsentReason {
	out := make([]ConsentReason, 0, min(len(rs), maxConsentReasons))
	for i, r := range rs {
		if i == maxConsentReasons {
			out = append(out, ConsentReason{Kind: "more", Text: fmt.Sprintf("and %d more reasons (questbox quest show)", len(rs)-i)})
			break
		}
		v := ConsentReason{Kind: line(r.Kind, 64), Text: line(r.Text, maxConsentText), Source: line(r.Source, maxConsentSource),
			Quote: line(r.Quote, maxConsentQuote), Role: line(r.Role, 64), Team: line(r.Team, 64)}
		if r.Fact != nil {
			v.Rule, v.Level = line(r.Fact.Rule, 64), r.Fact.Level.String()
		}
		if v.Text == "" {
			v.Text = v.Kind
		}
		out = append(out, v)
	}
	return out
}

func deliverableView(d engine.Deliverable) Deliverable {
	ev := strings.ReplaceAll(d.Evidence, "\r\n", "\n")
	v := Deliverable{Node: d.Node, Verdict: line(d.Verdict, 64), EvidenceBytes: len(ev), Citations: []Citation{}}
	kept := cutTail(ev, MaxConsentEvidence)
	v.Evidence, v.EvidenceCut = Printable(kept, true), len(kept) < len(ev)
	for i, c := range d.Citations {
		if i == MaxConsentCitations {
			v.CitationsMore = len(d.Citations) - i
			break
		}
		v.Citations = append(v.Citations, Citation{Source: line(c.Source, maxConsentSource), Quote: line(c.Quote, maxConsentQuote)})
	}
	return v
}

// FitConsents returns cs as it fits in max bytes of JSON: the newest
// requests' deliverables are left out first (EvidenceCut, their evidence
// and citations dropped), then the newest requests themselves. The
// oldest request, the one the button answers, is always kept.
func FitConsents(cs []Consent, max int) []Consent {
	out := append(make([]Consent, 0, len(cs)), cs...)
	size := func() int { b, _ := json.Marshal(out); return len(b) }
	for i := len(out) - 1; i >= 0 && size() > max; i-- {
		d := &out[i].Deliverable
		d.CitationsMore += len(d.Citations)
		d.Evidence, d.EvidenceCut, d.Citations = "", d.EvidenceBytes > 0, []Citation{}
	}
	for len(out) > 1 && size() > max {
		out = out[:len(out)-1]
	}
	return out
}

// consentViews is the consent queue's view at the engine's now: the one
// list GET /api/consents, MQTT and the dashboard show.
func consentViews(eng *engine.Engine) ([]Consent, error) {
	return consentViewsAt(eng, eng.Now())
}

// consentViewsAt is the consent queue's view at now, each request saying
// whether it has expired: the one list, which GET /api/device also shows
// at the box's time.
func consentViewsAt(eng *engine.Engine, now time.Time) ([]Consent, error) {
	reqs, err := eng.ConsentQueue(now)
	if err != nil {
		return nil, err
	}
	out := make([]Consent, len(reqs))
	for i, r := range reqs {
		out[i] = ConsentView(r, now)
	}
	return out, nil
}

// cutHead is s cut to at most n bytes at a rune boundary (Clip), with
// "…" when cut.
func cutHead(s string, n int) string {
	if v, cut := Clip(s, n); cut > 0 {
		return v + "…"
	}
	return s
}

// cutTail is the last at most n bytes of s, from a rune boundary.
func cutTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}

// line is s on one line (runs of white space one space), cut to n bytes
// and printable.
func line(s string, n int) string {
	return Printable(cutHead(strings.Join(strings.Fields(s), " "), n), false)
}

// withConsents gives each consent event of outcome requested in evs the
// view of its request, if it still waits for the claim the event names,
// fitted to MaxConsentPayload: the event then says what waits and why.
func withConsents(eng *engine.Engine, evs []Event) error {
	want := false
	for _, ev := range evs {
		want = want || ev.Kind == KindConsent && ev.Outcome == ConsentRequested
	}
	if !want {
		return nil
	}
	cs, err := consentViews(eng)
	if err != nil {
		return err
	}
	for i, ev := range evs {
		if ev.Kind != KindConsent || ev.Outcome != ConsentRequested {
			continue
		}
		for _, c := range cs {
			if c.Node == ev.Node && c.ClaimHash == ev.ClaimHash {
				v := FitConsents([]Consent{c}, MaxConsentPayload)[0]
				evs[i].Consent = &v
			}
		}
	}
	return nil
}
