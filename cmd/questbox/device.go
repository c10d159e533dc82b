package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/questbox/questbox/device"
	"github.com/questbox/questbox/engine"
)

// Bounds of `device press`.
const (
	maxPressHold  = time.Minute
	maxPressTimes = 9
	// pressTimeout bounds a press request: Press plays in simulated time
	// and returns at once unless the daemon is stopping.
	pressTimeout = 30 * time.Second
)

// errRealButton refuses `device press` on real pins (SPEC §5.3).
var errRealButton = errors.New("the button is real on this box: consent from hardware stays physical")

// devicePressCmd is `device press [--hold D] [--times N]`: it presses the
// simulated button through the daemon and prints what each press did.
type devicePressCmd struct {
	hold  time.Duration
	times int
}

func (c *devicePressCmd) flags(fs *flag.FlagSet) {
	fs.DurationVar(&c.hold, "hold", 0, "how long to hold the button each time (default: a short press; 2s approves)")
	fs.IntVar(&c.times, "times", 1, "how many quick presses (3 rejects)")
}

func (c *devicePressCmd) run(ctx context.Context, e *env, args []string) error {
	if err := wantArgs("device press", args); err != nil {
		return err
	}
	if c.hold < 0 || c.hold > maxPressHold {
		return usagef("device press: --hold %s must be between 0 and %s", c.hold, maxPressHold)
	}
	if c.times < 1 || c.times > maxPressTimes {
		return usagef("device press: --times %d must be between 1 and %d", c.times, maxPressTimes)
	}
	b := e.box
	if b == nil {
		return errNoDaemon("device press")
	}
	if b.dev.Backend() != device.BackendSim {
		return &exitError{code: exitUsage, err: errRealButton}
	}
	pctx, cancel := context.WithTimeout(ctx, pressTimeout)
	defer cancel()
	stop := context.AfterFunc(b.ctx, cancel) // the device stops with the daemon
	defer stop()
	got, err := b.presses.play(pctx, b.dev, c.hold, c.times)
	if err != nil {
		return fmt.Errorf("device press: the daemon is stopping (%v): %w", err, errUnavailable)
	}
	if e.json {
		if got == nil {
			got = []pressResult{}
		}
		return printJSON(e.stdout, got)
	}
	for _, r := range got {
		fmt.Fprintf(e.stdout, "%s: %s\n", r.Press, r.Outcome)
	}
	return nil
}

// errNoDaemon is the error of a verb that only the daemon can answer.
func errNoDaemon(verb string) error {
	return &exitError{code: exitStore, err: fmt.Errorf("no questbox daemon is running (%s needs `questbox run`)", verb)}
}

// deviceStatusCmd is `device status`: the LEDs, the button and the consent
// queue, as the daemon sees them.
type deviceStatusCmd struct{}

func (c *deviceStatusCmd) flags(*flag.FlagSet) {}

// deviceStatusView is the JSON of `device status`.
type deviceStatusView struct {
	device.Snapshot               // backend and each LED's pin, pattern and level
	Button          buttonView    `json:"button"`
	ACT             *actView      `json:"act_led,omitempty"`
	State           stateView     `json:"state"`
	Consents        []consentView `json:"consents"` // oldest first
}

type buttonView struct {
	Pin       int  `json:"pin"` // BCM; negative when not fitted
	Simulated bool `json:"simulated"`
}

type actView struct {
	Path    string `json:"path"`
	Pattern string `json:"pattern"`
}

type stateView struct {
	Starting        bool   `json:"starting"`
	AgentsRunning   int    `json:"agents_running"`
	ConsentsPending int    `json:"consents_pending"`
	Offline         bool   `json:"offline"`
	QuestsAttention int    `json:"quests_needing_attention"` // terminated, or stopped other than by the owner
	Fault           string `json:"fault,omitempty"`
}

type consentView struct {
	engine.ConsentRequest
	AgeSeconds int64 `json:"age_seconds"`
	// Expired requests (older than gpio.consent_expiry) are listed but the
	// button no longer offers them.
	Expired bool `json:"expired,omitempty"`
}

func (c *deviceStatusCmd) run(ctx context.Context, e *env, args []string) error {
	if err := wantArgs("device status", args); err != nil {
		return err
	}
	b := e.box
	if b == nil {
		return errNoDaemon("device status")
	}
	now := b.now()
	reqs, err := b.eng.Consents()
	if err != nil {
		return err
	}
	st := b.dev.State()
	v := deviceStatusView{
		Snapshot: b.dev.Snapshot(),
		Button:   buttonView{Pin: buttonPin(b.cfg.Button), Simulated: b.dev.Backend() == device.BackendSim},
		State: stateView{Starting: st.Starting, AgentsRunning: st.AgentsRunning, ConsentsPending: st.ConsentsPending,
			Offline: st.Offline, QuestsAttention: st.QuestsTerminated, Fault: st.Fault},
		Consents: []consentView{},
	}
	if b.act != nil {
		v.ACT = &actView{Path: b.act.Dir(), Pattern: b.act.Pattern().String()}
	}
	for _, r := range reqs {
		v.Consents = append(v.Consents, consentView{ConsentRequest: r, AgeSeconds: int64(now.Sub(r.Since) / time.Second), Expired: b.isExpired(r, now)})
	}
	if e.json {
		return printJSON(e.stdout, v)
	}
	w := e.stdout
	fmt.Fprintf(w, "backend: %s", v.Backend)
	if v.Button.Simulated {
		fmt.Fprint(w, " (simulated LEDs and button: press it with `questbox device press`)")
	}
	fmt.Fprintln(w)
	tw := table(w)
	fmt.Fprintln(tw, "LED\tPIN\tPATTERN\tNOW")
	for _, l := range []struct {
		name string
		v    device.LEDView
	}{{"green", v.Green}, {"amber", v.Amber}, {"red", v.Red}} {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", l.name, pinText(l.v.Pin), l.v.Pattern, onOff(l.v.On))
	}
	tw.Flush()
	fmt.Fprintf(w, "button: %s\n", pinText(v.Button.Pin))
	if v.ACT != nil {
		fmt.Fprintf(w, "ACT LED: mirrors the worst state, now %s (%s)\n", v.ACT.Pattern, v.ACT.Path)
	}
	fmt.Fprintf(w, "state: %s\n", stateText(v.State))
	if len(v.Consents) == 0 {
		fmt.Fprintln(w, "consents pending: none")
		return nil
	}
	live := 0
	for _, r := range v.Consents {
		if !r.Expired {
			live++
		}
	}
	fmt.Fprintf(w, "consents pending: %d (oldest first; a long press approves the first, a triple press rejects it)\n", live)
	tw = table(w)
	fmt.Fprintln(tw, "NODE\tQUEST\tROLE\tCLAIM\tAGE\tHYPOTHESIS")
	for _, r := range v.Consents {
		age := dur(time.Duration(r.AgeSeconds) * time.Second)
		if r.Expired {
			age += " (expired)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.12s\t%s\t%s\n", r.Node, r.Quest, r.Role, r.ClaimHash, age, oneLine(r.Hypothesis, 60))
	}
	return tw.Flush()
}

// buttonPin is the button's BCM number as the device uses it (0 is the
// default).
func buttonPin(p int) int {
	if p == 0 {
		return device.DefaultButtonPin
	}
	return p
}

func pinText(bcm int) string {
	if bcm < 0 {
		return "not fitted"
	}
	return fmt.Sprintf("GPIO%d", bcm)
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

func stateText(s stateView) string {
	if s.Starting {
		return "starting"
	}
	var parts []string
	if s.Fault != "" {
		parts = append(parts, "fault: "+s.Fault)
	}
	if s.QuestsAttention > 0 {
		parts = append(parts, fmt.Sprintf("%d quest(s) terminated or stopped for attention", s.QuestsAttention))
	}
	if s.ConsentsPending > 0 {
		parts = append(parts, fmt.Sprintf("%d consent(s) pending", s.ConsentsPending))
	}
	if s.Offline {
		parts = append(parts, "offline")
	}
	if s.AgentsRunning > 0 {
		parts = append(parts, fmt.Sprintf("%d agent run(s)", s.AgentsRunning))
	}
	if len(parts) == 0 {
		return "healthy, idle"
	}
	return strings.Join(parts, "; ")
}
