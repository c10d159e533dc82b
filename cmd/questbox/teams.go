package main

import (
	"flag"

	"github.com/questbox/questbox/ui/api"
)

// teamFlags are `quest new`'s flags of v3.2 Teams (docs/design.md, "Councils
// and Teams"): --teams, --max-revisions and --accept-mode (`--preset teams`
// names them; see api.Presets).
type teamFlags struct {
	teams        bool
	maxRevisions int
	acceptMode   string
}

func (f *teamFlags) flags(fs *flag.FlagSet) {
	fs.BoolVar(&f.teams, "teams", false, "the owner dispatches Teams: planner -> executer -> accepter (team mode only)")
	fs.IntVar(&f.maxRevisions, "max-revisions", 2, "with --teams: revisions a Team may make; the rejection after them makes it team_blocked")
	fs.StringVar(&f.acceptMode, "accept-mode", "judge", "with --teams: judge, or human (the accept waits for the button)")
}

// apply puts the flags that were set (set) into req. The engine refuses
// --teams in solo mode.
func (f *teamFlags) apply(set map[string]bool, req *api.NewQuest) error {
	if (set["max-revisions"] || set["accept-mode"]) && !f.teams {
		return usagef("--max-revisions and --accept-mode need --teams")
	}
	req.Teams = f.teams
	if set["max-revisions"] {
		req.MaxRevisions = &f.maxRevisions
	}
	if set["accept-mode"] {
		req.AcceptMode = &f.acceptMode
	}
	return nil
}
