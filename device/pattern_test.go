package device_test

import (
	"testing"
	"time"

	"github.com/questbox/questbox/device"
)

const ms = time.Millisecond

func TestPatternString(t *testing.T) {
	for _, tc := range []struct {
		p    device.Pattern
		want string
	}{
		{device.PatternOff, "off"},
		{device.PatternSolid, "solid"},
		{device.PatternRunning, "blink 1Hz"},
		{device.PatternConsent, "blink 2Hz"},
		{device.PatternFault, "blink 4Hz"},
		{device.Pattern{Kind: device.Blink, Hz: 2.5}, "blink 2.5Hz"},
		{device.PatternOffline, "flash 100ms every 1.5s"},
		{device.PatternChase, "chase"},
	} {
		if got := tc.p.String(); got != tc.want {
			t.Errorf("%#v.String() = %q, want %q", tc.p, got, tc.want)
		}
	}
}

func TestPatternOn(t *testing.T) {
	for _, tc := range []struct {
		name    string
		p       device.Pattern
		elapsed time.Duration
		index   int
		want    bool
	}{
		{"off", device.PatternOff, 123 * ms, 0, false},
		{"solid", device.PatternSolid, 123 * ms, 0, true},
		{"1Hz start", device.PatternRunning, 0, 0, true},
		{"1Hz end of lit half", device.PatternRunning, 499 * ms, 0, true},
		{"1Hz dark half", device.PatternRunning, 500 * ms, 0, false},
		{"1Hz next period", device.PatternRunning, 1000 * ms, 0, true},
		{"2Hz dark", device.PatternConsent, 250 * ms, 0, false},
		{"2Hz lit", device.PatternConsent, 500 * ms, 0, true},
		{"4Hz dark", device.PatternFault, 125 * ms, 0, false},
		{"4Hz lit", device.PatternFault, 250 * ms, 0, true},
		{"flash lit", device.PatternOffline, 99 * ms, 0, true},
		{"flash dark", device.PatternOffline, 100 * ms, 0, false},
		{"flash dark late", device.PatternOffline, 1499 * ms, 0, false},
		{"flash again", device.PatternOffline, 1500 * ms, 0, true},
		{"chase green first", device.PatternChase, 0, 0, true},
		{"chase amber not first", device.PatternChase, 0, 1, false},
		{"chase amber second", device.PatternChase, 250 * ms, 1, true},
		{"chase red third", device.PatternChase, 500 * ms, 2, true},
		{"chase green again", device.PatternChase, 750 * ms, 0, true},
		{"blink 0Hz is dark", device.Pattern{Kind: device.Blink}, 0, 0, false},
		{"flash longer than period is lit", device.Pattern{Kind: device.Flash, Every: ms, Flash: 2 * ms}, 5 * ms, 0, true},
		{"negative elapsed", device.PatternRunning, -time.Second, 0, true},
	} {
		if got := tc.p.On(tc.elapsed, tc.index); got != tc.want {
			t.Errorf("%s: %v.On(%v, %d) = %v, want %v", tc.name, tc.p, tc.elapsed, tc.index, got, tc.want)
		}
	}
}

// TestPatternNext checks that the driver's wake-up times never miss a change:
// the level is constant from any time up to the next reported edge.
func TestPatternNext(t *testing.T) {
	pats := []device.Pattern{device.PatternOff, device.PatternSolid, device.PatternRunning,
		device.PatternConsent, device.PatternFault, device.PatternOffline, device.PatternChase}
	for _, p := range pats {
		for idx := range 3 {
			e := time.Duration(0)
			for e < 4*time.Second {
				next, ok := p.Next(e)
				if !ok {
					for x := e; x < 4*time.Second; x += 10 * ms {
						if p.On(x, idx) != p.On(e, idx) {
							t.Fatalf("%v: no next edge after %v but level changes at %v", p, e, x)
						}
					}
					break
				}
				if next <= e {
					t.Fatalf("%v: Next(%v) = %v, want later", p, e, next)
				}
				if p.On(next-time.Nanosecond, idx) != p.On(e, idx) {
					t.Fatalf("%v[%d]: level changes before Next(%v) = %v", p, idx, e, next)
				}
				e = next
			}
		}
	}
}

func TestPatterns(t *testing.T) {
	var (
		off     = device.PatternOff
		solid   = device.PatternSolid
		running = device.PatternRunning
		consent = device.PatternConsent
		offline = device.PatternOffline
		fault   = device.PatternFault
		chase   = device.PatternChase
	)
	for _, tc := range []struct {
		name string
		s    device.State
		want device.LEDs
	}{
		// One row of the LED table each (docs/design.md, "The LEDs").
		{"starting", device.State{Starting: true}, device.LEDs{chase, chase, chase}},
		{"healthy idle", device.State{}, device.LEDs{solid, off, off}},
		{"agent running", device.State{AgentsRunning: 2}, device.LEDs{running, off, off}},
		{"awaiting consent", device.State{ConsentsPending: 1}, device.LEDs{solid, consent, off}},
		{"offline", device.State{Offline: true}, device.LEDs{solid, offline, off}},
		{"quest terminated", device.State{QuestsTerminated: 1}, device.LEDs{solid, off, solid}},
		{"Team blocked, like an exhausted quest", device.State{TeamsBlocked: 1}, device.LEDs{solid, off, solid}},
		{"fault beats a blocked Team", device.State{Fault: "config", TeamsBlocked: 1}, device.LEDs{solid, off, fault}},
		{"fault", device.State{Fault: "store"}, device.LEDs{solid, off, fault}},
		{"halted on a fault", device.State{Fault: "store", Halted: true}, device.LEDs{off, off, fault}},
		// Worst state wins on each LED.
		{"consent beats offline", device.State{ConsentsPending: 1, Offline: true}, device.LEDs{solid, consent, off}},
		{"fault beats terminated", device.State{Fault: "config", QuestsTerminated: 3}, device.LEDs{solid, off, fault}},
		{"running keeps green blinking under a fault", device.State{AgentsRunning: 1, Fault: "broker auth"}, device.LEDs{running, off, fault}},
		{"everything at once", device.State{AgentsRunning: 1, ConsentsPending: 2, Offline: true, QuestsTerminated: 1, Fault: "store"},
			device.LEDs{running, consent, fault}},
		{"starting overrides everything", device.State{Starting: true, AgentsRunning: 1, ConsentsPending: 2, Offline: true, QuestsTerminated: 1, Fault: "store"},
			device.LEDs{chase, chase, chase}},
	} {
		if got := device.Patterns(tc.s); got != tc.want {
			t.Errorf("%s: Patterns(%+v) = %v, want %v", tc.name, tc.s, got, tc.want)
		}
	}
}

func TestWorst(t *testing.T) {
	all := device.State{AgentsRunning: 1, ConsentsPending: 1, Offline: true, QuestsTerminated: 1, Fault: "store"}
	for _, tc := range []struct {
		name string
		s    device.State
		want device.Pattern
	}{
		{"idle", device.State{}, device.PatternOff},
		{"running", device.State{AgentsRunning: 1}, device.PatternRunning},
		{"offline beats running", device.State{AgentsRunning: 1, Offline: true}, device.PatternOffline},
		{"consent beats offline", device.State{AgentsRunning: 1, Offline: true, ConsentsPending: 1}, device.PatternConsent},
		{"terminated beats consent", device.State{ConsentsPending: 1, Offline: true, QuestsTerminated: 1}, device.PatternSolid},
		{"a blocked Team beats consent", device.State{ConsentsPending: 1, TeamsBlocked: 1}, device.PatternSolid},
		{"fault beats all", all, device.PatternFault},
		{"starting", device.State{Starting: true, Fault: "config"}, device.PatternChase},
	} {
		if got := device.Worst(tc.s); got != tc.want {
			t.Errorf("%s: Worst(%+v) = %v, want %v", tc.name, tc.s, got, tc.want)
		}
	}
}
