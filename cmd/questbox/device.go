package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/questbox/questbox/ui/api"
)

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
	req := api.PressRequest{Times: c.times}
	if c.hold != 0 {
		req.Hold = c.hold.String()
	}
	got, err := e.door.api(ctx).Press(ctx, req)
	if err != nil {
		return err
	}
	if e.json {
		return printJSON(e.stdout, got)
	}
	for _, r := range got {
		fmt.Fprintf(e.stdout, "%s: %s\n", r.Press, r.Outcome)
	}
	return nil
}

// deviceStatusCmd is `device status`: the LEDs, the button and the consent
// queue, as the daemon sees them.
type deviceStatusCmd struct{}

func (c *deviceStatusCmd) flags(*flag.FlagSet) {}

func (c *deviceStatusCmd) run(ctx context.Context, e *env, args []string) error {
	if err := wantArgs("device status", args); err != nil {
		return err
	}
	v, err := e.door.api(ctx).Device(ctx)
	if err != nil {
		return err
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
		v    api.LED
	}{{"green", v.Green}, {"amber", v.Amber}, {"red", v.Red}} {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", l.name, pinText(l.v.Pin), l.v.Pattern, onOff(l.v.On))
	}
	tw.Flush()
	fmt.Fprintf(w, "button: %s\n", pinText(v.Button.Pin))
	if v.ACT != nil {
		fmt.Fprintf(w, "ACT LED: mirrors the worst state, now %s (%s)\n", v.ACT.Pattern, v.ACT.Path)
	}
	if v.Halted != "" {
		fmt.Fprintf(w, "halted: %s\n", v.Halted)
	}
	fmt.Fprintf(w, "state: %s\n", stateText(v.State))
	fmt.Fprintf(w, "network: %s\n", map[bool]string{true: "online", false: "offline"}[v.Network.Online])
	fmt.Fprintf(w, "mqtt broker: %s\n", brokerText(v.Broker))
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
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "why each waits and what a yes approves: `questbox consent list`")
	return nil
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

func stateText(s api.State) string {
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
	if s.TeamsBlocked > 0 {
		parts = append(parts, fmt.Sprintf("%d quest(s) with a blocked Team", s.TeamsBlocked))
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

// brokerText is the MQTT connection as `device status` shows it.
func brokerText(b api.Broker) string {
	switch {
	case !b.Configured:
		return "off (no [mqtt] broker configured)"
	case b.Connected:
		return "connected"
	case b.Error != "" && b.Fault:
		return "not connected: " + b.Error + " (a fault: fix the [mqtt] section or the broker, then restart)"
	case b.Error != "":
		return "not connected: " + b.Error + " (retrying; events wait in the outbox)"
	}
	return "connecting"
}
