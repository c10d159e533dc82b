package engine

import (
	"errors"
	"math/rand/v2"
	"time"
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

// wallSaveEvery bounds how stale a stored WallUsed may get while a
// session runs: what a crash can lose.
const wallSaveEvery = time.Hour

// errServing is returned by Serve when another Serve runs on the engine.
var errServing = errors.New("engine is already serving")

// session is one run of Engine.Serve. It is immutable.
type session struct {
	id    uint64
	start time.Time // session clock at the start: the wall time then, UTC
	mono  time.Time // the clock's reading at the start, with its monotonic part
}

func newSession(now time.Time) *session {
	id := rand.Uint64()
	for id == 0 { // 0 means "no session" in a quest record
		id = rand.Uint64()
	}
	return &session{id: id, start: now.UTC(), mono: now}
}

// at converts a clock reading to the session clock: the start plus the
// time elapsed, measured on the monotonic clock when the reading has one.
func (s *session) at(now time.Time) time.Time {
	return s.start.Add(now.Sub(s.mono))
}

// used is q's wall time at session time snow. Without a session, or for a
// quest that is not active, it is the stored count.
func (s *session) used(q *Quest, snow time.Time) time.Duration {
	if s == nil || q.Status != QuestActive {
		return q.Counters.WallUsed
	}
	return q.Counters.WallUsed + s.unsaved(q, snow)
}

// unsaved is the time q has been active at snow and that is not in its
// stored WallUsed yet.
func (s *session) unsaved(q *Quest, snow time.Time) time.Duration {
	if s == nil || q.Status != QuestActive {
		return 0
	}
	from := s.start
	if q.WallSession == s.id {
		from = q.WallMark
	}
	return max(0, snow.Sub(from))
}

// foldWall moves an active quest's uncounted time into WallUsed. The
// transaction writes every quest it tracked through here, so the count is
// stored with every real change of the quest.
func (t *txn) foldWall(q *Quest) {
	if t.sess == nil || q.Status != QuestActive {
		return
	}
	q.Counters.WallUsed = t.sess.used(q, t.snow)
	q.WallSession, q.WallMark = t.sess.id, t.snow
}

// startWall starts the clock of a quest that just became active: from now
// if a session runs, else from the start of the next one.
func (t *txn) startWall(q *Quest) {
	if t.sess == nil {
		q.WallSession, q.WallMark = 0, time.Time{}
		return
	}
	q.WallSession, q.WallMark = t.sess.id, t.snow
}

// wallUsed is q's wall time now.
func (t *txn) wallUsed(q *Quest) time.Duration { return t.sess.used(q, t.snow) }

// liveWall sets the WallUsed of a quest read outside a transaction to its
// current value, for reports.
func (e *Engine) liveWall(q *Quest) {
	if s := e.sess.Load(); s != nil {
		q.Counters.WallUsed = s.used(q, s.at(e.clock.Now()))
	}
}

// beginServing starts a session. Only one runs at a time.
func (e *Engine) beginServing() (*session, error) {
	s := newSession(e.clock.Now())
	if !e.sess.CompareAndSwap(nil, s) {
		return nil, errServing
	}
	return s, nil
}

// endServing stores every active quest's count and ends the session. A
// failed save (a full disk) loses the time since the quests' last save,
// at most an hour, in the owner's favour.
func (e *Engine) endServing(s *session) {
	err := e.update(func(t *txn) error {
		qs, err := t.activeQuests()
		if err != nil {
			return err
		}
		for _, q := range qs {
			if t.sess.unsaved(q, t.snow) > 0 {
				t.keep(q)
			}
		}
		return t.unchanged()
	})
	if err != nil {
		e.log.Error("saving wall-clock use at stop failed; up to an hour of it is not counted", "err", err)
	}
	e.sess.CompareAndSwap(s, nil)
}

// saveWallIfDue marks every active quest of qs to be written when one of
// them has gone an hour without its wall time stored: all in one commit,
// so that saves stay aligned and an idle box commits once an hour.
func (t *txn) saveWallIfDue(qs []*Quest) {
	if t.sess == nil {
		return
	}
	due := false
	for _, q := range qs {
		if t.sess.unsaved(q, t.snow) >= wallSaveEvery {
			due = true
			break
		}
	}
	if !due {
		return
	}
	for _, q := range qs {
		if q.Status == QuestActive {
			t.keep(q)
		}
	}
}
