package engine

import (
	"context"
	"runtime"
	"sync"

	"github.com/questbox/questbox/engine/domain"
)

// The start of a tick's runs (Engine.start), bounded: see startSlots.

// start launches the runs of a tick's dispatches ds, owned by the engine:
// Shutdown waits for them. Each run holds slabs, its tick's memory, until
// it ends (releaseSlabs); a dispatch that never runs releases it here. Its
// starting phase takes one of startMax slots; when none is free the run is
// queued, in dispatch order, and started when one frees. max_parallel
// still bounds the runs in flight (queued or not): the slots bound only
// how many start at the same time, so that a tick dispatching a thousand
// runs does not hold a thousand requests, logs and half-spawned processes
// in memory at once.
//
// The engine's lock is taken once for the tick's dispatches, not once
// each: the runs that get a start slot are launched once it is released,
// so that none waits for it while the rest are queued.
func (e *Engine) start(ds []dispatch, slabs *tickSlabs) {
	var (
		launch  []queuedRun
		dropped []*dispatch
	)
	e.mu.Lock()
	// Counted as the engine's work at once (Shutdown waits for it; the
	// tick holds a count of its own, so the counter is not zero): one
	// atomic add, not one per run. A dispatch dropped below gives its
	// count back.
	e.wg.Add(len(ds))
	for i := range ds {
		d := &ds[i]
		e.starting--
		if e.dropped[d.run.ID] {
			// Aborted before it started: the abort has ended the run.
			delete(e.dropped, d.run.ID)
			dropped = append(dropped, d)
			e.wg.Done()
			continue
		}
		q := queuedRun{d: d, slabs: slabs}
		if e.starters < e.startMax {
			e.starters++
			q.ctx, q.cancel = context.WithCancel(e.runCtx)
			e.inflight[d.node.ID] = q.cancel
			launch = append(launch, q)
			continue
		}
		// Every start slot is taken: the run waits as a few words in the
		// queue, not as a goroutine, and starts when a slot frees. Its
		// context is made then (startDone): a tick dispatching a thousand
		// runs would otherwise make a thousand contexts, each registered
		// with the engine's, before the first of them starts. In flight
		// meanwhile with no cancel: an abort marks it (cancelInflight).
		e.inflight[d.node.ID] = nil
		if len(e.startQueue) == 0 {
			e.startQueue = e.startRoom[:0] // the drained array, again
		}
		room := cap(e.startQueue)
		e.startQueue = append(e.startQueue, q)
		if cap(e.startQueue) != room {
			e.startRoom = e.startQueue[:0] // a new array: append moved the queue
		}
	}
	e.mu.Unlock()
	for _, d := range dropped {
		e.log.Debug("run aborted before it started", "quest", d.quest.ID, "node", d.node.ID, "run", d.run.ID)
		e.releaseSlabs(slabs)
	}
	for _, q := range launch {
		go e.runAgent(q)
	}
}

// startSlots is how many runs may be in their starting phase at once
// (Engine.start): twice the CPUs the Go runtime uses, at least 2. Starting
// a run is CPU and I/O work (its request built, its log created, its
// process forked), so a few per CPU keep them busy; more would only hold
// the memory of more half-started runs at the same time.
func startSlots() int { return max(2, 2*runtime.GOMAXPROCS(0)) }

// queuedRun is a dispatched run waiting for a start slot, and, once it
// has one, the context its abort or Shutdown cancels.
type queuedRun struct {
	d      *dispatch
	slabs  *tickSlabs // what d is carved from, held until the run ends
	ctx    context.Context
	cancel context.CancelFunc
}

// startDone frees a start slot: the oldest queued run takes it over.
func (e *Engine) startDone() {
	e.mu.Lock()
	if len(e.startQueue) == 0 {
		e.starters--
		e.mu.Unlock()
		return
	}
	q := e.startQueue[0]
	e.startQueue[0] = queuedRun{}
	e.startQueue = e.startQueue[1:]
	if len(e.startQueue) == 0 {
		e.startQueue = nil // its array stays in startRoom
	}
	// Made from the engine's context now: after Shutdown cancelled it,
	// the run's is cancelled from the start.
	q.ctx, q.cancel = context.WithCancel(e.runCtx)
	node := q.d.node.ID
	e.inflight[node] = q.cancel
	aborted := e.abortQueued[node]
	delete(e.abortQueued, node)
	e.mu.Unlock()
	if aborted {
		q.cancel() // aborted while it waited
	}
	go e.runAgent(q)
}

// runAgent is a run from its start slot to its recorded result. Its
// starting phase (its name, its log, its request, the agent's start)
// holds the slot; it frees it as soon as the agent is under way
// (agent.Request.Started) or, at the latest, when the agent returns, so
// an agent slow to answer does not hold up the runs queued behind it. A
// run whose context ended while it was queued goes through the same
// steps: its provider returns at once and it ends interrupted (Shutdown)
// or killed (abort), as a run cancelled just before its agent started.
func (e *Engine) runAgent(q queuedRun) {
	defer e.wg.Done()
	d, ctx := q.d, q.ctx
	defer q.cancel()
	var freed sync.Once
	free := func() { freed.Do(e.startDone) }
	defer free()
	// Every dispatch's run comes from newRun, which numbers it among its
	// node's runs: its name needs no read.
	d.run.Name = domain.RunName(d.run.Quest, d.run.Node, d.run.Nth)
	e.log.Info("run started", "run", d.run.ID, "name", d.run.Name, "quest", d.quest.ID, "node", d.node.ID, "role", d.node.Role, "provider", d.run.Provider)
	lg := e.openLog(d)
	var (
		res result
		tk  *ticket
	)
	if req, err := e.runRequest(d); err != nil {
		// The store could not be read (closed under the run, a
		// damaged page): no agent is asked, and the node goes back
		// to pending with no try consumed, as when the judge cannot
		// read the ancestors.
		free()
		tk = e.store.expect()
		res = result{kind: resInterrupted, why: "building the prompt: " + err.Error(), exit: ExitInterrupted}
	} else {
		req, redacted := redact(d.opt, d.run.Provider, req)
		req.Dir = d.quest.Project
		req.Network = e.network(d.quest, d.run.Provider)
		if lg != nil {
			req.Log = lg
		}
		req.Started = free
		reply, err := d.prov.Run(ctx, req)
		free()
		// A command's error quotes its stderr's tail, which the store
		// keeps (a fact, the run's message): masked as its log is.
		err = d.opt.Redaction.Error(err)
		// The answer's write is on its way: a group commit gathering the
		// results that come back together waits for it (engine/commit).
		tk = e.store.expect()
		res = e.judge(ctx, d.opt, d.quest, d.node, reply, err)
		if res.member != nil {
			disciplineMember(&res, req.Prompt)
		}
		res.replay = d.run.Provider == "replay"
		res.exit, res.exitCode = e.exitOf(ctx, reply, err)
		res.bytesIn, res.bytesOut = int64(len(req.Prompt)), int64(len(reply.Output))+reply.StderrBytes
		logAnswer(lg, reply)
		res.redacted = redacted
	}
	e.closeLog(d, lg, &res)
	e.log.Info("run ended", "run", d.run.ID, "name", d.run.Name, "quest", d.quest.ID, "node", d.node.ID,
		"exit", res.exit, "exit_code", res.exitCode, "outcome", res.outcome(), "bytes_in", res.bytesIn, "bytes_out", res.bytesOut)
	// The slot frees before the verdict commits; the quest itself stays
	// busy (Quest.Running) until then, so nothing dispatches twice.
	e.mu.Lock()
	delete(e.inflight, d.node.ID)
	e.mu.Unlock()
	e.chain.SlotFreed()
	e.record(d.node.ID, d.run.ID, res, tk)
	// The last read of d and of the tick's memory it points into: a
	// later tick may carve from it once every run of its tick is here.
	e.releaseSlabs(q.slabs)
}
