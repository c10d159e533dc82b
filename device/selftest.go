package device

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/questbox/questbox/internal/clock"
)

// Selftest timings: how long each LED is lit, and how long to wait for a press.
const (
	SelftestLEDTime   = time.Second
	SelftestPressWait = 30 * time.Second
)

// ErrNoPress is returned by Selftest when nobody pressed the button in time.
var ErrNoPress = errors.New("device: no button press seen")

// Selftest checks the wiring with a person watching: it lights each fitted LED
// in turn for a second, naming its pin on out, then waits up to 30 s for a
// button press and reports what it saw (every press is echoed on green). It
// returns ErrNoPress if no press came and ErrBusy if dev is running. Run it
// before or instead of Run; the LEDs are dark when it returns.
func Selftest(ctx context.Context, dev *Device, out io.Writer) error {
	release, err := dev.acquire()
	if err != nil {
		return err
	}
	defer release()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	presses := make(chan Press, 1)
	done := make(chan error, 1)
	go func() {
		done <- dev.run(ctx, ButtonEvents{
			Down: func(time.Time) { dev.driver.Echo() },
			Press: func(p Press) {
				select {
				case presses <- p:
				default: // only the first press matters
				}
			},
		})
	}()
	err = selftest(ctx, dev, out, presses)
	dev.driver.Set(Patterns(dev.State()))
	cancel()
	if runErr := <-done; err == nil && !errors.Is(runErr, context.Canceled) {
		err = runErr // e.g. ErrBusy, or a pin that could not be configured
	}
	return err
}

func selftest(ctx context.Context, dev *Device, out io.Writer, presses <-chan Press) error {
	clk := dev.cfg.Clock
	fmt.Fprintf(out, "backend %s: %s\n", dev.backend, dev.describe())
	for i, p := range dev.cfg.pins()[:numLEDs] {
		if p.num < 0 {
			fmt.Fprintf(out, "%s: not fitted\n", p.role)
			continue
		}
		var l LEDs
		[]*Pattern{&l.Green, &l.Amber, &l.Red}[i].Kind = Solid
		dev.driver.Set(l)
		fmt.Fprintf(out, "%s on %s (BCM %d): lit for %s\n", p.role, pinName(p.num), p.num, SelftestLEDTime)
		if err := clock.Sleep(ctx, clk, SelftestLEDTime); err != nil {
			return err
		}
	}
	dev.driver.Set(LEDs{})
	if dev.button == nil {
		fmt.Fprintln(out, "button: not fitted")
		return nil
	}
	fmt.Fprintf(out, "button on %s (BCM %d): press it within %s (short, hold %s for long, or three quick presses)\n",
		pinName(dev.cfg.Button), dev.cfg.Button, SelftestPressWait, dev.button.cfg.Timing.withDefaults().LongPress)
	t := clk.NewTimer(SelftestPressWait)
	defer t.Stop()
	select {
	case p := <-presses:
		fmt.Fprintf(out, "button: saw a %s press (%d press(es), last held %s)\n", p.Kind, p.Count, p.Held)
		return nil
	case <-t.C():
		fmt.Fprintf(out, "button: no press within %s\n", SelftestPressWait)
		return ErrNoPress
	case <-ctx.Done():
		return ctx.Err()
	}
}
