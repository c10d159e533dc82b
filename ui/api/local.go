package api

import (
	"context"
	"fmt"

	"github.com/questbox/questbox/device/box"
	"github.com/questbox/questbox/engine"
)

// The typed calls: what the faces that run inside the daemon (MQTT, the
// dashboard's websocket, /metrics, the daemon's printer) use instead of
// reaching into the engine. Each answers the same view that the matching
// route sends, computed by the same code; the routes that change things
// (stop, resume, approve, reject) are called through a Client over
// InProcess, so they go through the very handlers the CLI uses.

// Only is the Engines of one engine that stays open as long as the API is
// used: the daemon's faces, which start after its store opened and stop
// before it closes.
func Only(eng *engine.Engine) Engines { return onlyEngine{eng} }

type onlyEngine struct{ eng *engine.Engine }

func (o onlyEngine) Engine(context.Context, bool) (*engine.Engine, error) { return o.eng, nil }

// Quests is what GET /api/quests answers, without the quests' nodes.
func (s *Server) Quests(ctx context.Context) ([]Quest, error) {
	eng, err := s.opt.Engines.Engine(ctx, false)
	if err != nil {
		return nil, err
	}
	qs, err := eng.Quests()
	if err != nil {
		return nil, err
	}
	return questViews(qs), nil
}

func questViews(qs []*engine.Quest) []Quest {
	out := make([]Quest, len(qs))
	for i, q := range qs {
		out[i] = QuestView(q)
	}
	return out
}

// Quest is the quest id without its nodes (GET /api/quests/{id}'s
// "quest"). A quest that does not exist is an *Error with CodeNotFound.
func (s *Server) Quest(ctx context.Context, id string) (Quest, error) {
	eng, err := s.opt.Engines.Engine(ctx, false)
	if err != nil {
		return Quest{}, err
	}
	q, err := eng.Quest(id)
	if err != nil {
		return Quest{}, ErrorOf(err)
	}
	return QuestView(q), nil
}

// Consents is what GET /api/consents answers: every pending request,
// oldest first, each saying whether it has expired.
func (s *Server) Consents(ctx context.Context) ([]Consent, error) {
	eng, err := s.opt.Engines.Engine(ctx, false)
	if err != nil {
		return nil, err
	}
	return consentViews(eng)
}

// Summary is the box at a glance (MQTT's <base>/summary, /metrics). What
// runs and what waits is the engine's one count (engine.Activity), the
// box's own when the API has a box: the same function either way.
func (s *Server) Summary(ctx context.Context) (Summary, error) {
	eng, err := s.opt.Engines.Engine(ctx, false)
	if err != nil {
		return Summary{}, err
	}
	if b := s.opt.Box; b != nil {
		// The box adds the network and the fault the red LED shows; it
		// counts with engine.Activity too.
		st, err := b.Status()
		if err != nil {
			s.opt.Log.Warn("summary: could not read the box's status", "err", err)
		}
		qs, err := eng.Quests()
		if err != nil {
			return Summary{}, err
		}
		return SummaryView(qs, st), nil
	}
	act, err := eng.Activity(eng.Now())
	if err != nil {
		return Summary{}, err
	}
	st := box.Status{Online: true}
	st.State.ConsentsPending, st.State.AgentsRunning = len(act.Consents), act.AgentsRunning
	return SummaryView(act.Quests, st), nil
}

// RecordDeviceEvent records a device event (the broker going up or down)
// in the outbox.
func (s *Server) RecordDeviceEvent(ctx context.Context, d DeviceEvent) error {
	eng, err := s.opt.Engines.Engine(ctx, true)
	if err != nil {
		return err
	}
	return eng.RecordDeviceEvent(engine.DeviceEvent{What: d.What, Press: d.Press, Result: d.Result, Target: d.Target,
		Broker: d.Broker, Error: d.Error, Fault: d.Fault})
}

// What a device event says (DeviceEvent.What).
const (
	DevicePress       = engine.DevicePress
	DeviceNetworkUp   = engine.DeviceNetworkUp
	DeviceNetworkDown = engine.DeviceNetworkDown
	DeviceBrokerUp    = engine.DeviceBrokerUp
	DeviceBrokerDown  = engine.DeviceBrokerDown
)

// Outbox is a durable consumer of the event outbox (MQTT): it reads the
// events after its acknowledged seq, and acknowledges a seq only once its
// peer (the broker) has them. The engine prunes no event a consumer has
// not acknowledged, so an outage or a reboot loses nothing. Read and Ack
// may be called from one goroutine at a time; Notify's channel from any.
type Outbox struct {
	ob  *engine.Outbox
	eng *engine.Engine
}

// OpenOutbox opens the durable consumer name; one that does not exist yet
// starts at the newest event (turning MQTT on does not replay history).
func (s *Server) OpenOutbox(ctx context.Context, name string) (*Outbox, error) {
	eng, err := s.opt.Engines.Engine(ctx, true)
	if err != nil {
		return nil, err
	}
	ob, err := eng.OpenOutbox(name)
	if err != nil {
		return nil, err
	}
	return &Outbox{ob: ob, eng: eng}, nil
}

// Acked is the seq up to which every event was acknowledged.
func (o *Outbox) Acked() uint64 { return o.ob.Acked() }

// Ack records that every event up to seq was delivered: one commit, so
// call it for a batch.
func (o *Outbox) Ack(seq uint64) error { return o.ob.Ack(seq) }

// Notify receives a value after commits that added events (coalesced);
// Read after it fires. It never blocks the engine.
func (o *Outbox) Notify() <-chan struct{} { return o.ob.Notify() }

// Read returns up to limit events after since, oldest first. Events the
// outbox bound dropped are skipped (the seq has a gap), never an error.
func (o *Outbox) Read(since uint64, limit int) ([]Event, error) {
	evs, err := o.ob.Read(since, limit)
	if err != nil {
		return nil, fmt.Errorf("outbox %s: %w", o.ob.Name(), err)
	}
	out := EventViews(evs)
	if err := withConsents(o.eng, out); err != nil {
		return nil, fmt.Errorf("outbox %s: %w", o.ob.Name(), err)
	}
	return out, nil
}

// Close stops the wake-ups.
func (o *Outbox) Close() { o.ob.Close() }
