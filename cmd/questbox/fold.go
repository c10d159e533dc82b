package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/questbox/questbox/ui/api"
)

// How `quest show` prints councils and Teams (docs/design.md, "Councils and
// Teams"): the level in the header, a Team as one line with its stage strip,
// a council under its owner with each member's provider and vote. The strip
// and the votes are the API's (api.DetailView); nothing here decides them. A
// v1 or v2 quest prints as it always did.

// writeLevel ends the header's mode line with the level and the council
// and Teams settings, for a quest above v2.
func writeLevel(w io.Writer, q api.Quest) {
	if q.Level == "" {
		return
	}
	fmt.Fprintf(w, "\nlevel %s", q.Level)
	if c := q.Council; c != nil {
		fmt.Fprintf(w, ", council reviewers %s judges %s", orNone(c.Reviewers), orNone(c.Judges))
	}
	if len(q.PhaseGates) > 0 {
		fmt.Fprintf(w, ", phase gates %s", strings.Join(q.PhaseGates, ","))
	}
	if q.Teams {
		fmt.Fprintf(w, ", Teams (max revisions %d, accept by %s)", q.MaxRevisions, orDefault(q.AcceptMode, "judge"))
	}
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ",")
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// foldedNodes are the nodes the node table leaves to the Team and council
// lines: stage nodes and council members.
func foldedNodes(d api.QuestDetail) map[string]bool {
	out := map[string]bool{}
	for _, tm := range d.Teams {
		for _, s := range tm.Stages {
			out[s.ID] = true
		}
	}
	for _, c := range d.Councils {
		for _, m := range c.Members {
			out[m.ID] = true
		}
	}
	return out
}

// strip is a Team's stages as one line: "plan ✓ → exec ✓ → accept ✗
// (rev 1/2)".
func strip(tm api.Team) string {
	var b strings.Builder
	for i, s := range tm.Stages {
		if i > 0 {
			b.WriteString(" → ")
		}
		b.WriteString(s.Stage + " " + s.Mark.Symbol())
	}
	if len(tm.Stages) == 0 {
		b.WriteString("not staged yet")
	}
	if tm.RevisionCount > 0 {
		fmt.Fprintf(&b, " (rev %d/%d)", tm.RevisionCount, tm.MaxRevisions)
	}
	return b.String()
}

// writeFolds prints the quest's Teams and councils.
func writeFolds(w io.Writer, d api.QuestDetail) error {
	if len(d.Teams) > 0 {
		fmt.Fprintln(w, "\nTeams:")
		tw := table(w)
		for _, tm := range d.Teams {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", tm.ID, tm.Kind, tm.Status, strip(tm), oneLine(tm.Hypothesis, 50))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, c := range d.Councils {
		fmt.Fprintf(w, "\ncouncil of owner %s (%s", c.Owner, c.Status)
		if c.Phase != "" {
			fmt.Fprintf(w, ", %s phase", c.Phase)
		}
		fmt.Fprintln(w, "):")
		tw := table(w)
		for _, m := range c.Members {
			vote := m.Vote
			if vote == "" {
				vote = "-"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\tvote %s\n", m.ID, m.Role, m.Provider, m.Status, vote)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, m := range c.Members {
			if m.Dissent != "" {
				fmt.Fprintf(w, "  dissent of %s (%s): %s\n", m.ID, m.Provider, oneLine(m.Dissent, 100))
			}
		}
	}
	return nil
}
