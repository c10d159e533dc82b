package box_test

import (
	"context"
	"testing"
	"time"

	"github.com/questbox/questbox/device"
	"github.com/questbox/questbox/device/box"
	"github.com/questbox/questbox/internal/clock/clocktest"
)

// The box reads the time and waits for its deadlines on Options.Clock:
// Status tells the fake clock's time, and the state loop arms its timer for
// the end of the boot chase on that clock.
func TestBoxRunsOnItsClock(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	clk := clocktest.NewClock(t0)
	dev, err := device.Open(device.Config{Backend: device.BackendSim, Clock: clk}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Close() })
	b := box.New(dev, box.Options{Clock: clk})
	st, err := b.Status()
	if err != nil {
		t.Fatal(err)
	}
	if !st.Now.Equal(t0) {
		t.Errorf("Status().Now = %v, want the clock's %v", st.Now, t0)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	// Two timers: the LED driver's next step of the chase, and the state
	// loop's end of the boot chase.
	clk.BlockUntil(2)
	clk.Advance(box.BootChase)
	if st, _ := b.Status(); !st.Now.Equal(t0.Add(box.BootChase)) {
		t.Errorf("after Advance, Status().Now = %v, want %v", st.Now, t0.Add(box.BootChase))
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v, want nil", err)
	}
}
