package main

import (
	"flag"

	"github.com/questbox/questbox/ui/api"
)

// teamFlags are `quest new`'s flags of v3.2 Teams (SPEC §2.8): --teams,
// --max-revisions, --accept-mode and the preset that names them.
type teamFlags struct {
	teams        bool
	maxRevisions int
	acceptMode   string
	preset       string
}

func (f *teamFlags) flags(fs *flag.FlagSet) {
	fs.BoolVar(&f.teams, "teams", false, "the owner dispatches Teams: planner -> executer -> accepter (team mode only)")
	fs.IntVar(&f.maxRevisions, "max-revisions", 2, "with --teams: rejections before a Team is team_blocked")
	fs.StringVar(&f.acceptMode, "accept-mode", "judge", "with --teams: judge, or human (the accept waits for the button)")
	fs.StringVar(&f.preset, "preset", "", "a named combination: teams (= --mode team --teams)")
}

// apply puts the flags that were set (set) into req; a preset sets the
// mode (into mode, which the caller reads when set["mode"]) unless
// --mode is given. The engine refuses --teams in solo mode.
func (f *teamFlags) apply(set map[string]bool, req *api.NewQuest, mode *string) error {
	switch f.preset {
	case "":
	case "teams":
		f.teams = true
		if !set["mode"] {
			*mode, set["mode"] = "team", true
		}
	default:
		return usagef("--preset %q is not one of: teams", f.preset)
	}
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
