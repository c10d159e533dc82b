package box

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/questbox/questbox/device"
	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/engine/planttest"
	"github.com/questbox/questbox/internal/clock/clocktest"
)

func newBox(t *testing.T) (*Box, *engine.Engine) {
	t.Helper()
	dev, err := device.Open(device.Config{Backend: device.BackendSim}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Close() })
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
	return New(dev, Options{}), eng
}

func pass(t *testing.T, eng *engine.Engine, quest, node string) {
	t.Helper()
	raw, _ := json.Marshal(map[string]any{"verdict": "dead", "evidence": "this direction is a dead end, checked twice.", "citations": []any{}, "new_directions": []string{}})
	if _, err := eng.Submit(context.Background(), quest, node, raw); err != nil {
		t.Fatal(err)
	}
}

func quest(t *testing.T, eng *engine.Engine, edit func(*engine.QuestSpec)) *engine.Quest {
	t.Helper()
	s := eng.NewQuestSpec("q", "d")
	s.Provider = engine.ProviderExternal
	if edit != nil {
		edit(&s)
	}
	q, err := eng.NewQuest(s)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestState: what the LEDs report follows the engine's quests and consent
// queue, and what is reported to the box.
func TestState(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, b *Box, eng *engine.Engine)
		want  device.State
	}{
		{"not attached: starting", func(*testing.T, *Box, *engine.Engine) {}, device.State{Starting: true}},
		{"empty", func(t *testing.T, b *Box, eng *engine.Engine) { b.Attach(eng); b.SetReady() }, device.State{}},
		{"halted", func(t *testing.T, b *Box, eng *engine.Engine) {
			b.Halt(errors.New("corrupt"))
		}, device.State{Halted: true, Fault: "store: corrupt"}},
		{"attach ends a halt", func(t *testing.T, b *Box, eng *engine.Engine) {
			b.Halt(errors.New("corrupt"))
			b.Attach(eng)
			b.SetReady()
		}, device.State{}},
		{"consent pending", func(t *testing.T, b *Box, eng *engine.Engine) {
			b.Attach(eng)
			b.SetReady()
			q := quest(t, eng, func(s *engine.QuestSpec) { s.Checkpoints = []string{engine.RoleScout} })
			res, _ := eng.Scan(q.ID, []string{"h1"})
			pass(t, eng, q.ID, res.Added[0])
		}, device.State{ConsentsPending: 1}},
		{"stopped by owner is not attention", func(t *testing.T, b *Box, eng *engine.Engine) {
			b.Attach(eng)
			b.SetReady()
			eng.StopQuest(quest(t, eng, nil).ID, engine.SourceCLI)
		}, device.State{}},
		{"terminated needs attention", func(t *testing.T, b *Box, eng *engine.Engine) {
			b.Attach(eng)
			b.SetReady()
			q := quest(t, eng, func(s *engine.QuestSpec) { s.Limits.MaxAgentRuns = 0 })
			eng.Scan(q.ID, []string{"h"})
			if _, err := eng.Tick(context.Background()); err != nil {
				t.Fatal(err)
			}
		}, device.State{QuestsTerminated: 1}},
		{"a blocked Team shows like an exhausted quest; council members run", func(t *testing.T, b *Box, eng *engine.Engine) {
			b.Attach(eng)
			b.SetReady()
			if _, err := planttest.V32(eng, quest(t, eng, nil).ID); err != nil {
				t.Fatal(err)
			}
		}, device.State{TeamsBlocked: 1, AgentsRunning: 1}},
		{"failed tick is a fault", func(t *testing.T, b *Box, eng *engine.Engine) {
			b.Attach(eng)
			b.SetReady()
			b.Ticked(errors.New("disk full"))
		}, device.State{Fault: "tick: disk full"}},
		{"a good tick clears it", func(t *testing.T, b *Box, eng *engine.Engine) {
			b.Attach(eng)
			b.SetReady()
			b.Ticked(errors.New("disk full"))
			b.Ticked(nil)
		}, device.State{}},
		{"offline", func(t *testing.T, b *Box, eng *engine.Engine) {
			b.Attach(eng)
			b.SetReady()
			b.SetOnline(false)
		}, device.State{Offline: true}},
		{"broker down is no fault", func(t *testing.T, b *Box, eng *engine.Engine) {
			b.Attach(eng)
			b.SetReady()
			b.SetBroker(Broker{Configured: true, Error: "connection refused"})
		}, device.State{}},
		{"a rolled-back update is a fault until cleared", func(t *testing.T, b *Box, eng *engine.Engine) {
			b.Attach(eng)
			b.SetReady()
			b.Notice("update rolled back")
			b.Ticked(nil)
		}, device.State{Fault: "update rolled back"}},
		{"a tick's fault wins over it", func(t *testing.T, b *Box, eng *engine.Engine) {
			b.Attach(eng)
			b.SetReady()
			b.Notice("update rolled back")
			b.Ticked(errors.New("disk full"))
		}, device.State{Fault: "tick: disk full"}},
		{"cleared", func(t *testing.T, b *Box, eng *engine.Engine) {
			b.Attach(eng)
			b.SetReady()
			b.Notice("update rolled back")
			b.Notice("")
		}, device.State{}},
		{"broker auth is a fault", func(t *testing.T, b *Box, eng *engine.Engine) {
			b.Attach(eng)
			b.SetReady()
			b.SetBroker(Broker{Configured: true, Error: "not authorized", Fault: true})
		}, device.State{Fault: "broker: not authorized"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, eng := newBox(t)
			b.started = now.Add(-BootChase) // the chase is over
			tc.setup(t, b, eng)
			got, _, _ := b.state(now)
			if got != tc.want {
				t.Errorf("state = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestExpiredConsentsLeaveTheQueue: a request past consent_expiry is not
// offered to the button, and update sends it back to pending through the
// engine; the API's device view marks it expired
// (TestDeviceMarksExpiredConsents in ui/api).
func TestExpiredConsentsLeaveTheQueue(t *testing.T) {
	b, eng := newBox(t)
	b.Attach(eng)
	q := quest(t, eng, func(s *engine.QuestSpec) { s.Checkpoints = []string{engine.RoleScout} })
	res, _ := eng.Scan(q.ID, []string{"h1"})
	pass(t, eng, q.ID, res.Added[0])
	if p, _ := (consentQueue{b}).Pending(); len(p) != 1 {
		t.Fatalf("pending before expiry: %v, want 1", p)
	}
	b.clock = clocktest.NewClock(time.Now().Add(2 * time.Hour)) // later
	if p, _ := (consentQueue{b}).Pending(); len(p) != 0 {
		t.Errorf("pending after expiry: %v, want none", p)
	}
}

func TestPressNeedsTheSimulator(t *testing.T) {
	b, _ := newBox(t)
	if _, err := b.Press(context.Background(), 0, 0); !errors.Is(err, engine.ErrInvalid) {
		t.Errorf("times 0: %v, want ErrInvalid", err)
	}
	if _, err := b.Press(context.Background(), 2*MaxPressHold, 1); !errors.Is(err, engine.ErrInvalid) {
		t.Errorf("hold too long: %v, want ErrInvalid", err)
	}
}

// TestBlockedTeamLightsRed: a quest with a team_blocked Team lights the
// red LED solid, as an exhausted quest does, and its running council
// member blinks green (docs/design.md, "The LEDs").
func TestBlockedTeamLightsRed(t *testing.T) {
	b, eng := newBox(t)
	b.started = time.Now().Add(-BootChase)
	b.Attach(eng)
	b.SetReady()
	st, err := b.Status()
	if err != nil {
		t.Fatal(err)
	}
	if st.Snapshot.Red.Pattern != device.PatternOff.String() {
		t.Fatalf("red is %q before any Team, want off", st.Snapshot.Red.Pattern)
	}
	if _, err := planttest.V32(eng, quest(t, eng, nil).ID); err != nil {
		t.Fatal(err)
	}
	if st, err = b.Status(); err != nil {
		t.Fatal(err)
	}
	if st.Snapshot.Red.Pattern != device.PatternSolid.String() || st.Snapshot.Green.Pattern != device.PatternRunning.String() {
		t.Errorf("red %q, green %q; want red %q (a blocked Team), green %q (a member runs)", st.Snapshot.Red.Pattern,
			st.Snapshot.Green.Pattern, device.PatternSolid, device.PatternRunning)
	}
}
