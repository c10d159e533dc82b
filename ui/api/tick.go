package api

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"github.com/questbox/questbox/engine"
)

// tickEventsMax bounds the events a tick's answer carries, as it always
// has; tickEventsPage is how many it reads from the store at a time, as
// many as a subscriber holds (engine's subscriptionPage): a page of 256 of
// a busy tick's verdicts, with their facts, was live at the end of the
// tick beside the answer's JSON.
const (
	tickEventsMax  = 100000
	tickEventsPage = 64
)

// tick runs one round and waits for the runs it started (and any other
// runs in flight); if the client goes away first it returns without them.
//
// Its answer is a Tick whose events are written as they are read, a page
// at a time: a tick that records 1,000 results has thousands of events,
// and the whole answer built and indented in memory cost megabytes at the
// busy cycle's peak. The bytes are those of writeJSON(Tick{...}). The
// events are those after the tick began up to the newest when its runs
// ended, as one read gave before; should the store fail or prune them
// between two pages, the answer is cut short (its JSON unterminated, so
// no client takes it for whole) and the daemon logs why.
func (s *Server) tick(w http.ResponseWriter, r *http.Request, eng *engine.Engine) error {
	since := eng.LastSeq()
	rep, err := eng.Tick(r.Context())
	if err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { eng.Wait(); close(done) }()
	select {
	case <-done:
	case <-r.Context().Done():
		return r.Context().Err()
	}
	upto := eng.LastSeq()
	// The first page is read before the status is sent, so that an error
	// there (events already pruned) is still an error answer.
	page, err := eng.Events(since, min(tickEventsPage, tickEventsMax))
	if err != nil {
		return err
	}
	next := func() ([]engine.Event, error) {
		if page != nil {
			p := page
			page = nil
			return p, nil
		}
		return eng.Events(since, tickEventsPage)
	}
	head := Tick{Dispatched: nonNil(rep.Dispatched), Resumed: nonNil(rep.Resumed), Finished: nonNil(rep.Finished),
		Terminated: nonNil(rep.Terminated)}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	err = writeTick(w, head, func(yield func(Event) error) error {
		for n := 0; n < tickEventsMax; {
			evs, err := next()
			if err != nil {
				return err
			}
			for _, ev := range evs {
				if ev.Seq > upto || n == tickEventsMax {
					return nil
				}
				since = ev.Seq
				n++
				if err := yield(EventView(ev)); err != nil {
					return err
				}
			}
			if len(evs) < tickEventsPage {
				return nil
			}
		}
		return nil
	})
	if err != nil {
		s.opt.Log.Warn("tick answer cut short", "err", err)
	}
	return nil
}

// writeTick writes head with the events each gives, as
// writeJSON(w, 200, head with those events) would, without holding them:
// the same fields, indentation and escaping, event by event.
func writeTick(w io.Writer, head Tick, each func(yield func(Event) error) error) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("{\n")
	for _, f := range []struct {
		name string
		ids  []string
	}{{"dispatched", head.Dispatched}, {"resumed", head.Resumed}, {"finished", head.Finished}, {"terminated", head.Terminated}} {
		b, err := json.MarshalIndent(f.ids, "  ", "  ")
		if err != nil {
			return err
		}
		bw.WriteString(`  "` + f.name + `": `)
		bw.Write(b)
		bw.WriteString(",\n")
	}
	bw.WriteString(`  "events": [`)
	// One encoder for every event: its indented bytes are those of
	// json.MarshalIndent, in a buffer it reuses (MarshalIndent allocated
	// an event's JSON twice, for thousands of events a busy tick).
	var js bytes.Buffer
	enc := json.NewEncoder(&js)
	enc.SetIndent("    ", "  ")
	n := 0
	err := each(func(ev Event) error {
		js.Reset()
		if err := enc.Encode(ev); err != nil {
			return err
		}
		if n > 0 {
			bw.WriteString(",")
		}
		bw.WriteString("\n    ")
		bw.Write(bytes.TrimSuffix(js.Bytes(), []byte("\n")))
		n++
		return nil
	})
	if err != nil {
		bw.Flush()
		return err
	}
	if n > 0 {
		bw.WriteString("\n  ")
	}
	bw.WriteString("]\n}\n")
	return bw.Flush()
}
