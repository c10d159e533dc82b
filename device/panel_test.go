package device_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/questbox/questbox/device"
)

// fakeQueue is an in-memory ConsentQueue that, like the engine, voids a
// decision whose claim hash no longer matches the node.
type fakeQueue struct {
	mu       sync.Mutex
	pending  []device.ConsentRequest
	claims   map[string]string // node → current claim hash
	approved []string
	rejected []string
}

func newFakeQueue(reqs ...device.ConsentRequest) *fakeQueue {
	q := &fakeQueue{claims: map[string]string{}}
	for _, r := range reqs {
		q.add(r)
	}
	return q
}

func (q *fakeQueue) add(r device.ConsentRequest) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.pending = append(q.pending, r)
	q.claims[r.Node] = r.ClaimHash
}

// change edits a node's claim after consent was requested.
func (q *fakeQueue) change(node, hash string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.claims[node] = hash
}

func (q *fakeQueue) Pending() ([]device.ConsentRequest, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]device.ConsentRequest(nil), q.pending...), nil
}

func (q *fakeQueue) decide(node, hash string, to *[]string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, r := range q.pending {
		if r.Node != node {
			continue
		}
		if q.claims[node] != hash {
			return fmt.Errorf("consent for %s is void: node changed", node)
		}
		q.pending = append(q.pending[:i], q.pending[i+1:]...)
		*to = append(*to, node)
		return nil
	}
	return fmt.Errorf("no pending consent for %s", node)
}

func (q *fakeQueue) Approve(node, hash string) error { return q.decide(node, hash, &q.approved) }
func (q *fakeQueue) Reject(node, hash string) error  { return q.decide(node, hash, &q.rejected) }

func (q *fakeQueue) decisions() (approved, rejected []string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]string(nil), q.approved...), append([]string(nil), q.rejected...)
}

type fakeBlinker struct{ counts []int }

func (b *fakeBlinker) BlinkCount(n int) { b.counts = append(b.counts, n) }

func reqs() []device.ConsentRequest {
	return []device.ConsentRequest{
		{Node: "n2", Quest: "q", ClaimHash: "h2", Since: t0.Add(2 * time.Minute)},
		{Node: "n1", Quest: "q", ClaimHash: "h1", Since: t0.Add(1 * time.Minute)},
		{Node: "n3", Quest: "q", ClaimHash: "h3", Since: t0.Add(3 * time.Minute)},
	}
}

func TestPanel(t *testing.T) {
	long := device.Press{Kind: device.Long, Count: 1}
	triple := device.Press{Kind: device.Triple, Count: 3}
	short := device.Press{Kind: device.Short, Count: 1}
	for _, tc := range []struct {
		name     string
		reqs     []device.ConsentRequest
		press    device.Press
		want     string
		approved []string
		rejected []string
		blinks   []int
	}{
		{"long approves the oldest", reqs(), long, "approved n1", []string{"n1"}, nil, nil},
		{"triple rejects the oldest", reqs(), triple, "rejected n1", nil, []string{"n1"}, nil},
		{"short blinks the count", reqs(), short, "3 pending", nil, nil, []int{3}},
		{"double press is a short", reqs(), device.Press{Kind: device.Short, Count: 2}, "3 pending", nil, nil, []int{3}},
		{"long with nothing pending", nil, long, device.OutcomeNothingPending, nil, nil, nil},
		{"triple with nothing pending", nil, triple, device.OutcomeNothingPending, nil, nil, nil},
		{"short with nothing pending", nil, short, device.OutcomeNothingPending, nil, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := newFakeQueue(tc.reqs...)
			var leds fakeBlinker
			var reported []string
			p := device.NewPanel(q, &leds, func(pr device.Press, outcome string) {
				reported = append(reported, pr.Kind.String()+": "+outcome)
			})
			if got := p.Handle(tc.press); got != tc.want {
				t.Errorf("outcome = %q, want %q", got, tc.want)
			}
			if want := []string{tc.press.Kind.String() + ": " + tc.want}; fmt.Sprint(reported) != fmt.Sprint(want) {
				t.Errorf("reported %q, want %q", reported, want)
			}
			approved, rejected := q.decisions()
			if fmt.Sprint(approved) != fmt.Sprint(tc.approved) || fmt.Sprint(rejected) != fmt.Sprint(tc.rejected) {
				t.Errorf("approved %v rejected %v, want %v and %v", approved, rejected, tc.approved, tc.rejected)
			}
			if fmt.Sprint(leds.counts) != fmt.Sprint(tc.blinks) {
				t.Errorf("blinked %v, want %v", leds.counts, tc.blinks)
			}
		})
	}
}

// A request that arrives while the button is held is not what the person saw.
func TestPanelActsOnWhatWasShownAtPressStart(t *testing.T) {
	q := newFakeQueue()
	p := device.NewPanel(q, nil, nil)
	p.Down() // nothing pending when the press started
	q.add(device.ConsentRequest{Node: "late", ClaimHash: "h", Since: t0})
	if got := p.Handle(device.Press{Kind: device.Long}); got != device.OutcomeNothingPending {
		t.Errorf("outcome = %q, want %q", got, device.OutcomeNothingPending)
	}
	if approved, _ := q.decisions(); len(approved) != 0 {
		t.Errorf("approved %v, want nothing", approved)
	}
	// The next gesture sees it.
	p.Down()
	if got := p.Handle(device.Press{Kind: device.Long}); got != "approved late" {
		t.Errorf("outcome = %q, want %q", got, "approved late")
	}
}

func TestPanelBindsTheClaimHashShown(t *testing.T) {
	q := newFakeQueue(reqs()...)
	p := device.NewPanel(q, nil, nil)
	p.Down()
	q.change("n1", "edited") // the node changed after consent was requested
	got := p.Handle(device.Press{Kind: device.Long})
	if want := "approve n1 failed: consent for n1 is void: node changed"; got != want {
		t.Errorf("outcome = %q, want %q", got, want)
	}
	if approved, _ := q.decisions(); len(approved) != 0 {
		t.Errorf("approved %v, want nothing", approved)
	}
}

type brokenQueue struct{ fakeQueue }

func (*brokenQueue) Pending() ([]device.ConsentRequest, error) {
	return nil, errors.New("store closed")
}

func TestPanelQueueErrors(t *testing.T) {
	p := device.NewPanel(&brokenQueue{}, nil, nil)
	if got, want := p.Handle(device.Press{Kind: device.Long}), "reading consent queue failed: store closed"; got != want {
		t.Errorf("outcome = %q, want %q", got, want)
	}
	p = device.NewPanel(nil, nil, nil)
	if got := p.Handle(device.Press{Kind: device.Long}); got != device.OutcomeNoQueue {
		t.Errorf("outcome = %q, want %q", got, device.OutcomeNoQueue)
	}
}
