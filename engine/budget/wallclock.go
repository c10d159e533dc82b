package budget

import (
	"math/rand/v2"
	"time"

	"github.com/questbox/questbox/engine/domain"
)

// The wall_clock budget (docs/design.md, "Loop control") counts the time a
// quest was active under a running daemon: while Engine.Serve runs and the
// quest is active. Time the daemon is down, and time the quest is stopped, do
// not count. A tick without Serve (`questbox tick` with no daemon) checks the
// budget but adds no time.
//
// Each Serve call is a session with a random id and its own clock: the
// wall time at its start plus the monotonic time elapsed since, so a step
// of the system clock (a Pi without a real-time clock setting its time
// from NTP after boot) is not counted as time spent.
//
// A quest record carries the time its Counters.WallUsed is counted up to
// (WallMark) and the session that mark belongs to (WallSession). While a
// session runs, an active quest's time is
//
//	WallUsed + (now - WallMark)        if WallSession is this session
//	WallUsed + (now - session start)   otherwise
//
// so nothing has to be written for time to pass: an idle tick writes
// nothing. The count is folded into WallUsed (and the mark moved to now)
// whenever the quest record is written anyway (a dispatch, a result, a
// status change), at least once an hour (every active quest in the same
// tick, one commit), and for every active quest when Serve returns. A
// crash or power cut therefore loses at most the last hour of a quest's
// accounting — in the owner's favour: the quest gets that time for free.
// Budgets are checked against the current count, so a quest is terminated
// at the first tick at which its budget is used up.

// WallSaveEvery bounds how stale a stored WallUsed may get while a
// session runs: what a crash can lose.
const WallSaveEvery = time.Hour

// Session is one run of Engine.Serve. It is immutable.
type Session struct {
	id    uint64
	start time.Time // session clock at the start: the wall time then, UTC
	mono  time.Time // the clock's reading at the start, with its monotonic part
}

// NewSession starts a session at now, the clock's reading, with a random
// id that is never 0.
func NewSession(now time.Time) *Session {
	id := rand.Uint64()
	for id == 0 { // 0 means "no session" in a quest record
		id = rand.Uint64()
	}
	return &Session{id: id, start: now.UTC(), mono: now}
}

// ID is the session's id, as a quest record's WallSession holds it.
func (s *Session) ID() uint64 { return s.id }

// At converts a clock reading to the session clock: the start plus the
// time elapsed, measured on the monotonic clock when the reading has one.
func (s *Session) At(now time.Time) time.Time {
	return s.start.Add(now.Sub(s.mono))
}

// Used is q's wall time at session time snow. Without a session, or for a
// quest that is not active, it is the stored count.
func (s *Session) Used(q *domain.Quest, snow time.Time) time.Duration {
	if s == nil || q.Status != domain.QuestActive {
		return q.Counters.WallUsed
	}
	return q.Counters.WallUsed + s.Unsaved(q, snow)
}

// Unsaved is the time q has been active at snow and that is not in its
// stored WallUsed yet.
func (s *Session) Unsaved(q *domain.Quest, snow time.Time) time.Duration {
	if s == nil || q.Status != domain.QuestActive {
		return 0
	}
	from := s.start
	if q.WallSession == s.id {
		from = q.WallMark
	}
	return max(0, snow.Sub(from))
}
