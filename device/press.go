package device

import (
	"fmt"
	"time"
)

// PressKind is what a button gesture meant.
type PressKind uint8

// Press kinds.
const (
	Short  PressKind = iota + 1 // one or two quick presses
	Long                        // held for at least Timing.LongPress
	Triple                      // three quick presses
)

// String returns "short", "long" or "triple".
func (k PressKind) String() string {
	switch k {
	case Short:
		return "short"
	case Long:
		return "long"
	case Triple:
		return "triple"
	}
	return fmt.Sprintf("press(%d)", k)
}

// Press is one recognised button gesture.
type Press struct {
	Kind PressKind
	// Count is how many presses made up the gesture: 1 or 2 for Short (a double
	// press is a Short with Count 2 and is treated like a short press), 3 for
	// Triple, and for Long 1 plus any quick presses just before the hold.
	Count int
	// Held is how long the last press was held: for Long, Timing.LongPress (the
	// event fires while the button is still down); otherwise the debounced
	// duration of the last press.
	Held time.Duration
	// At is when the gesture was complete: for Long the moment the hold reached
	// Timing.LongPress, for Triple the settled third release, for Short the end
	// of the multi-press gap.
	At time.Time
}

// String returns e.g. "short", "short x2", "long (2s)", "triple".
func (p Press) String() string {
	switch {
	case p.Kind == Long:
		return fmt.Sprintf("long (%s)", p.Held)
	case p.Count > 1 && p.Kind == Short:
		return fmt.Sprintf("short x%d", p.Count)
	}
	return p.Kind.String()
}

// Default button timing (docs/design.md, "The consent button").
const (
	DefaultDebounce      = 50 * time.Millisecond
	DefaultLongPress     = 2 * time.Second
	DefaultMultiPressGap = 400 * time.Millisecond
)

// Timing holds the button thresholds. Zero fields take the defaults.
type Timing struct {
	// Debounce is how long the raw level must stay unchanged before the change
	// counts. Longer rejects worse switches but delays every decision by that much.
	Debounce time.Duration
	// LongPress is how long a press must be held to be a Long press (it fires
	// when the hold reaches it, before the release).
	LongPress time.Duration
	// MultiPressGap is the longest pause between a release and the next press
	// for both to belong to one gesture; a Short is reported this long after
	// its last release, so a longer gap makes short presses feel slower.
	MultiPressGap time.Duration
}

func (t Timing) withDefaults() Timing {
	if t.Debounce <= 0 {
		t.Debounce = DefaultDebounce
	}
	if t.LongPress <= 0 {
		t.LongPress = DefaultLongPress
	}
	if t.MultiPressGap <= 0 {
		t.MultiPressGap = DefaultMultiPressGap
	}
	return t
}

// Classifier turns raw button edges into presses. It is pure: it is fed level
// changes with their times (Edge) and told when time passes (Tick), and it says
// when it next needs to be told (Deadline). It is not safe for concurrent use.
//
// Debouncing: a level counts only once it has been stable for Timing.Debounce;
// the press or release is then dated back to its last raw edge. Any number of
// edges inside that window (chatter) therefore make at most one transition.
//
// Gestures: a debounced press held for Timing.LongPress is a Long, reported at
// that moment; its release reports nothing more. Otherwise presses whose next
// press starts within Timing.MultiPressGap of the previous release are counted:
// the third release reports a Triple at once, and otherwise the gap expiring
// after the last release reports a Short with Count 1 or 2. A hold that follows
// quick presses is a Long (with Count including them).
//
// A button already pressed when the Classifier is created is ignored until it
// has been released.
type Classifier struct {
	t Timing

	raw   bool      // last raw level (true = pressed)
	rawAt time.Time // time of the last raw edge
	now   time.Time // latest time seen; edges are never dated before it

	down        bool          // debounced level
	downAt      time.Time     // when the current debounced press started
	longFired   bool          // the current press was already reported (or is ignored)
	count       int           // completed quick presses in the current gesture
	lastRelease time.Time     // when the last counted press was released
	lastHeld    time.Duration // how long it was held
}

// NewClassifier returns a Classifier whose button is pressed or not at now.
func NewClassifier(t Timing, pressed bool, now time.Time) *Classifier {
	return &Classifier{
		t:    t.withDefaults(),
		raw:  pressed,
		down: pressed,
		// A press in progress at start-up is not ours to interpret.
		longFired: pressed,
		rawAt:     now,
		now:       now,
		downAt:    now,
	}
}

// Pressed reports the debounced level.
func (c *Classifier) Pressed() bool { return c.down }

// Edge records a raw level at time at (a pin edge), first reporting any presses
// whose deadline is at or before at. Repeated levels restart the debounce window
// (an edge did happen; we only missed its partner).
func (c *Classifier) Edge(pressed bool, at time.Time) []Press {
	out := c.Tick(at)
	if at.Before(c.now) {
		at = c.now
	}
	c.raw, c.rawAt = pressed, at
	return out
}

// Tick reports the presses whose deadline is at or before now.
func (c *Classifier) Tick(now time.Time) []Press {
	if now.After(c.now) {
		c.now = now
	}
	var out []Press
	for {
		at, kind, ok := c.deadline()
		if !ok || at.After(c.now) {
			return out
		}
		if p, ok := c.fire(kind, at); ok {
			out = append(out, p)
		}
	}
}

// Deadline returns when Tick must next be called, or false if nothing will
// happen until the next edge.
func (c *Classifier) Deadline() (time.Time, bool) {
	at, _, ok := c.deadline()
	return at, ok
}

type deadlineKind uint8

const (
	settle    deadlineKind = iota + 1 // the raw level has been stable for Debounce
	holdLong                          // the press reached LongPress
	gapExpiry                         // no new press within MultiPressGap
)

func (c *Classifier) deadline() (time.Time, deadlineKind, bool) {
	var (
		best time.Time
		kind deadlineKind
	)
	consider := func(at time.Time, k deadlineKind) {
		if kind == 0 || at.Before(best) {
			best, kind = at, k
		}
	}
	if c.raw != c.down {
		consider(c.rawAt.Add(c.t.Debounce), settle)
	}
	// Likewise a release that is settling decides whether the hold was long.
	if c.down && !c.longFired && c.raw {
		consider(c.downAt.Add(c.t.LongPress), holdLong)
	}
	// While a new press is settling, the gap is judged by when it started (in
	// settle), not by the clock, so a press begun inside the gap still counts.
	if !c.down && c.count > 0 && !c.raw {
		consider(c.lastRelease.Add(c.t.MultiPressGap), gapExpiry)
	}
	return best, kind, kind != 0
}

func (c *Classifier) fire(kind deadlineKind, at time.Time) (Press, bool) {
	switch kind {
	case settle:
		if c.raw {
			return c.pressed()
		}
		return c.released(at)
	case holdLong:
		c.longFired = true
		p := Press{Kind: Long, Count: c.count + 1, Held: c.t.LongPress, At: at}
		c.count = 0
		return p, true
	case gapExpiry:
		p := Press{Kind: Short, Count: c.count, Held: c.lastHeld, At: at}
		c.count = 0
		return p, true
	}
	panic(fmt.Sprintf("BUG: device: unknown deadline kind %d", kind))
}

func (c *Classifier) pressed() (Press, bool) {
	var (
		p  Press
		ok bool
	)
	if c.count > 0 && c.rawAt.Sub(c.lastRelease) >= c.t.MultiPressGap {
		// Started too late to join the gesture: report the earlier presses now.
		p, ok = Press{Kind: Short, Count: c.count, Held: c.lastHeld, At: c.lastRelease.Add(c.t.MultiPressGap)}, true
		c.count = 0
	}
	c.down, c.downAt, c.longFired = true, c.rawAt, false
	return p, ok
}

func (c *Classifier) released(at time.Time) (Press, bool) {
	c.down = false
	if c.longFired {
		c.count = 0
		return Press{}, false
	}
	held := c.rawAt.Sub(c.downAt)
	if held >= c.t.LongPress {
		// Only when the long deadline was skipped over, e.g. edges fed late.
		p := Press{Kind: Long, Count: c.count + 1, Held: held, At: at}
		c.count = 0
		return p, true
	}
	c.count++
	c.lastRelease, c.lastHeld = c.rawAt, held
	if c.count == 3 {
		c.count = 0
		return Press{Kind: Triple, Count: 3, Held: held, At: at}, true
	}
	return Press{}, false
}
