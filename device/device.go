package device

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	"periph.io/x/conn/v3/gpio"

	"github.com/questbox/questbox/internal/clock"
)

// Backends accepted by Config.Backend.
const (
	BackendAuto   = "auto"
	BackendSim    = "sim"
	BackendPeriph = "periph"
)

// Default BCM pins (docs/design.md, "The LEDs", "The consent button").
const (
	DefaultGreenPin  = 17
	DefaultAmberPin  = 27
	DefaultRedPin    = 22
	DefaultButtonPin = 23
)

// Config selects a backend and describes the wiring. The zero value is the
// default wiring (docs/design.md, "The box"): auto backend, BCM 17/27/22
// active-high LEDs, BCM 23 active-low button with the internal pull-up,
// default timing.
type Config struct {
	// Backend is "auto" (or ""), "sim" or "periph".
	Backend string
	// Chip names the GPIO character device holding the pins, by name
	// ("gpiochip0") or label ("pinctrl-bcm2711"). "" finds the pins by name
	// ("GPIO17") on any chip, which is right on every Raspberry Pi. A pin
	// whose line has another name (Debian's device trees call BCM 4
	// GPIO_GCLK) is taken at its BCM offset on the Pi's own GPIO controller.
	Chip string
	// BCM pin numbers. 0 takes the default (BCM 0 and 1 are reserved for the
	// HAT ID EEPROM); a negative number means not fitted.
	Green, Amber, Red, Button int
	// LEDsActiveLow lights an LED by driving its pin Low.
	LEDsActiveLow bool
	// ButtonActiveHigh means the button pulls its pin High when pressed.
	ButtonActiveHigh bool
	// ButtonPull is "up", "down" or "none" (external resistor); "" picks up for
	// an active-low button and down for an active-high one.
	ButtonPull string
	// Button timing; zero takes the defaults (50 ms, 2 s, 400 ms).
	Debounce, LongPress, MultiPressGap time.Duration
	// Clock is the time source; nil is the wall clock. Tests pass a
	// clocktest.Clock.
	Clock clock.Clock
}

// pinRole names a pin for error messages and Snapshot.
type pinRole struct {
	num  int
	role string // "green LED", "amber LED", "red LED", "button"
}

func (c Config) withDefaults() (Config, error) {
	def := func(p *int, d int) {
		if *p == 0 {
			*p = d
		}
	}
	def(&c.Green, DefaultGreenPin)
	def(&c.Amber, DefaultAmberPin)
	def(&c.Red, DefaultRedPin)
	def(&c.Button, DefaultButtonPin)
	if c.Backend == "" {
		c.Backend = BackendAuto
	}
	switch c.Backend {
	case BackendAuto, BackendSim, BackendPeriph:
	default:
		return c, fmt.Errorf("device: unknown GPIO backend %q (want auto, sim or periph)", c.Backend)
	}
	if _, err := c.pull(); err != nil {
		return c, err
	}
	seen := map[int]string{}
	for _, p := range c.pins() {
		if p.num < 0 {
			continue
		}
		if other, ok := seen[p.num]; ok {
			return c, fmt.Errorf("device: BCM %d is configured for both the %s and the %s", p.num, other, p.role)
		}
		seen[p.num] = p.role
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	return c, nil
}

func (c Config) pins() []pinRole {
	return []pinRole{{c.Green, "green LED"}, {c.Amber, "amber LED"}, {c.Red, "red LED"}, {c.Button, "button"}}
}

func (c Config) pull() (gpio.Pull, error) {
	switch c.ButtonPull {
	case "":
		if c.ButtonActiveHigh {
			return gpio.PullDown, nil
		}
		return gpio.PullUp, nil
	case "up":
		return gpio.PullUp, nil
	case "down":
		return gpio.PullDown, nil
	case "none":
		return gpio.Float, nil
	}
	return 0, fmt.Errorf("device: unknown button pull %q (want up, down or none)", c.ButtonPull)
}

func (c Config) timing() Timing {
	return Timing{Debounce: c.Debounce, LongPress: c.LongPress, MultiPressGap: c.MultiPressGap}
}

// Device is the box's LEDs and button on one backend. SetState, Snapshot,
// Backend and Press are safe for concurrent use; Run owns every goroutine.
type Device struct {
	backend string
	cfg     Config
	log     *slog.Logger
	driver  *Driver
	button  *Button // nil when no button is fitted
	leds    [numLEDs]gpio.PinOut
	halt    []func() error // releases the pins (Close)

	pressMu sync.Mutex // serialises Press so scripted sequences never interleave

	mu      sync.Mutex // guards state, running and closed
	state   State
	running bool // Run or Selftest is driving the pins
	closed  bool
}

// Open returns the device for cfg. With the periph backend it initialises
// periph's host drivers and claims the pins, failing with an error naming the
// first pin it cannot find or open; auto does the same but falls back to the
// simulator, with a warning naming the missing pin, when a pin does not exist
// (other failures, such as a pin held by another process, are still errors: a
// box with real pins must never silently accept simulated consent). Nothing
// runs until Run; call Close when done.
func Open(cfg Config, log *slog.Logger) (*Device, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	switch cfg.Backend {
	case BackendSim:
		return newSim(cfg, log), nil
	case BackendPeriph:
		return openPeriph(cfg, log)
	}
	d, err := openPeriph(cfg, log)
	if errors.Is(err, ErrPinNotFound) {
		log.Warn("device: GPIO pins not available, using the simulated LEDs and button", "err", err)
		return newSim(cfg, log), nil
	}
	return d, err
}

// ErrPinNotFound is returned (wrapped in a *PinError) by Open when a configured
// pin does not exist on this machine.
var ErrPinNotFound = errors.New("pin not found")

// PinError is returned by Open when a configured pin cannot be used; its
// message names the pin and what it is for.
type PinError struct {
	Pin    string // periph name, "GPIO17"
	Role   string // "green LED"
	Detail string // why, for the message
	Err    error  // ErrPinNotFound, or the driver's error
}

func (e *PinError) Error() string {
	return fmt.Sprintf("gpio: pin %s (%s) %s", e.Pin, e.Role, e.Detail)
}

func (e *PinError) Unwrap() error { return e.Err }

func pinName(bcm int) string { return fmt.Sprintf("GPIO%d", bcm) }

// newDevice wires pins into a Device; a nil pin is not fitted.
func newDevice(backend string, cfg Config, log *slog.Logger, leds [numLEDs]gpio.PinOut, button gpio.PinIn, simButton bool) *Device {
	d := &Device{backend: backend, cfg: cfg, log: log, leds: leds}
	d.driver = NewDriver(DriverConfig{Green: leds[green], Amber: leds[amber], Red: leds[red], ActiveLow: cfg.LEDsActiveLow, Log: log}, cfg.Clock)
	if button != nil || simButton {
		pull, _ := cfg.pull() // validated by withDefaults
		d.button = NewButton(button, ButtonConfig{Timing: cfg.timing(), ActiveHigh: cfg.ButtonActiveHigh, Pull: pull}, cfg.Clock)
	}
	d.driver.Set(Patterns(State{Starting: true}))
	d.state = State{Starting: true}
	return d
}

// newSim returns a simulated device: simPins for the LEDs and a button pressed
// only through Press.
func newSim(cfg Config, log *slog.Logger) *Device {
	var leds [numLEDs]gpio.PinOut
	for i, p := range cfg.pins()[:numLEDs] {
		if p.num >= 0 {
			leds[i] = newSimPin(p.num)
		}
	}
	return newDevice(BackendSim, cfg, log, leds, nil, cfg.Button >= 0)
}

// Backend returns "periph" or "sim".
func (d *Device) Backend() string { return d.backend }

// HasButton reports whether a button is fitted (gpio.button is not -1).
func (d *Device) HasButton() bool { return d.button != nil }

// SetState shows s on the LEDs. The device starts in State{Starting: true}.
func (d *Device) SetState(s State) {
	d.mu.Lock()
	d.state = s
	d.mu.Unlock()
	d.driver.Set(Patterns(s))
}

// SetLEDsActiveLow changes the LEDs' polarity (Config.LEDsActiveLow)
// while the device runs: the pins are written again at once.
func (d *Device) SetLEDsActiveLow(low bool) { d.driver.SetActiveLow(low) }

// State returns the state last set.
func (d *Device) State() State {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.state
}

// LEDView is one LED in a Snapshot.
type LEDView struct {
	Pin     int    `json:"pin"`     // BCM number; negative when not fitted
	Pattern string `json:"pattern"` // Pattern.String of its state pattern
	On      bool   `json:"on"`      // lit right now (including press echo and count blinks)
}

// Snapshot is what the LEDs show, for `questbox device status` and the dashboard.
type Snapshot struct {
	Backend string  `json:"backend"`
	Green   LEDView `json:"green"`
	Amber   LEDView `json:"amber"`
	Red     LEDView `json:"red"`
}

// Snapshot returns what each LED shows now.
func (d *Device) Snapshot() Snapshot {
	pats := d.driver.LEDs()
	lv := d.driver.Levels()
	view := func(i int, pin int, p Pattern) LEDView {
		return LEDView{Pin: pin, Pattern: p.String(), On: lv[i]}
	}
	return Snapshot{
		Backend: d.backend,
		Green:   view(green, d.cfg.Green, pats.Green),
		Amber:   view(amber, d.cfg.Amber, pats.Amber),
		Red:     view(red, d.cfg.Red, pats.Red),
	}
}

// Run drives the LEDs and reads the button until ctx is done. Each press is
// echoed on green (when it goes down, and again when a hold becomes a Long),
// acted on by a Panel over q, and reported with its outcome to onPress (both may
// be nil). Run returns ctx's error, or the first failure of a pin; its
// goroutines have all returned by then, and the LEDs are dark. It returns
// ErrBusy if the device is already running.
func (d *Device) Run(ctx context.Context, q ConsentQueue, onPress func(p Press, outcome string)) error {
	release, err := d.acquire()
	if err != nil {
		return err
	}
	defer release()
	panel := NewPanel(q, d.driver, onPress)
	return d.run(ctx, ButtonEvents{
		Down: func(time.Time) {
			d.driver.Echo()
			panel.Down()
		},
		Press: func(p Press) {
			if p.Kind == Long {
				d.driver.Echo()
			}
			panel.Handle(p)
		},
	})
}

// acquire marks the device running; release undoes it.
func (d *Device) acquire() (release func(), err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case d.closed:
		return nil, ErrClosed
	case d.running:
		return nil, ErrBusy
	}
	d.running = true
	return func() {
		d.mu.Lock()
		d.running = false
		d.mu.Unlock()
	}, nil
}

// ErrClosed is returned by Run and Selftest after Close.
var ErrClosed = errors.New("device: closed")

// run drives the LEDs and the button; the caller has acquired the device.
func (d *Device) run(ctx context.Context, ev ButtonEvents) error {
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return d.driver.Run(ctx) })
	if d.button != nil {
		g.Go(func() error { return d.button.Run(ctx, ev) })
	}
	return g.Wait()
}

// ErrNotSimulated is returned by Press unless the backend is sim: consent from
// real hardware stays physical.
var ErrNotSimulated = errors.New("device: the button is not simulated")

// Press presses the simulated button times times, holding it for hold each
// time (see Button.Play), and returns once the resulting presses have been
// handled by Run, waiting for Run to start if need be (bound it with ctx). It
// returns ErrNotSimulated on real hardware and ErrNotRunning if Run stops
// first.
func (d *Device) Press(ctx context.Context, hold time.Duration, times int) error {
	if d.backend != BackendSim {
		return ErrNotSimulated
	}
	if d.button == nil {
		return fmt.Errorf("device: no button is configured")
	}
	d.pressMu.Lock()
	defer d.pressMu.Unlock()
	return d.button.Play(ctx, hold, times)
}

// Close releases the pins. Call it after Run has returned; it is idempotent.
func (d *Device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	var errs []error
	for _, h := range d.halt {
		errs = append(errs, h())
	}
	return errors.Join(errs...)
}

// describe lists the pins, for logs and selftest.
func (d *Device) describe() string {
	var b strings.Builder
	for i, p := range d.cfg.pins() {
		if i > 0 {
			b.WriteString(", ")
		}
		if p.num < 0 {
			fmt.Fprintf(&b, "%s not fitted", p.role)
			continue
		}
		fmt.Fprintf(&b, "%s %s", p.role, pinName(p.num))
	}
	return b.String()
}
