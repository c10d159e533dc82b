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
	lookup, err := pinLookup(cfg.Chip, gpioioctl.Chips)
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
		pin := lookup(p.num)
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

// pinLookup returns how to find a pin by its BCM number: by its name
// ("GPIO17") in periph's registry, or on the named GPIO chip; failing
// that, at that offset of the Raspberry Pi's own GPIO controller (a chip
// socChip accepts). The name alone is not enough: Debian's kernel takes
// the line names from the upstream device trees, which name ten header
// pins by their function ("GPIO_GCLK" for BCM 4, "SDA1" for BCM 2,
// "TXD1" for BCM 14), where Raspberry Pi OS says GPIO4.
func pinLookup(chip string, chips []*gpioioctl.GPIOChip) (func(bcm int) gpio.PinIO, error) {
	if chip == "" {
		return func(bcm int) gpio.PinIO {
			if p := gpioreg.ByName(pinName(bcm)); p != nil {
				return p
			}
			for _, c := range chips {
				if socChip(c.Label()) {
					return lineAt(c, bcm)
				}
			}
			return nil
		}, nil
	}
	var names []string
	for _, c := range chips {
		if c.Name() == chip || c.Label() == chip {
			return func(bcm int) gpio.PinIO {
				if l := c.ByName(pinName(bcm)); l != nil {
					return l
				}
				if socChip(c.Label()) {
					return lineAt(c, bcm)
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

// socChip reports whether a GPIO chip's label is that of a Raspberry Pi
// SoC's GPIO controller, whose line offsets are the BCM numbers: the
// kernel's pinctrl-bcm2835 driver labels it pinctrl-bcm2835 (Pi 1 to 3,
// Zero, Zero 2 W) or pinctrl-bcm2711 (Pi 4, 400).
func socChip(label string) bool {
	return label == "pinctrl-bcm2835" || label == "pinctrl-bcm2711"
}

// lineAt is line offset of c, or nil (never a typed nil) if c has none.
func lineAt(c *gpioioctl.GPIOChip, offset int) gpio.PinIO {
	if offset < 0 || offset >= c.LineCount() {
		return nil
	}
	if l := c.ByNumber(offset); l != nil {
		return l
	}
	return nil
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
