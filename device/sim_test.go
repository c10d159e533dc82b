package device_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/questbox/questbox/device"
	"github.com/questbox/questbox/internal/clock/clocktest"
	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/physic"
)

func TestSimPin(t *testing.T) {
	p := device.NewSimPin(17)
	if got, want := fmt.Sprintf("%s %s %d", p, p.Name(), p.Number()), "GPIO17(sim) GPIO17 17"; got != want {
		t.Errorf("String Name Number = %q, want %q", got, want)
	}
	if got := p.Read(); got != gpio.Low {
		t.Errorf("new pin reads %v, want Low", got)
	}
	for _, tt := range []struct {
		name string
		set  gpio.Level
		fn   string
	}{
		{"high", gpio.High, "Out/High"},
		{"high again", gpio.High, "Out/High"},
		{"low", gpio.Low, "Out/Low"},
		{"high after low", gpio.High, "Out/High"},
	} {
		if err := p.Out(tt.set); err != nil {
			t.Errorf("%s: Out(%v) = %v, want nil", tt.name, tt.set, err)
		}
		if got := p.Read(); got != tt.set {
			t.Errorf("%s: Read() = %v, want %v", tt.name, got, tt.set)
		}
		if got := p.Function(); got != tt.fn {
			t.Errorf("%s: Function() = %q, want %q", tt.name, got, tt.fn)
		}
	}
	if err := p.PWM(gpio.DutyHalf, physic.KiloHertz); err == nil {
		t.Error("PWM = nil, want an error: the simulator has no PWM")
	}
	if err := p.Halt(); err != nil {
		t.Errorf("Halt = %v, want nil", err)
	}
	if got := p.Read(); got != gpio.High {
		t.Errorf("after PWM and Halt, Read() = %v, want the last level, High", got)
	}
}

// Writers and readers share a pin: run under -race.
func TestSimPinConcurrentUse(t *testing.T) {
	p := device.NewSimPin(27)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for j := range 100 {
				if err := p.Out(gpio.Level((i+j)%2 == 0)); err != nil {
					t.Errorf("Out: %v", err)
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			for range 100 {
				if l := p.Read(); l != gpio.Low && l != gpio.High {
					t.Errorf("Read() = %v", l)
					return
				}
				_ = p.Function()
				_ = p.String()
			}
		}()
	}
	wg.Wait()
	if err := p.Out(gpio.High); err != nil {
		t.Fatal(err)
	}
	if got := p.Read(); got != gpio.High {
		t.Errorf("after the writers, Out(High) then Read() = %v, want High", got)
	}
}

// The sim backend drives simulated pins of its own (not periph's test
// fakes), at the levels the driver computes, honouring active-low wiring,
// and leaves them dark when Run returns. An LED not fitted has no pin.
func TestSimLEDsShowTheDriversLevels(t *testing.T) {
	for _, tt := range []struct {
		name      string
		activeLow bool
	}{
		{"active high", false},
		{"active low", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dev, err := device.Open(device.Config{Backend: "sim", Clock: clocktest.NewClock(t0), Amber: -1, LEDsActiveLow: tt.activeLow}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer dev.Close()
			var pins [3]*device.SimPin
			for i, p := range device.LEDPins(dev) {
				if i == 1 {
					if p != nil {
						t.Fatalf("amber not fitted, but has pin %v", p)
					}
					continue
				}
				sp, ok := p.(*device.SimPin)
				if !ok {
					t.Fatalf("LED %d is a %T, want *device.SimPin", i, p)
				}
				pins[i] = sp
			}
			lit := func(i int) bool { return bool(pins[i].Read()) != tt.activeLow }

			dev.SetState(device.State{QuestsTerminated: 1}) // green and red solid
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- dev.Run(ctx, newFakeQueue(), nil) }()
			device.DriverOf(dev).Sync()
			lv := device.DriverOf(dev).Levels()
			for _, i := range []int{0, 2} {
				if !lv[i] || !lit(i) {
					t.Errorf("LED %d: driver level %v, pin lit %v; want both lit", i, lv[i], lit(i))
				}
			}
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("Run = %v, want context.Canceled", err)
			}
			for _, i := range []int{0, 2} {
				if lit(i) {
					t.Errorf("LED %d lit after Run returned, want dark", i)
				}
			}
		})
	}
}
