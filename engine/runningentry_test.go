package engine

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
)

// What a run in flight reads as is the same whether its running entry is
// compact (schema 8) or the JSON a schema 6 or 7 store holds: the node
// running with its run, the quest counting it, the runs listed and found,
// and, after a restart, the interrupted run's record in the runs bucket,
// byte for byte.
func TestJSONRunningEntriesStillRead(t *testing.T) {
	type seen struct {
		status      Status
		runs        []string
		counts      StatusCounts
		agent       int
		listed      []Run
		found       Run
		record      []byte
		runningLeft int
	}
	look := func(t *testing.T, toJSON bool) seen {
		h := newHarness(t, Options{})
		q := h.quest(func(s *QuestSpec) { s.Provider, s.Mode = ProviderExternal, ModeSolo })
		if _, err := h.e.Scan(q.ID, []string{"first idea", "second idea"}); err != nil {
			t.Fatal(err)
		}
		node, run := dispatchOne(t, h, q.ID)
		if err := h.store.update(func(tx *store.Tx) error {
			k := store.RunningKey(q.ID, node)
			v := tx.Running().Get(k)
			if !records.IsCompactRunning(v) || len(v) > 64 {
				t.Errorf("the dispatch wrote %d bytes %x, want a compact entry", len(v), v)
			}
			if !toJSON {
				return nil
			}
			var r Run
			if err := records.DecodeRunning(k, v, &r); err != nil {
				return err
			}
			return tx.Running().Put(k, records.AppendRun(nil, &r)) // as schema 7 wrote it
		}); err != nil {
			t.Fatal(err)
		}
		var s seen
		n := h.node(node)
		s.status, s.runs = n.Status, n.Runs
		got := h.questNow(q.ID)
		s.counts, s.agent = got.Counts, got.Counters.AgentRuns
		var err error
		if s.listed, err = h.e.QuestRuns(q.ID, ""); err != nil {
			t.Fatal(err)
		}
		if s.found, err = h.e.FindRun(run); err != nil {
			t.Fatal(err)
		}
		h.restart()
		_ = h.store.view(func(tx *store.Tx) error {
			s.record = bytes.Clone(tx.Runs().Get([]byte(run)))
			s.runningLeft = tx.Running().KeyN()
			return nil
		})
		return s
	}
	compact, old := look(t, false), look(t, true)
	if compact.status != Running || len(compact.listed) != 1 || compact.found.ID == "" || compact.found.Provider != "p" || len(compact.record) == 0 || compact.runningLeft != 0 {
		t.Fatalf("compact entry: %+v", compact)
	}
	if !reflect.DeepEqual(compact, old) {
		t.Errorf("a JSON entry reads otherwise than a compact one:\ncompact %+v\njson    %+v", compact, old)
	}
}
