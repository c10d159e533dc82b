package device

import (
	"fmt"
	"sync"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/physic"
)

// simPin is an LED pin of the simulator backend: an output that keeps the
// level it was last driven to, which Read returns. It starts Low. It has no
// PWM (the driver never asks for it) and nothing to release.
//
// The simulator is a backend of its own rather than periph's gpiotest pins,
// which are test fakes: this type does exactly what the Driver needs of a
// gpio.PinOut, and is safe for concurrent use.
type simPin struct {
	num int // BCM number

	mu    sync.Mutex // guards level
	level gpio.Level
}

var _ gpio.PinOut = (*simPin)(nil)

func newSimPin(bcm int) *simPin { return &simPin{num: bcm} }

// String implements conn.Resource: "GPIO17(sim)".
func (p *simPin) String() string { return p.Name() + "(sim)" }

// Halt implements conn.Resource. A simulated pin has nothing to stop.
func (p *simPin) Halt() error { return nil }

// Name implements pin.Pin: "GPIO17", as periph names the BCM pin.
func (p *simPin) Name() string { return pinName(p.num) }

// Number implements pin.Pin: the BCM number.
func (p *simPin) Number() int { return p.num }

// Function implements pin.Pin: "Out/High" or "Out/Low".
func (p *simPin) Function() string {
	if p.Read() {
		return string(gpio.OUT_HIGH)
	}
	return string(gpio.OUT_LOW)
}

// Out implements gpio.PinOut: the pin reads l from now on.
func (p *simPin) Out(l gpio.Level) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.level = l
	return nil
}

// PWM implements gpio.PinOut. The simulator has no PWM: it returns an error.
func (p *simPin) PWM(duty gpio.Duty, f physic.Frequency) error {
	return fmt.Errorf("device: simulated pin %s has no PWM", p.Name())
}

// Read returns the level last set by Out (Low before the first).
func (p *simPin) Read() gpio.Level {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.level
}
