package daemon

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/questbox/questbox/device"
	"github.com/questbox/questbox/internal/config"
	"github.com/questbox/questbox/ui/api"
)

// deviceConfig is the device wiring of the gpio section.
func deviceConfig(g config.GPIO) device.Config {
	return device.Config{
		Backend:          g.Backend,
		Chip:             g.Chip,
		Green:            g.Green,
		Amber:            g.Amber,
		Red:              g.Red,
		Button:           g.Button,
		LEDsActiveLow:    g.ActiveLow,
		ButtonActiveHigh: g.ButtonActiveHigh,
		ButtonPull:       g.ButtonPull,
		Debounce:         g.Debounce.Duration,
		LongPress:        g.LongPress.Duration,
		MultiPressGap:    g.MultiPressGap.Duration,
	}
}

// OpenDevice opens the LEDs and button of g. A configured pin that does not
// exist on this machine (periph, or a chip that is not there) is a
// configuration that does not fit the hardware: exit 1, like a bad config.
// A pin that exists but cannot be claimed (held by another process, no
// permission) is a resource that is unavailable: exit 2, like a store in
// use.
func OpenDevice(g config.GPIO, log *slog.Logger) (*device.Device, error) {
	dev, err := device.Open(deviceConfig(g), log)
	switch {
	case err == nil:
		return dev, nil
	case errors.Is(err, device.ErrPinNotFound):
		return nil, &ExitError{Code: api.ExitUsage, Err: fmt.Errorf("%w (gpio.backend or --gpio is %s; a machine without these pins needs auto or sim)", err, g.Backend)}
	}
	if _, ok := errors.AsType[*device.PinError](err); ok {
		return nil, &ExitError{Code: api.ExitStore, Err: err}
	}
	return nil, &ExitError{Code: api.ExitUsage, Err: err}
}

// mirrorOnACT reports whether the ACT LED mirrors the worst state:
// gpio.act_led is set and this box lights no external LED, because every
// LED pin is not fitted (negative) or the backend is the simulator.
func mirrorOnACT(g config.GPIO, backend string) bool {
	noLEDs := g.Green < 0 && g.Amber < 0 && g.Red < 0
	return g.ActLED && (noLEDs || backend == device.BackendSim)
}

// buttonPin is the button's BCM number as the device uses it (0 is the
// default).
func buttonPin(p int) int {
	if p == 0 {
		return device.DefaultButtonPin
	}
	return p
}
