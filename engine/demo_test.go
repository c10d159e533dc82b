package engine

import (
	"testing"

	"github.com/questbox/questbox/engine/agent"
)

func TestDemoQuestConverges(t *testing.T) {
	h := newHarness(t, Options{Providers: map[string]Provider{"demo": agent.Demo{}}, MaxParallel: 2})
	q := h.quest(func(s *QuestSpec) {
		s.Provider = "demo"
		s.Direction = "find the most accurate free OCR for Japanese invoices"
	})
	var outcomes = map[string]bool{}
	sub := h.e.Subscribe(0)
	defer sub.Close()
	for i := 0; i < 40 && h.questNow(q.ID).Status == QuestActive; i++ {
		h.tick()
	}
	qq := h.questNow(q.ID)
	if qq.Status != QuestDone {
		ns, _ := h.e.Nodes(q.ID)
		t.Fatalf("demo quest did not finish in 40 ticks: %s %q\n%s", qq.Status, qq.Reason, describeNodes(ns))
	}
	evs, _ := h.e.Events(0, 10000)
	for _, ev := range evs {
		if ev.Kind == KindVerdict {
			outcomes[ev.Outcome] = true
		}
	}
	by := h.nodesByStatus(q.ID)
	if !outcomes["PASS"] || !outcomes["FAIL"] || len(by[Growing]) == 0 || len(by[Aborted]) == 0 {
		t.Errorf("the demo must show PASS, FAIL, growing and aborted nodes: outcomes %v, nodes %v", outcomes, by)
	}
}
