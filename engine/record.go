package engine

import (
	"errors"
	"time"

	"github.com/questbox/questbox/internal/clock"

	"github.com/questbox/questbox/engine/store"
)

// Recording a run's result: the last step of a run (runstart.go).

// Backoff between attempts to record a run's result.
const (
	recordRetryFirst = time.Second
	recordRetryMax   = time.Minute
)

// record hands a run's result to the group commit as data and returns: the
// run's goroutine ends, and the result waits for its commit as a queued
// value (Store.batchAsync), not as a goroutine. Engine.Wait and Shutdown
// wait for it all the same: the result holds the engine's wait group until
// it is committed or given up. Results that come back together share one
// commit. While the store refuses the write (a full SD card, an I/O
// error), a goroutine of the result's own retries it with backoff, the
// answer kept in memory meanwhile; Unrecorded reports it so the box can
// show a fault. The node stays running, so nothing dispatches it again.
// Only Shutdown's cancellation gives up; the node then goes back to
// pending at the next start-up with an interrupted attempt.
//
// Nothing is published before the commit: the result's events reach
// subscribers (the outbox, MQTT, the dashboard) from the commit that holds
// them, and the run's log was made durable before that commit began
// (Engine.syncRunLogs, the group commit's beforeCommit).
func (e *Engine) record(nodeID, runID string, res result, tk *ticket) {
	e.wg.Add(1) // held by the result until it is recorded or given up
	e.batchAsync(e.completion(nodeID, runID, res), tk, func(err error) {
		if err == nil {
			e.wg.Done()
			return
		}
		if e.recordFailed(nodeID, runID, err, recordRetryFirst) {
			go e.retryRecord(nodeID, runID, res, recordRetryFirst)
			return
		}
		e.wg.Done()
	})
}

// retryRecord records a result whose first write failed, after wait and
// then with backoff, until it is committed or given up (recordFailed).
// It ends the wait group count record took.
func (e *Engine) retryRecord(nodeID, runID string, res result, wait time.Duration) {
	defer e.wg.Done()
	defer e.markUnrecorded(runID, nil)
	for {
		if clock.Sleep(e.runCtx, e.clock, wait) != nil {
			e.log.Error("gave up recording a run result: its node goes back to pending at the next start-up", "node", nodeID, "run", runID)
			return
		}
		wait = min(2*wait, recordRetryMax)
		err := e.complete(nodeID, runID, res, nil) // a retry is not announced
		if err == nil || !e.recordFailed(nodeID, runID, err, wait) {
			return
		}
	}
}

// recordFailed notes that a result's write failed with err and reports
// whether a retry in wait may land: not once the store is closed.
func (e *Engine) recordFailed(nodeID, runID string, err error, wait time.Duration) bool {
	if errors.Is(err, store.ErrClosed) {
		// The store was closed under the run (a crash test does
		// that; Shutdown cancels first): no retry can land.
		e.log.Error("run result lost: the store is closed", "node", nodeID, "run", runID)
		return false
	}
	e.markUnrecorded(runID, err)
	e.log.Error("run result could not be recorded; retrying", "node", nodeID, "run", runID, "retry_in", wait, "err", err)
	return true
}
