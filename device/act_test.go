package device_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/questbox/questbox/device"
	"github.com/questbox/questbox/internal/clock/clocktest"
)

// fakeLED is a sysfs LED directory in a temp dir, as the kernel lays it out.
func fakeLED(t *testing.T, trigger, maxBrightness string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ACT")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]string{"trigger": trigger, "brightness": "0", "max_brightness": maxBrightness} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func readAttr(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func TestACTMirrorsAPattern(t *testing.T) {
	dir := fakeLED(t, "none [mmc0] timer heartbeat", "255")
	clk := clocktest.NewClock(t0)
	a := device.NewACT(dir, clk, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()

	a.Set(device.Worst(device.State{QuestsTerminated: 1}))
	a.Sync()
	if got := readAttr(t, dir, "trigger"); got != "none" {
		t.Errorf("trigger = %q while mirroring, want none", got)
	}
	if got := readAttr(t, dir, "brightness"); got != "255" {
		t.Errorf("solid: brightness = %q, want 255 (max_brightness)", got)
	}

	a.Set(device.Worst(device.State{ConsentsPending: 1})) // 2 Hz: lit 250 ms of every 500 ms
	for _, step := range []struct {
		at   time.Duration
		want string
	}{{0, "255"}, {250 * ms, "0"}, {500 * ms, "255"}, {750 * ms, "0"}} {
		clk.Advance(step.at - clk.Now().Sub(t0))
		a.Sync()
		if got := readAttr(t, dir, "brightness"); got != step.want {
			t.Errorf("2 Hz at %v: brightness = %q, want %q", step.at, got, step.want)
		}
	}

	a.Set(device.Worst(device.State{})) // healthy idle: dark, no wake-ups
	a.Sync()
	if got := readAttr(t, dir, "brightness"); got != "0" {
		t.Errorf("idle: brightness = %q, want 0", got)
	}
	if n := clk.Timers(); n != 0 {
		t.Errorf("%d timers armed for an idle box, want 0", n)
	}

	a.Set(device.PatternSolid)
	a.Sync()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
	if got := readAttr(t, dir, "brightness"); got != "0" {
		t.Errorf("after Run: brightness = %q, want 0", got)
	}
	if got := readAttr(t, dir, "trigger"); got != "mmc0" {
		t.Errorf("after Run: trigger = %q, want the previous one, mmc0", got)
	}
}

func TestACTMissingLEDWarnsAndCarriesOn(t *testing.T) {
	var logs bytes.Buffer
	a := device.NewACT(filepath.Join(t.TempDir(), "no-such-led"), clocktest.NewClock(t0), slog.New(slog.NewTextHandler(&logs, nil)))
	a.Set(device.PatternFault) // never blocks, even with nobody running
	if err := a.Run(context.Background()); err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
	if got := logs.String(); !strings.Contains(got, "level=WARN") || !strings.Contains(got, "no-such-led") {
		t.Errorf("log = %q, want a warning naming the path", got)
	}
}

func TestACTDefaultBrightness(t *testing.T) {
	dir := fakeLED(t, "[none] mmc0", "")
	a := device.NewACT(dir, clocktest.NewClock(t0), nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	a.Set(device.PatternSolid)
	a.Sync()
	if got := readAttr(t, dir, "brightness"); got != "1" {
		t.Errorf("brightness = %q, want 1 when max_brightness is unreadable", got)
	}
	cancel()
	<-done
	if got := readAttr(t, dir, "trigger"); got != "none" {
		t.Errorf("trigger = %q after Run, want none (it was none before)", got)
	}
}
