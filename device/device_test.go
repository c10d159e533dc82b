package device_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/questbox/questbox/device"
	"github.com/questbox/questbox/internal/clock"
	"github.com/questbox/questbox/internal/clock/clocktest"
	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpiotest"
)

func noGPIO(t *testing.T) {
	t.Helper()
	if m, _ := filepath.Glob("/dev/gpiochip*"); len(m) > 0 {
		t.Skip("this machine has GPIO chips")
	}
}

func TestOpenPeriphWithoutGPIONamesThePin(t *testing.T) {
	noGPIO(t)
	_, err := device.Open(device.Config{Backend: "periph"}, nil)
	const want = "gpio: pin GPIO17 (green LED) not found: no GPIO character device on this machine?"
	if err == nil || err.Error() != want {
		t.Fatalf("Open(periph) error = %v, want %q", err, want)
	}
	if !errors.Is(err, device.ErrPinNotFound) {
		t.Errorf("error %v is not ErrPinNotFound", err)
	}
	// A custom pin is named too.
	_, err = device.Open(device.Config{Backend: "periph", Green: -1, Amber: 5}, nil)
	if err == nil || !strings.Contains(err.Error(), "pin GPIO5 (amber LED)") {
		t.Errorf("Open(periph, amber 5) error = %v, want it to name GPIO5", err)
	}
}

func TestOpenAutoFallsBackToSimWithAWarning(t *testing.T) {
	noGPIO(t)
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	d, err := device.Open(device.Config{}, log)
	if err != nil {
		t.Fatalf("Open(auto): %v", err)
	}
	defer d.Close()
	if d.Backend() != device.BackendSim {
		t.Errorf("backend = %q, want sim", d.Backend())
	}
	if got := logs.String(); !strings.Contains(got, "level=WARN") || !strings.Contains(got, "GPIO17 (green LED)") {
		t.Errorf("log = %q, want a warning naming GPIO17 (green LED)", got)
	}
}

func TestOpenConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  device.Config
		want string
	}{
		{device.Config{Backend: "gpio"}, `device: unknown GPIO backend "gpio" (want auto, sim or periph)`},
		{device.Config{Backend: "sim", ButtonPull: "sideways"}, `device: unknown button pull "sideways" (want up, down or none)`},
		{device.Config{Backend: "sim", Red: 23}, "device: BCM 23 is configured for both the red LED and the button"},
	} {
		if _, err := device.Open(tc.cfg, nil); err == nil || err.Error() != tc.want {
			t.Errorf("Open(%+v) error = %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

// simRig runs a sim device with a fake clock and a fake consent queue.
type simRig struct {
	clk     *clocktest.Clock
	dev     *device.Device
	q       *fakeQueue
	reports chan string
}

func newSimRig(t *testing.T, q *fakeQueue) *simRig {
	t.Helper()
	r := &simRig{clk: clocktest.NewClock(t0), q: q, reports: make(chan string, 16)}
	var err error
	r.dev, err = device.Open(device.Config{Backend: "sim", Clock: r.clk}, nil)
	if err != nil {
		t.Fatal(err)
	}
	startRun(t, r.dev, q, func(p device.Press, outcome string) { r.reports <- p.Kind.String() + ": " + outcome })
	return r
}

func startRun(t *testing.T, d *device.Device, q device.ConsentQueue, onPress func(device.Press, string)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx, q, onPress) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run returned %v, want context.Canceled", err)
		}
		if err := d.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
}

func (r *simRig) press(t *testing.T, hold time.Duration, times int) {
	t.Helper()
	if err := r.dev.Press(context.Background(), hold, times); err != nil {
		t.Fatalf("Press(%v, %d): %v", hold, times, err)
	}
}

func (r *simRig) want(t *testing.T, want ...string) {
	t.Helper()
	var got []string
	for range want {
		got = append(got, <-r.reports) // Press returns after Run handled them
	}
	select {
	case extra := <-r.reports:
		got = append(got, extra)
	default:
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("reports = %q, want %q", got, want)
	}
}

func TestSimPress(t *testing.T) {
	r := newSimRig(t, newFakeQueue(reqs()...))
	r.press(t, 2*time.Second, 1)
	r.want(t, "long: approved n1")
	r.press(t, 0, 3)
	r.want(t, "triple: rejected n2")
	r.press(t, 0, 1)
	r.want(t, "short: 1 pending")
	r.press(t, 0, 2)
	r.want(t, "short: 1 pending")
	r.press(t, 2*time.Second, 1)
	r.want(t, "long: approved n3")
	r.press(t, 2*time.Second, 1)
	r.want(t, "long: nothing pending")
	approved, rejected := r.q.decisions()
	if strings.Join(approved, ",") != "n1,n3" || strings.Join(rejected, ",") != "n2" {
		t.Errorf("approved %v rejected %v, want [n1 n3] and [n2]", approved, rejected)
	}
}

// A request that arrives between two gestures is seen by the second: each
// gesture acts on the queue as it was when that gesture started, never on a
// snapshot left over from the one before (Down is reported before the Long
// it starts, even when both fall due at once, as they do in a played press).
func TestSimPressSeesRequestsBetweenGestures(t *testing.T) {
	r := newSimRig(t, newFakeQueue(reqs()[1]))
	r.press(t, 2*time.Second, 1)
	r.want(t, "long: approved n1")
	r.q.add(reqs()[0])
	r.press(t, 0, 3)
	r.want(t, "triple: rejected n2")
	r.q.add(reqs()[2])
	r.press(t, 2*time.Second, 1)
	r.want(t, "long: approved n3")
}

func TestSimSnapshot(t *testing.T) {
	r := newSimRig(t, newFakeQueue())
	s := r.dev.Snapshot()
	if s.Backend != "sim" || s.Green.Pattern != "chase" || s.Green.Pin != 17 || s.Amber.Pin != 27 || s.Red.Pin != 22 {
		t.Errorf("snapshot while starting = %+v", s)
	}
	r.dev.SetState(device.State{ConsentsPending: 1, Fault: "store"})
	s = r.dev.Snapshot()
	want := device.Snapshot{Backend: "sim",
		Green: device.LEDView{Pin: 17, Pattern: "solid", On: true},
		Amber: device.LEDView{Pin: 27, Pattern: "blink 2Hz", On: true},
		Red:   device.LEDView{Pin: 22, Pattern: "blink 4Hz", On: true},
	}
	if s != want {
		t.Errorf("snapshot = %+v, want %+v", s, want)
	}
	r.clk.Advance(300 * ms)
	if s = r.dev.Snapshot(); s.Amber.On || !s.Red.On || !s.Green.On {
		t.Errorf("snapshot at 300ms = %+v, want amber dark, red and green lit", s)
	}
}

func TestPressRefusedOnHardware(t *testing.T) {
	d := newHWDevice(t)
	if err := d.dev.Press(context.Background(), 2*time.Second, 1); !errors.Is(err, device.ErrNotSimulated) {
		t.Errorf("Press on periph = %v, want ErrNotSimulated", err)
	}
}

func TestRunTwiceIsBusy(t *testing.T) {
	r := newSimRig(t, newFakeQueue())
	r.press(t, 0, 1) // Run is up
	r.want(t, "short: nothing pending")
	if err := r.dev.Run(context.Background(), nil, nil); !errors.Is(err, device.ErrBusy) {
		t.Errorf("second Run = %v, want ErrBusy", err)
	}
}

// hwRig is a Device built as the periph backend would, on gpiotest pins.
type hwRig struct {
	clk     *clocktest.Clock
	dev     *device.Device
	button  *gpiotest.Pin
	leds    [3]*gpiotest.Pin
	edges   chan struct{}
	reports chan string
}

func newHWDevice(t *testing.T) *hwRig {
	t.Helper()
	r := &hwRig{
		clk:     clocktest.NewClock(t0),
		button:  &gpiotest.Pin{N: "GPIO23", Num: 23, EdgesChan: make(chan gpio.Level)},
		edges:   make(chan struct{}, 64),
		reports: make(chan string, 16),
	}
	for i, n := range []int{17, 27, 22} {
		r.leds[i] = &gpiotest.Pin{N: "GPIO", Num: n}
	}
	var err error
	r.dev, err = device.NewTestDevice(device.Config{Clock: r.clk}, nil, r.leds[0], r.leds[1], r.leds[2], r.button)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *hwRig) run(t *testing.T, q device.ConsentQueue) {
	t.Helper()
	b := device.ButtonOf(r.dev)
	b.Trace(func() { r.edges <- struct{}{} })
	b.SetPoll(5 * ms)
	started := make(chan struct{})
	b.OnStart(func() { close(started) })
	startRun(t, r.dev, q, func(p device.Press, outcome string) { r.reports <- p.Kind.String() + ": " + outcome })
	<-started
}

func (r *hwRig) edge(l gpio.Level) {
	r.button.EdgesChan <- l
	<-r.edges
}

func (r *hwRig) advance(d time.Duration) {
	r.clk.Advance(d)
	device.ButtonOf(r.dev).Sync()
}

// What the button promises (docs/design.md, "The consent button"): a
// chattering press then a 2 s hold approves exactly once, and the press is
// echoed on green.
func TestChatterThenHoldApprovesOnce(t *testing.T) {
	q := newFakeQueue(reqs()...)
	r := newHWDevice(t)
	r.dev.SetState(device.State{ConsentsPending: 3})
	r.run(t, q)
	for i := range 15 {
		r.edge(gpio.Level(i%2 == 1)) // Low = pressed first; ends Low
		r.advance(3 * ms)
	}
	r.advance(2 * time.Second)
	// Chatter on release too, then a long wait.
	for i := range 15 {
		r.edge(gpio.Level(i%2 == 0))
		r.advance(2 * ms)
	}
	r.advance(10 * time.Second)
	if got := <-r.reports; got != "long: approved n1" {
		t.Errorf("report = %q, want %q", got, "long: approved n1")
	}
	select {
	case extra := <-r.reports:
		t.Errorf("extra report %q", extra)
	default:
	}
	if approved, _ := q.decisions(); len(approved) != 1 {
		t.Errorf("approved %v, want exactly one", approved)
	}
}

func TestEchoOnPress(t *testing.T) {
	r := newHWDevice(t)
	r.dev.SetState(device.State{})
	r.run(t, newFakeQueue())
	drv := device.DriverOf(r.dev)
	drv.Sync()
	if !bool(r.leds[0].Read()) {
		t.Fatal("green not lit when idle")
	}
	r.edge(gpio.Low)
	r.advance(50 * ms) // the press settles: echo starts now
	drv.Sync()
	r.clk.Advance(100 * ms)
	drv.Sync()
	if bool(r.leds[0].Read()) {
		t.Errorf("green lit 100 ms into the echo, want the wink")
	}
	r.clk.Advance(50 * ms)
	drv.Sync()
	if !bool(r.leds[0].Read()) {
		t.Errorf("green dark after the echo")
	}
}

func TestSelftestSim(t *testing.T) {
	clk := clocktest.NewClock(t0)
	dev, err := device.Open(device.Config{Backend: "sim", Clock: clk, Amber: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	dev.SetState(device.State{}) // solid/off: only Selftest's own timers run
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- device.Selftest(context.Background(), dev, &out) }()
	for range 2 { // green, red (amber not fitted)
		clk.BlockUntil(1)
		clk.Advance(device.SelftestLEDTime)
	}
	clk.BlockUntil(1) // waiting for a press
	if err := dev.Press(context.Background(), 2*time.Second, 1); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Selftest: %v\n%s", err, out.String())
	}
	want := `backend sim: green LED GPIO17, amber LED not fitted, red LED GPIO22, button GPIO23
green LED on GPIO17 (BCM 17): lit for 1s
amber LED: not fitted
red LED on GPIO22 (BCM 22): lit for 1s
button on GPIO23 (BCM 23): press it within 30s (short, hold 2s for long, or three quick presses)
button: saw a long press (1 press(es), last held 2s)
`
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}
	if s := dev.Snapshot(); s.Green.Pattern != "solid" {
		t.Errorf("after selftest green shows %q, want the state pattern back", s.Green.Pattern)
	}
}

// TestSelftestNoButton: with no button fitted, Selftest lights the LEDs
// and passes without waiting for a press, and the device says it has no
// button (selftest's closing line claims no press then).
func TestSelftestNoButton(t *testing.T) {
	clk := clocktest.NewClock(t0)
	dev, err := device.Open(device.Config{Backend: "sim", Clock: clk, Button: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	if dev.HasButton() {
		t.Errorf("HasButton with gpio.button = -1")
	}
	dev.SetState(device.State{})
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- device.Selftest(context.Background(), dev, &out) }()
	for range 3 {
		clk.BlockUntil(1)
		clk.Advance(device.SelftestLEDTime)
	}
	if err := <-done; err != nil {
		t.Fatalf("Selftest: %v\n%s", err, out.String())
	}
	if !strings.HasSuffix(out.String(), "button: not fitted\n") {
		t.Errorf("output does not end in the missing button:\n%s", out.String())
	}
	fitted, err := device.Open(device.Config{Backend: "sim", Clock: clk}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fitted.Close()
	if !fitted.HasButton() {
		t.Errorf("no button with the default gpio.button")
	}
}

func TestSelftestNoPress(t *testing.T) {
	clk := clocktest.NewClock(t0)
	dev, err := device.Open(device.Config{Backend: "sim", Clock: clk}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	dev.SetState(device.State{})
	done := make(chan error, 1)
	go func() { done <- device.Selftest(context.Background(), dev, io.Discard) }()
	for range 4 {
		clk.BlockUntil(1)
		clk.Advance(device.SelftestPressWait)
	}
	if err := <-done; !errors.Is(err, device.ErrNoPress) {
		t.Errorf("Selftest = %v, want ErrNoPress", err)
	}
}

// countingClock counts the timers created on a fake clock.
type countingClock struct {
	*clocktest.Clock
	mu      sync.Mutex
	created int
}

func (c *countingClock) NewTimer(d time.Duration) clock.Timer {
	c.mu.Lock()
	c.created++
	c.mu.Unlock()
	return c.Clock.NewTimer(d)
}

func (c *countingClock) timers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.created
}

// An idle device arms no timer at all, not even for an instant: tests that
// wait for "one timer armed" (Selftest's) would otherwise advance the clock
// before the timer they mean exists, and hang.
func TestIdleRunArmsNoTimer(t *testing.T) {
	clk := &countingClock{Clock: clocktest.NewClock(t0)}
	dev, err := device.Open(device.Config{Backend: "sim", Clock: clk}, nil)
	if err != nil {
		t.Fatal(err)
	}
	dev.SetState(device.State{}) // solid green: nothing to time
	startRun(t, dev, newFakeQueue(), nil)
	device.ButtonOf(dev).Sync()
	device.DriverOf(dev).Sync()
	if n := clk.timers(); n != 0 {
		t.Errorf("idle Run created %d timers, want 0", n)
	}
}
