package device

import (
	"fmt"
	"strconv"
	"time"
)

// PatternKind is the shape of an LED pattern.
type PatternKind uint8

// Pattern kinds. The zero value is Off.
const (
	Off   PatternKind = iota // dark
	Solid                    // lit
	Blink                    // lit for the first half of each period of Pattern.Hz
	Flash                    // lit for Pattern.Flash at the start of each Pattern.Every
	Chase                    // one LED of a row lit at a time, stepping every chaseStep
)

// chaseStep is how long each LED stays lit in a chase.
const chaseStep = 250 * time.Millisecond

// chaseLen is the number of LEDs a chase runs across (green, amber, red).
const chaseLen = 3

// Pattern is what one LED shows. The zero value is Off.
//
// Hz is used by Blink; Every and Flash by Flash. A Blink with Hz <= 0 or a Flash
// with Flash <= 0 or Every <= 0 is dark; a Flash whose Flash >= Every is lit.
type Pattern struct {
	Kind  PatternKind
	Hz    float64
	Every time.Duration
	Flash time.Duration
}

// The patterns of the LEDs (docs/design.md, "The LEDs").
var (
	PatternOff     = Pattern{Kind: Off}
	PatternSolid   = Pattern{Kind: Solid}
	PatternRunning = Pattern{Kind: Blink, Hz: 1}                                                         // agent running (green)
	PatternConsent = Pattern{Kind: Blink, Hz: 2}                                                         // awaiting consent (amber)
	PatternOffline = Pattern{Kind: Flash, Every: 1500 * time.Millisecond, Flash: 100 * time.Millisecond} // offline (amber)
	PatternFault   = Pattern{Kind: Blink, Hz: 4}                                                         // fault (red)
	PatternChase   = Pattern{Kind: Chase}                                                                // starting (all three)
)

// String returns a short human description: "off", "solid", "blink 1Hz",
// "flash 100ms every 1.5s", "chase".
func (p Pattern) String() string {
	switch p.Kind {
	case Off:
		return "off"
	case Solid:
		return "solid"
	case Blink:
		return "blink " + strconv.FormatFloat(p.Hz, 'g', -1, 64) + "Hz"
	case Flash:
		return fmt.Sprintf("flash %s every %s", p.Flash, p.Every)
	case Chase:
		return "chase"
	}
	return fmt.Sprintf("pattern(%d)", p.Kind)
}

// On reports whether the LED is lit at elapsed time since the pattern started.
// index is the LED's position in a chase (0 green, 1 amber, 2 red); other kinds
// ignore it. Negative elapsed is treated as 0.
func (p Pattern) On(elapsed time.Duration, index int) bool {
	if elapsed < 0 {
		elapsed = 0
	}
	switch p.Kind {
	case Solid:
		return true
	case Blink:
		period := p.period()
		if period <= 0 {
			return false
		}
		return elapsed%period < period/2
	case Flash:
		if p.Every <= 0 || p.Flash <= 0 {
			return false
		}
		if p.Flash >= p.Every {
			return true
		}
		return elapsed%p.Every < p.Flash
	case Chase:
		return int((elapsed/chaseStep)%chaseLen) == ((index%chaseLen)+chaseLen)%chaseLen
	}
	return false
}

// next returns the smallest elapsed time t > elapsed at which the LED may change
// level, or false if it never changes again. It may report a time at which the
// level stays the same (a chase step of another LED); it never skips a change.
func (p Pattern) next(elapsed time.Duration) (time.Duration, bool) {
	if elapsed < 0 {
		elapsed = 0
	}
	edge := func(period, lit time.Duration) (time.Duration, bool) {
		phase := elapsed % period
		if phase < lit {
			return elapsed - phase + lit, true
		}
		return elapsed - phase + period, true
	}
	switch p.Kind {
	case Blink:
		period := p.period()
		if period <= 0 {
			return 0, false
		}
		return edge(period, period/2)
	case Flash:
		if p.Every <= 0 || p.Flash <= 0 || p.Flash >= p.Every {
			return 0, false
		}
		return edge(p.Every, p.Flash)
	case Chase:
		return (elapsed/chaseStep + 1) * chaseStep, true
	}
	return 0, false
}

func (p Pattern) period() time.Duration {
	if p.Hz <= 0 {
		return 0
	}
	return time.Duration(float64(time.Second) / p.Hz)
}

// State is what the LEDs report: the box's health as the daemon sees it. The zero
// value is a healthy, idle box.
type State struct {
	Starting         bool // the daemon has not finished starting
	AgentsRunning    int  // agent runs in progress
	ConsentsPending  int  // consent requests waiting for a human
	Offline          bool // no network
	QuestsTerminated int  // quests terminated or exhausted
	// TeamsBlocked counts the unfinished quests with a Team rejected past its
	// max_revisions (team_blocked, docs/design.md, "Councils and Teams"):
	// shown as an exhausted quest is, but not a quest's status, so counted
	// apart.
	TeamsBlocked int
	Fault        string // "" = none; otherwise what is broken: store, broker auth, config
	// Halted means the daemon can do no work at all (its store is refused)
	// and waits for a person: green is dark, only the fault shows.
	Halted bool
}

// LEDs is one pattern per LED.
type LEDs struct {
	Green, Amber, Red Pattern
}

// Patterns maps the box's state to what each LED shows (docs/design.md, "The
// LEDs").
//
// Each LED reports one concern, and where several states compete for one LED the
// worst wins:
//
//   - Starting overrides everything: all three LEDs chase.
//   - Green: an agent running (1 Hz blink) beats healthy idle (solid).
//   - Amber: awaiting consent (2 Hz blink) beats offline (100 ms flash every 1.5 s),
//     because consent needs a human now while the network usually comes back by
//     itself; otherwise off.
//   - Red: a fault (4 Hz blink) beats a terminated or exhausted quest, or one
//     with a blocked Team (solid); otherwise off.
//
// Green stays healthy (solid or blinking) even when red shows a fault: it answers
// "is the daemon doing work", red answers "does something need fixing". Only a
// halted daemon (one that can do no work until a person repairs its store)
// turns green off.
func Patterns(s State) LEDs {
	if s.Starting {
		return LEDs{Green: PatternChase, Amber: PatternChase, Red: PatternChase}
	}
	var l LEDs
	switch {
	case s.Halted:
		l.Green = PatternOff
	case s.AgentsRunning > 0:
		l.Green = PatternRunning
	default:
		l.Green = PatternSolid
	}
	switch {
	case s.ConsentsPending > 0:
		l.Amber = PatternConsent
	case s.Offline:
		l.Amber = PatternOffline
	}
	switch {
	case s.Fault != "":
		l.Red = PatternFault
	case s.QuestsTerminated > 0, s.TeamsBlocked > 0:
		l.Red = PatternSolid
	}
	return l
}

// Worst is the single-LED summary, for the Pi's own ACT LED when no external LEDs
// are fitted: starting (chase, which on one LED is a 250 ms blip every 750 ms) >
// fault (4 Hz) > terminated (solid) > consent (2 Hz) > offline (flash) > running
// (1 Hz) > idle (off, so a healthy idle box keeps the ACT LED dark).
func Worst(s State) Pattern {
	switch {
	case s.Starting:
		return PatternChase
	case s.Fault != "":
		return PatternFault
	case s.QuestsTerminated > 0, s.TeamsBlocked > 0:
		return PatternSolid
	case s.ConsentsPending > 0:
		return PatternConsent
	case s.Offline:
		return PatternOffline
	case s.AgentsRunning > 0:
		return PatternRunning
	}
	return PatternOff
}
