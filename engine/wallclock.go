package engine

import (
	"errors"
	"time"

	"github.com/questbox/questbox/engine/budget"
)

// errServing is returned by Serve when another Serve runs on the engine.
var errServing = errors.New("engine is already serving")

// foldWall moves an active quest's uncounted time into WallUsed. The
// transaction writes every quest it tracked through here, so the count is
// stored with every real change of the quest.
func (t *txn) foldWall(q *Quest) {
	if t.sess == nil || q.Status != QuestActive {
		return
	}
	q.Counters.WallUsed = t.sess.Used(q, t.snow)
	q.WallSession, q.WallMark = t.sess.ID(), t.snow
}

// startWall starts the clock of a quest that just became active: from now
// if a session runs, else from the start of the next one.
func (t *txn) startWall(q *Quest) {
	if t.sess == nil {
		q.WallSession, q.WallMark = 0, time.Time{}
		return
	}
	q.WallSession, q.WallMark = t.sess.ID(), t.snow
}

// wallUsed is q's wall time now.
func (t *txn) wallUsed(q *Quest) time.Duration { return t.sess.Used(q, t.snow) }

// liveWall sets the WallUsed of a quest read outside a transaction to its
// current value, for reports.
func (e *Engine) liveWall(q *Quest) {
	if s := e.sess.Load(); s != nil {
		q.Counters.WallUsed = s.Used(q, s.At(e.clock.Now()))
	}
}

// beginServing starts a session. Only one runs at a time.
func (e *Engine) beginServing() (*budget.Session, error) {
	s := budget.NewSession(e.clock.Now())
	if !e.sess.CompareAndSwap(nil, s) {
		return nil, errServing
	}
	return s, nil
}

// endServing stores every active quest's count and ends the session. A
// failed save (a full disk) loses the time since the quests' last save,
// at most an hour, in the owner's favour.
func (e *Engine) endServing(s *budget.Session) {
	err := e.update(func(t *txn) error {
		qs, err := t.activeQuests()
		if err != nil {
			return err
		}
		for _, q := range qs {
			if t.sess.Unsaved(q, t.snow) > 0 {
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
		if t.sess.Unsaved(q, t.snow) >= budget.WallSaveEvery {
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
