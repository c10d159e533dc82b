package api

import (
	"context"
	"testing"
	"time"

	"github.com/questbox/questbox/device"
	"github.com/questbox/questbox/device/box"
	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/internal/clock/clocktest"
)

// TestDeviceMarksExpiredConsents: GET /api/device lists the consent queue
// as GET /api/consents does, at the box's time: a request past
// consent_expiry by the box's clock is listed and marked expired.
func TestDeviceMarksExpiredConsents(t *testing.T) {
	st, err := engine.OpenStore(t.TempDir(), engine.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(st, engine.Options{ConsentExpiry: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		eng.Shutdown(0)
		st.Close()
	})
	awaiting(t, eng, "h1")
	clk := clocktest.NewClock(time.Now().Add(2 * time.Hour)) // later
	dev, err := device.Open(device.Config{Backend: device.BackendSim, Clock: clk}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Close() })
	b := box.New(dev, box.Options{Clock: clk})
	b.Attach(eng)

	hc, stop := InProcess(New(Options{Engines: Only(eng), Box: b, Internal: true}))
	defer stop()
	v, err := NewClient(hc, "socket").Device(context.Background())
	if err != nil || len(v.Consents) != 1 || !v.Consents[0].Expired {
		t.Errorf("device after expiry: %+v %v, want the request marked expired", v.Consents, err)
	}
	cs, err := New(Options{Engines: Only(eng)}).Consents(context.Background())
	if err != nil || len(cs) != 1 || cs[0].Expired {
		t.Errorf("consents at the engine's time: %+v %v, want the request not expired yet", cs, err)
	}
}
