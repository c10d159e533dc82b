package domain

// Levels of a quest (docs/design.md, "Councils and Teams"): each keeps
// everything below it.
const (
	LevelSolo    = "v1 solo"
	LevelTeam    = "v2 team"
	LevelCouncil = "v3 council"
	// LevelGates is a council with phase gates.
	LevelGates = "v3.1 council"
	LevelTeams = "v3.2 teams"
)

// Level is the level q runs at, the one rule every face asks: solo is v1;
// Teams are v3.2, with or without a council; a council without Teams is
// v3, or v3.1 with phase gates; a team quest with neither is v2.
func (q *Quest) Level() string {
	switch {
	case q.Mode == ModeSolo:
		return LevelSolo
	case q.Teams:
		return LevelTeams
	case q.HasCouncil() && len(q.PhaseGates) > 0:
		return LevelGates
	case q.HasCouncil():
		return LevelCouncil
	}
	return LevelTeam
}

// HasCouncil reports whether q's owner turns are councils.
func (q *Quest) HasCouncil() bool { return len(q.CouncilReviewers)+len(q.CouncilJudges) > 0 }

// AboveV2 reports whether q has a council or Teams: the faces show its
// level and the fields of councils and Teams, and show a v1 or v2 quest as
// they always did.
func (q *Quest) AboveV2() bool { return q.Teams || q.HasCouncil() }

// HasBlockedTeam reports whether q, not finished, has a Team rejected
// past its max_revisions (team_blocked): the LEDs show it as an exhausted
// quest (docs/design.md, "The LEDs") until the quest is done.
func (q *Quest) HasBlockedTeam() bool { return q.Status != QuestDone && q.Counts.Get(TeamBlocked) > 0 }
