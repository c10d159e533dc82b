package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/questbox/questbox/internal/config"
	"github.com/questbox/questbox/ui/api"
)

// questNewCmd is `quest new NAME --direction TEXT ...`.
type questNewCmd struct {
	fs          *flag.FlagSet
	direction   string
	mode        string
	roles       string
	provider    string
	gate        string
	maxRuns     int
	maxTries    int
	wallClock   time.Duration
	tokens      int
	checkpoints listFlag
	// roleProviders are --role-provider ROLE=PROVIDER, egress --egress
	// V,V (both repeatable).
	roleProviders listFlag
	egress        listFlag
	project       string
	// Councils (docs/design.md, "Councils and Teams"): see api.Presets.
	preset          string
	council         string
	councilProvider string
	gates           string
	teams           teamFlags
}

// presetHelp is --preset's help, from the one table of presets,
// api.Presets (the dashboard's form offers the same).
func presetHelp() string {
	var b strings.Builder
	b.WriteString("a named combination of flags: ")
	for i, p := range api.Presets {
		switch {
		case i > 0 && i == len(api.Presets)-1:
			b.WriteString(" or ")
		case i > 0:
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s (= %s)", p.Name, p.Help)
	}
	return b.String()
}

func (c *questNewCmd) flags(fs *flag.FlagSet) {
	c.fs = fs
	fs.StringVar(&c.direction, "direction", "", "what the quest explores (required)")
	fs.StringVar(&c.mode, "mode", "", "team or solo")
	fs.StringVar(&c.roles, "roles", "", "comma-separated roles")
	fs.StringVar(&c.provider, "provider", "", "agent provider: demo, external or a configured one")
	fs.StringVar(&c.gate, "gate", "", "gate profile: default or a configured [gates.NAME]")
	fs.IntVar(&c.maxRuns, "max-agent-runs", 0, "agent runs budget")
	fs.IntVar(&c.maxTries, "max-tries", 0, "FAILs before a node is exhausted")
	fs.DurationVar(&c.wallClock, "wall-clock", 0, "wall-clock budget, e.g. 24h")
	fs.IntVar(&c.tokens, "token-budget", 0, "token budget")
	fs.Var(&c.checkpoints, "checkpoint", "a role whose passed nodes need human consent (repeatable)")
	fs.StringVar(&c.project, "project", "", "directory its command agents run in (the daemon's user must be able to read, write and enter it)")
	fs.StringVar(&c.preset, "preset", "", presetHelp())
	fs.StringVar(&c.council, "council", "", "owner turns are a council: reviewer:R,judge:J (providers from the config's [council]; team mode only)")
	fs.StringVar(&c.gates, "gates", "", "phases closed by a council gate, e.g. scout,poc (needs --council; --checkpoint scout_gate puts the button there)")
	fs.StringVar(&c.councilProvider, "council-provider", "", "the provider of every member of a kind, instead of [council]: reviewer=P,judge=P")
	fs.Var(&c.roleProviders, "role-provider", "ROLE=PROVIDER: the provider of that role's nodes, over the config's [roles.ROLE] (repeatable)")
	fs.Var(&c.egress, "egress", "comma-separated vendors the quest may send its material to (default: its provider's vendor and local)")
	c.teams.flags(fs)
}

// defaults implements defaulter: what a new quest gets for each flag
// left out, from the config's [defaults].
func (c *questNewCmd) defaults(cfg *config.Config) map[string]string {
	d := cfg.Defaults
	return map[string]string{
		"mode": d.Mode, "roles": strings.Join(d.Roles, ","), "provider": d.Provider, "gate": d.Gate,
		"max-agent-runs": strconv.Itoa(d.MaxAgentRuns), "max-tries": strconv.Itoa(d.MaxTries),
		"wall-clock": d.WallClock.Duration.String(), "token-budget": strconv.Itoa(d.TokenBudget),
		"checkpoint": strings.Join(d.Checkpoints, ","),
	}
}

func (c *questNewCmd) run(ctx context.Context, e *env, args []string) error {
	if len(args) != 1 {
		return usagef("quest new needs exactly one NAME (quote it if it has spaces), got %d argument(s)", len(args))
	}
	if strings.TrimSpace(c.direction) == "" {
		return usagef("quest new needs --direction TEXT: the vague direction the quest explores")
	}
	set, err := c.setFlags()
	if err != nil {
		return err
	}
	req := api.NewQuest{Name: args[0], Direction: c.direction}
	if err := c.councilRequest(set, &req); err != nil {
		return err
	}
	if err := c.teams.apply(set, &req); err != nil {
		return err
	}
	c.budgetRequest(set, &req)
	if err := c.providerRequest(set, &req); err != nil {
		return err
	}
	q, err := e.door.api(ctx).NewQuest(ctx, req)
	if err != nil {
		return err
	}
	if e.json {
		return printJSON(e.stdout, q)
	}
	fmt.Fprintln(e.stdout, q.ID)
	hint := "the daemon dispatches its first node at the next tick"
	if q.Provider == api.ProviderExternal {
		hint = fmt.Sprintf("seed it with `questbox scan %s HYPOTHESIS...`, then `questbox next %s`", q.ID, q.ID)
	}
	if q.EgressConsent != "" {
		hint = fmt.Sprintf("nothing of it leaves the box until you consent to its egress (%s): a long press of the button, or the dashboard (node %s); then %s",
			strings.Join(q.Egress, ","), q.EgressConsent, hint)
	}
	fmt.Fprintf(e.stderr, "created quest %s %q (%s, provider %s, gate %s); %s\n", q.ID, q.Name, q.Mode, q.Provider, q.Gate, hint)
	return nil
}

// setFlags returns the flags the command line set, after --preset set
// the ones it names that the command line left out.
func (c *questNewCmd) setFlags() (map[string]bool, error) {
	set := map[string]bool{}
	c.fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !set["preset"] {
		return set, nil
	}
	p, ok := api.PresetNamed(c.preset)
	if !ok {
		return nil, usagef("unknown --preset %q (known: %s)", c.preset, strings.Join(api.PresetNames(), ", "))
	}
	for name, val := range p.Flags {
		if !set[name] {
			if err := c.fs.Set(name, val); err != nil {
				return nil, fmt.Errorf("BUG: preset %s: %w", c.preset, err)
			}
			set[name] = true
		}
	}
	return set, nil
}

// councilRequest puts --council, --gates and --council-provider in req.
func (c *questNewCmd) councilRequest(set map[string]bool, req *api.NewQuest) error {
	if set["council"] {
		req.Council = &c.council
	}
	if set["gates"] {
		req.Gates = commaList(c.gates)
	}
	if !set["council-provider"] {
		return nil
	}
	req.CouncilProviders = map[string]string{}
	for part := range strings.SplitSeq(c.councilProvider, ",") {
		kind, prov, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || strings.TrimSpace(kind) == "" || strings.TrimSpace(prov) == "" {
			return usagef("--council-provider %q: want KIND=PROVIDER,... (e.g. reviewer=gemini,judge=codex)", c.councilProvider)
		}
		req.CouncilProviders[strings.TrimSpace(kind)] = strings.TrimSpace(prov)
	}
	return nil
}

// budgetRequest puts the flags the command line set of the quest's shape
// and budgets (mode, roles, gate, runs, tries, wall clock, tokens,
// checkpoints, project) in req; the ones left out take the defaults.
func (c *questNewCmd) budgetRequest(set map[string]bool, req *api.NewQuest) {
	if set["mode"] {
		req.Mode = &c.mode
	}
	if set["roles"] {
		req.Roles = commaList(c.roles)
	}
	if set["gate"] {
		req.Gate = &c.gate
	}
	if set["max-agent-runs"] {
		req.MaxAgentRuns = &c.maxRuns
	}
	if set["max-tries"] {
		req.MaxTries = &c.maxTries
	}
	if set["wall-clock"] {
		d := c.wallClock.String()
		req.WallClock = &d
	}
	if set["token-budget"] {
		req.TokenBudget = &c.tokens
	}
	if set["checkpoint"] {
		req.Checkpoints = c.checkpoints
	}
	if set["project"] {
		// Relative to where the command is typed, not to the daemon.
		p := c.project
		if abs, err := filepath.Abs(p); err == nil && p != "" {
			p = abs
		}
		req.Project = &p
	}
}

// providerRequest puts --provider, --role-provider and --egress in req.
func (c *questNewCmd) providerRequest(set map[string]bool, req *api.NewQuest) error {
	if set["provider"] {
		req.Provider = &c.provider
	}
	for _, rp := range c.roleProviders {
		role, prov, ok := strings.Cut(rp, "=")
		role, prov = strings.TrimSpace(role), strings.TrimSpace(prov)
		if !ok || role == "" || prov == "" {
			return usagef("quest new: --role-provider %q is not ROLE=PROVIDER (e.g. --role-provider owner=claude)", rp)
		}
		if _, dup := req.RoleProviders[role]; dup {
			return usagef("quest new: --role-provider names role %q twice", role)
		}
		if req.RoleProviders == nil {
			req.RoleProviders = map[string]string{}
		}
		req.RoleProviders[role] = prov
	}
	for _, list := range c.egress {
		req.Egress = append(req.Egress, commaList(list)...)
	}
	if set["egress"] && len(req.Egress) == 0 {
		return usagef("quest new: --egress is empty; name the vendors the quest may use, e.g. --egress local")
	}
	return nil
}

// commaList is the non-empty, trimmed items of a comma-separated flag:
// never nil, so a flag set to "" still says "none".
func commaList(s string) []string {
	out := []string{}
	for v := range strings.SplitSeq(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// questListCmd is `quest list`.
type questListCmd struct{}

func (c *questListCmd) flags(*flag.FlagSet) {}

func (c *questListCmd) run(ctx context.Context, e *env, args []string) error {
	if err := wantArgs("quest list", args); err != nil {
		return err
	}
	qs, err := e.door.api(ctx).Quests(ctx)
	if err != nil {
		return err
	}
	if e.json {
		return printJSON(e.stdout, qs)
	}
	if len(qs) == 0 {
		fmt.Fprintln(e.stderr, "no quests yet; create one with `questbox quest new NAME --direction TEXT`")
		return nil
	}
	tw := table(e.stdout)
	fmt.Fprintln(tw, "ID\tSTATUS\tMODE\tPROVIDER\tNODES\tRUNS\tNAME")
	for _, q := range qs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d/%d\t%s\n", q.ID, q.Status, q.Mode, q.Provider, q.Nodes,
			q.Used.AgentRuns, q.Limits.MaxAgentRuns, q.Name)
	}
	return tw.Flush()
}

// questShowCmd is `quest show ID`.
type questShowCmd struct{}

func (c *questShowCmd) flags(*flag.FlagSet) {}

func (c *questShowCmd) run(ctx context.Context, e *env, args []string) error {
	if err := wantArgs("quest show", args, "ID"); err != nil {
		return err
	}
	d, err := e.door.api(ctx).Quest(ctx, args[0])
	if err != nil {
		return err
	}
	if e.json {
		return printJSON(e.stdout, d)
	}
	q, w := d.Quest, e.stdout
	fmt.Fprintf(w, "quest %s %q: %s", q.ID, q.Name, q.Status)
	if q.Reason != "" {
		fmt.Fprintf(w, " (%s)", q.Reason)
	}
	fmt.Fprintf(w, "\ndirection: %s\nmode %s, provider %s, gate %s, roles %s", q.Direction, q.Mode, q.Provider, q.Gate, strings.Join(q.Roles, ","))
	if len(q.Checkpoints) > 0 {
		fmt.Fprintf(w, ", checkpoints %s", strings.Join(q.Checkpoints, ","))
	}
	writeLevel(w, q)
	fmt.Fprintf(w, "\nruns %d/%d, tokens %d/%d, wall clock %s/%s, max tries %d\n\n",
		q.Used.AgentRuns, q.Limits.MaxAgentRuns, q.Used.Tokens, q.Limits.TokenBudget,
		q.Used.WallClock, q.Limits.WallClock, q.Limits.MaxTries)
	if len(d.Nodes) == 0 {
		fmt.Fprintln(w, "no nodes yet")
		return nil
	}
	folded := foldedNodes(d)
	tw := table(w)
	fmt.Fprintln(tw, "NODE\tPARENT\tROLE\tSTATUS\tTRIES\tOUTCOME\tHYPOTHESIS")
	for _, n := range d.Nodes {
		if folded[n.ID] {
			continue
		}
		parent := n.Parent
		if parent == "" {
			parent = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d/%d\t%s\t%s\n", n.ID, parent, n.Role, n.Status, n.Tries, q.Limits.MaxTries,
			n.Outcome, oneLine(n.Hypothesis, 70))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := writeFolds(w, d); err != nil {
		return err
	}
	if len(d.Edges) > 0 {
		fmt.Fprintln(w, "\nedges:")
		tw = table(w)
		for _, ed := range d.Edges {
			fmt.Fprintf(tw, "  %s → %s\t%s\n", ed.From, ed.To, ed.Relation)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, n := range d.Nodes {
		if len(n.Facts) == 0 && n.Status != api.NodeRunning && n.Status != api.NodeDeferred {
			continue
		}
		fmt.Fprintf(w, "\n%s (%s):\n", n.ID, n.Status)
		if n.Status == api.NodeDeferred {
			fmt.Fprintf(w, "  waiting for the network: %s\n", n.Waiting)
		}
		writeFacts(w, "  ", n.Facts, n.Feedback, n.FeedbackAdds)
		if len(n.Attempts) > 0 {
			a := n.Attempts[len(n.Attempts)-1]
			fmt.Fprintf(w, "  last attempt %s: %s\n", a.At.Local().Format(time.DateTime), a.Outcome)
		}
	}
	return nil
}

// questStateCmd is `quest stop ID` and `quest resume ID`.
type questStateCmd struct{ stop bool }

func (c *questStateCmd) flags(*flag.FlagSet) {}

func (c *questStateCmd) run(ctx context.Context, e *env, args []string) error {
	name := "quest resume"
	if c.stop {
		name = "quest stop"
	}
	if err := wantArgs(name, args, "ID"); err != nil {
		return err
	}
	var q api.Quest
	var err error
	if c.stop {
		q, err = e.door.api(ctx).StopQuest(ctx, args[0], api.QuestCommand{})
	} else {
		q, err = e.door.api(ctx).ResumeQuest(ctx, args[0], api.QuestCommand{})
	}
	if err != nil {
		return err
	}
	if e.json {
		return printJSON(e.stdout, q)
	}
	fmt.Fprintf(e.stdout, "%s %s\n", q.ID, q.Status)
	return nil
}

// abortNodeCmd is `quest abort-node NODE [--reason R]`.
type abortNodeCmd struct{ reason string }

func (c *abortNodeCmd) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.reason, "reason", "", "why (default \"aborted by owner\")")
}

func (c *abortNodeCmd) run(ctx context.Context, e *env, args []string) error {
	if err := wantArgs("quest abort-node", args, "NODE"); err != nil {
		return err
	}
	n, err := e.door.api(ctx).AbortNode(ctx, args[0], c.reason)
	if err != nil {
		return err
	}
	if e.json {
		return printJSON(e.stdout, n)
	}
	fmt.Fprintf(e.stdout, "%s %s: %s\n", n.ID, n.Status, n.Reason)
	return nil
}
