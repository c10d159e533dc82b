package device

import (
	"log/slog"
	"time"

	"periph.io/x/conn/v3/gpio"
)

// Sync returns once Run has processed every timer that has fired.
func (b *Button) Sync() {
	ack := make(chan struct{})
	b.syncc <- ack
	<-ack
}

// Trace makes Run call fn after processing each edge. Call before Run.
func (b *Button) Trace(fn func()) { b.traced = fn }

// OnStart makes Run call fn once the pin is configured. Call before Run.
func (b *Button) OnStart(fn func()) { b.started = fn }

// Sync returns once Run has written the levels for the clock's current time.
func (d *Driver) Sync() {
	ack := make(chan struct{})
	d.syncc <- ack
	<-ack
}

// Next exposes Pattern.next.
func (p Pattern) Next(elapsed time.Duration) (time.Duration, bool) { return p.next(elapsed) }

// NewTestDevice returns a Device on the given pins, as the periph backend
// would build it.
func NewTestDevice(cfg Config, log *slog.Logger, g, a, r gpio.PinOut, button gpio.PinIn) (*Device, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return newDevice(BackendPeriph, cfg, log, [numLEDs]gpio.PinOut{g, a, r}, button, false), nil
}

// ButtonOf returns d's button.
func ButtonOf(d *Device) *Button { return d.button }

// DriverOf returns d's LED driver.
func DriverOf(d *Device) *Driver { return d.driver }

// SetPoll changes how long the pin reader waits per WaitForEdge call (real
// time: it only bounds how quickly Run returns). Call before Run.
func (b *Button) SetPoll(d time.Duration) { b.poll = d }

// Sync returns once Run has written the level for the clock's current time.
func (a *ACT) Sync() {
	ack := make(chan struct{})
	a.syncc <- ack
	<-ack
}

// SimPin is the simulator's LED pin.
type SimPin = simPin

// NewSimPin exposes newSimPin.
func NewSimPin(bcm int) *SimPin { return newSimPin(bcm) }

// LEDPins returns d's LED pins, green, amber, red (nil: not fitted).
func LEDPins(d *Device) [numLEDs]gpio.PinOut { return d.leds }
