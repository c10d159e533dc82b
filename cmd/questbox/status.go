package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/questbox/questbox/engine"
)

// statusCmd is `status QUEST`: counts per status and what is left of the
// budgets.
type statusCmd struct{}

func (c *statusCmd) flags(*flag.FlagSet) {}

// statusView is the JSON of `status`.
type statusView struct {
	Quest     string                `json:"quest"`
	Name      string                `json:"name"`
	Status    engine.QuestStatus    `json:"status"`
	Reason    string                `json:"reason,omitempty"`
	Counts    map[engine.Status]int `json:"counts"`
	Total     int                   `json:"total"`
	Running   string                `json:"running,omitempty"`
	Used      engine.Counters       `json:"used"`
	Limits    engine.Limits         `json:"limits"`
	Remaining remaining             `json:"remaining"`
}

type remaining struct {
	AgentRuns int `json:"agent_runs"`
	Tokens    int `json:"tokens"`
	// WallClock is in seconds; WallClockText is the same for people
	// ("23h59m12s").
	WallClock     int64  `json:"wall_clock_seconds"`
	WallClockText string `json:"wall_clock"`
}

func (c *statusCmd) run(ctx context.Context, e *env, args []string) error {
	if err := wantArgs("status", args, "QUEST"); err != nil {
		return err
	}
	q, err := e.eng.Quest(args[0])
	if err != nil {
		return err
	}
	v := statusView{Quest: q.ID, Name: q.Name, Status: q.Status, Reason: q.Reason, Counts: map[engine.Status]int{},
		Running: q.Running, Used: q.Counters, Limits: q.Limits}
	for _, s := range engine.Statuses {
		v.Counts[s] = q.Counts[s]
		v.Total += q.Counts[s]
	}
	l, u := q.Limits, q.Counters
	wall := max(0, l.WallClock-u.WallUsed)
	v.Remaining = remaining{AgentRuns: max(0, l.MaxAgentRuns-u.AgentRuns), Tokens: max(0, l.TokenBudget-u.Tokens),
		WallClock: int64(wall / time.Second), WallClockText: dur(wall)}
	if e.json {
		return printJSON(e.stdout, v)
	}
	w := e.stdout
	fmt.Fprintf(w, "quest %s %q: %s", q.ID, q.Name, q.Status)
	if q.Reason != "" {
		fmt.Fprintf(w, " (%s)", q.Reason)
	}
	fmt.Fprintln(w)
	var parts []string
	for _, s := range engine.Statuses {
		if n := q.Counts[s]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", s, n))
		}
	}
	if len(parts) == 0 {
		parts = []string{"none"}
	}
	fmt.Fprintf(w, "nodes: %d (%s)\n", v.Total, strings.Join(parts, ", "))
	if q.Running != "" {
		fmt.Fprintf(w, "running: %s\n", q.Running)
	}
	fmt.Fprintf(w, "remaining: %d of %d agent runs, %d of %d tokens, %s of %s wall clock\n",
		v.Remaining.AgentRuns, l.MaxAgentRuns, v.Remaining.Tokens, l.TokenBudget, v.Remaining.WallClockText, dur(l.WallClock))
	return nil
}
