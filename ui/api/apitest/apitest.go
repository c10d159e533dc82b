// Package apitest helps tests read what the API's faces publish.
package apitest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/questbox/questbox/ui/api"
	"github.com/questbox/questbox/ui/mqtt/mosquittotest"
)

// EventSeqs decodes the event messages of msgs (topics .../event/<kind>),
// in arrival order: their seqs, and how many there are of each kind. A
// payload that is not an api.Event, or whose kind is not its topic's,
// fails t.
func EventSeqs(t testing.TB, msgs []mosquittotest.Message) (seqs []uint64, kinds map[string]int) {
	t.Helper()
	kinds = map[string]int{}
	for _, m := range msgs {
		if !strings.Contains(m.Topic, "/event/") {
			continue
		}
		var ev api.Event
		if err := json.Unmarshal([]byte(m.Payload), &ev); err != nil {
			t.Fatalf("event on %s is not api.Event JSON: %v: %s", m.Topic, err, m.Payload)
		}
		if !strings.HasSuffix(m.Topic, "/event/"+string(ev.Kind)) {
			t.Fatalf("event of kind %s on topic %s", ev.Kind, m.Topic)
		}
		seqs = append(seqs, ev.Seq)
		kinds[string(ev.Kind)]++
	}
	return seqs, kinds
}
