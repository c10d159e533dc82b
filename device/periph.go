package device

import (
	"fmt"
	"log/slog"
	"strings"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpioreg"
	"periph.io/x/host/v3"
	"periph.io/x/host/v3/gpioioctl"
)

// openPeriph claims the configured pins through periph.io. This is the only
// place that probes hardware (host.Init). It is pure Go, so it builds for every
// target (linux/arm GOARM=6, arm64, amd64) and fails cleanly where no GPIO
// character device exists.
func openPeriph(cfg Config, log *slog.Logger) (*Device, error) {
	if _, err := host.Init(); err != nil {
		return nil, fmt.Errorf("gpio: initialising periph host drivers: %w", err)
	}
	lookup, err := pinLookup(cfg.Chip)
	if err != nil {
		return nil, err
	}
	var (
		leds   [numLEDs]gpio.PinOut
		button gpio.PinIn
		halt   []func() error
	)
	fail := func(err error) (*Device, error) {
		for _, h := range halt {
			_ = h() // best effort: we are already failing with err
		}
		return nil, err
	}
	for i, p := range cfg.pins() {
		if p.num < 0 {
			continue
		}
		name := pinName(p.num)
		pin := lookup(name)
		if pin == nil {
			return fail(&PinError{Pin: name, Role: p.role, Detail: notFoundDetail(cfg.Chip), Err: ErrPinNotFound})
		}
		halt = append(halt, pin.Halt)
		if i < numLEDs {
			// Claim the line as an output now, dark, so a wrong pin fails at
			// start-up rather than on the first blink.
			if err := pin.Out(gpio.Level(cfg.LEDsActiveLow)); err != nil {
				return fail(&PinError{Pin: name, Role: p.role, Detail: "cannot be driven: " + err.Error(), Err: err})
			}
			leds[i] = pin
			continue
		}
		button = pin
	}
	d := newDevice(BackendPeriph, cfg, log, leds, button, false)
	d.halt = halt
	log.Info("device: using GPIO pins", "pins", d.describe())
	return d, nil
}

// pinLookup returns how to find a pin by name: in periph's registry, or on
// the named GPIO chip.
func pinLookup(chip string) (func(string) gpio.PinIO, error) {
	if chip == "" {
		return func(name string) gpio.PinIO {
			if p := gpioreg.ByName(name); p != nil {
				return p
			}
			return nil
		}, nil
	}
	var names []string
	for _, c := range gpioioctl.Chips {
		if c.Name() == chip || c.Label() == chip {
			return func(name string) gpio.PinIO {
				if l := c.ByName(name); l != nil {
					return l
				}
				return nil // a typed nil *GPIOLine must not become a non-nil interface
			}, nil
		}
		names = append(names, c.Name())
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("gpio: chip %q not found: no GPIO character device on this machine?: %w", chip, ErrPinNotFound)
	}
	return nil, fmt.Errorf("gpio: chip %q not found (have %s): %w", chip, strings.Join(names, ", "), ErrPinNotFound)
}

func notFoundDetail(chip string) string {
	if len(gpioioctl.Chips) == 0 {
		return "not found: no GPIO character device on this machine?"
	}
	if chip != "" {
		return "not found on " + chip
	}
	return "not found"
}
