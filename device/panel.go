package device

import (
	"fmt"
	"sync"
	"time"
)

// ConsentRequest is one consent waiting for a human.
type ConsentRequest struct {
	Node  string
	Quest string
	// ClaimHash is the node's claim hash when consent was requested; a consent
	// binds to it, so the engine voids an approval of a node that has changed.
	ClaimHash string
	Since     time.Time // when consent was requested
}

// ConsentQueue is the engine's pending-consent queue as the button sees it.
// Implementations must be safe for concurrent use; the calls may block on the
// store.
type ConsentQueue interface {
	// Pending returns the requests waiting for a human, in any order.
	Pending() ([]ConsentRequest, error)
	// Approve grants consent to node, provided its claim hash is still
	// claimHash; otherwise the consent is void and an error is returned.
	Approve(node, claimHash string) error
	// Reject refuses consent to node under the same claim-hash rule.
	Reject(node, claimHash string) error
}

// Blinker shows a count on the LEDs; *Driver implements it.
type Blinker interface {
	BlinkCount(n int)
}

// Outcomes of a press, as reported to Panel's OnPress. Approve and reject
// outcomes carry the node: "approved NODE", "rejected NODE", or
// "approve NODE failed: ..." when the queue refused.
const (
	OutcomeNothingPending = "nothing pending"
	OutcomeNoQueue        = "no consent queue"
)

// Panel turns button presses into consent actions (docs/design.md, "The
// consent button"):
//
//   - Long approves the oldest pending request (by Since), Triple rejects it.
//   - Short blinks the number of pending requests on amber.
//   - With nothing pending nothing happens, but the press is still reported.
//
// "Oldest" is judged from what was pending when the gesture started (Down), and
// the action carries the claim hash captured then: the person approves what the
// box was showing when they reached for the button, never a request that
// arrived while they held it. If Down was not called, Handle looks at the queue
// when the gesture is recognised.
//
// Down and Handle are safe for concurrent use; mu guards shown.
type Panel struct {
	queue   ConsentQueue // nil: presses are only reported
	leds    Blinker      // nil: Short shows nothing
	onPress func(Press, string)

	mu    sync.Mutex
	shown *shownQueue // the queue as it was when the current gesture started
}

type shownQueue struct {
	reqs []ConsentRequest
	err  error
}

// NewPanel returns a Panel acting on q and blinking on leds; every press and its
// outcome is passed to onPress (which may be nil), so the daemon can emit a
// device event. Any of them may be nil.
func NewPanel(q ConsentQueue, leds Blinker, onPress func(p Press, outcome string)) *Panel {
	return &Panel{queue: q, leds: leds, onPress: onPress}
}

// Down records the pending queue at the start of a gesture. Later Downs of the
// same gesture (the 2nd and 3rd press of a triple) keep the first snapshot.
func (p *Panel) Down() {
	if p.queue == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown != nil {
		return
	}
	reqs, err := p.queue.Pending()
	p.shown = &shownQueue{reqs: reqs, err: err}
}

// Handle acts on a recognised press, reports it to onPress and returns the
// outcome.
func (p *Panel) Handle(pr Press) string {
	outcome := p.act(pr)
	if p.onPress != nil {
		p.onPress(pr, outcome)
	}
	return outcome
}

func (p *Panel) act(pr Press) string {
	p.mu.Lock()
	shown := p.shown
	p.shown = nil
	p.mu.Unlock()
	if p.queue == nil {
		return OutcomeNoQueue
	}
	if shown == nil {
		reqs, err := p.queue.Pending()
		shown = &shownQueue{reqs: reqs, err: err}
	}
	if shown.err != nil {
		return fmt.Sprintf("reading consent queue failed: %v", shown.err)
	}
	if len(shown.reqs) == 0 {
		return OutcomeNothingPending
	}
	switch pr.Kind {
	case Short:
		if p.leds != nil {
			p.leds.BlinkCount(len(shown.reqs))
		}
		return fmt.Sprintf("%d pending", len(shown.reqs))
	case Long:
		r := oldest(shown.reqs)
		if err := p.queue.Approve(r.Node, r.ClaimHash); err != nil {
			return fmt.Sprintf("approve %s failed: %v", r.Node, err)
		}
		return "approved " + r.Node
	case Triple:
		r := oldest(shown.reqs)
		if err := p.queue.Reject(r.Node, r.ClaimHash); err != nil {
			return fmt.Sprintf("reject %s failed: %v", r.Node, err)
		}
		return "rejected " + r.Node
	}
	return "ignored " + pr.Kind.String()
}

// oldest returns the request with the earliest Since; ties go to the smaller
// node id so the choice does not depend on the queue's order.
func oldest(reqs []ConsentRequest) ConsentRequest {
	o := reqs[0]
	for _, r := range reqs[1:] {
		if r.Since.Before(o.Since) || (r.Since.Equal(o.Since) && r.Node < o.Node) {
			o = r
		}
	}
	return o
}
