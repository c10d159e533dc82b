package followup

import (
	"slices"
	"sync"
	"sync/atomic"
)

// Follow is a commit's note that it enabled follow-up work of Quest: Node
// when the work is that node (a stage, a retry), "" for the quest's
// council or phase gates.
type Follow struct {
	Quest, Node string
}

// Quest is a quest a pass looks at, with the nodes named for it.
type Quest struct {
	ID    string
	Nodes []string
}

// Engine is what the chain asks of the engine that makes its passes. The
// chain calls it with its own mutex held, so the lock order is the
// chain's mutex, then whatever the engine takes; its methods must never
// call back into the chain.
type Engine interface {
	// Hold raises the engine's wait group for a pass made due, unless
	// Shutdown began, and reports whether it did.
	Hold() bool
	// Release gives back the count Hold raised, for a pass that will not
	// be made.
	Release()
	// SlotFree reports whether a run slot is free (max_parallel).
	SlotFree() bool
}

// Chain is the engine's list of quests with follow-up work, for Serve's
// passes. Its methods are safe for concurrent use.
type Chain struct {
	e  Engine
	mu sync.Mutex // guards serving, due, quests, order
	// serving: Serve runs and passes are made; otherwise notes are
	// dropped (the tick dispatches the work).
	serving bool
	// due: a pass is due (wake was sent) and holds a count of the
	// engine's wait group, so that Engine.Wait waits for the work a
	// result enables as it waits for the result.
	due    bool
	quests map[string][]string
	order  []string
	// wake has room for one value: "a pass is due", coalesced.
	wake chan struct{}
	// on is serving, read without the lock by On: outside Serve a
	// transaction notes nothing (a busy cycle's thousand FAILs would
	// each allocate a note for nobody).
	on atomic.Bool
}

// New returns a chain, not serving, that asks e what it needs.
func New(e Engine) *Chain {
	return &Chain{e: e, wake: make(chan struct{}, 1)}
}

// On reports, without a lock, whether passes are made: whether a
// transaction's notes would reach one.
func (c *Chain) On() bool { return c.on.Load() }

// Wake receives a value when a pass is due; Serve's goroutine makes it
// (Take). Wake-ups coalesce: one value stands for any number of notes.
func (c *Chain) Wake() <-chan struct{} { return c.wake }

// Start makes passes from now on: Serve runs.
func (c *Chain) Start() {
	c.mu.Lock()
	c.serving = true
	c.on.Store(true)
	c.mu.Unlock()
}

// Stop drops the notes and the pass due: Serve returns, and the
// next tick (of the next Serve, or `questbox tick`) dispatches the work.
func (c *Chain) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.serving = false
	c.on.Store(false)
	clear(c.quests)
	c.order = c.order[:0]
	select {
	case <-c.wake:
	default:
	}
	if c.due {
		c.due = false
		c.e.Release()
	}
}

// Note hands the notes of a committed write to the next pass.
func (c *Chain) Note(fs []Follow) {
	if len(fs) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.serving {
		return
	}
	for _, f := range fs {
		c.noteLocked(f.Quest, f.Node)
	}
	c.dueLocked()
}

// noteLocked adds node (if any) to quest's notes; c.mu is held.
func (c *Chain) noteLocked(quest, node string) {
	if c.quests == nil {
		c.quests = map[string][]string{}
	}
	nodes, ok := c.quests[quest]
	if !ok {
		c.order = append(c.order, quest)
	}
	if node != "" && !slices.Contains(nodes, node) {
		nodes = append(nodes, node)
	}
	c.quests[quest] = nodes
}

// SlotFreed wakes a pass for the quests that found no free slot, if
// any: a run just left its slot.
func (c *Chain) SlotFreed() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.serving && len(c.order) > 0 {
		c.dueLocked()
	}
}

// dueLocked makes a pass due, unless one is; c.mu is held. Once Shutdown
// began, no pass is made (and the wait group is not raised: Shutdown
// waits on it).
func (c *Chain) dueLocked() {
	if c.due {
		return
	}
	if !c.e.Hold() {
		return
	}
	c.due = true
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// Take takes the quests noted so far, in the order they were first
// noted, and whether the pass holds a count of the wait group (which
// it gives back when it is done).
func (c *Chain) Take() ([]Quest, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	held := c.due
	c.due = false
	out := make([]Quest, 0, len(c.order))
	for _, id := range c.order {
		out = append(out, Quest{id, c.quests[id]})
	}
	clear(c.quests)
	c.order = c.order[:0]
	return out, held
}

// Park keeps fs, quests a pass found no free slot for, for the next
// pass, without making one due: the end of a run does (SlotFreed).
func (c *Chain) Park(fs []Quest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.serving {
		return
	}
	for _, f := range fs {
		if len(f.Nodes) == 0 {
			c.noteLocked(f.ID, "")
		}
		for _, n := range f.Nodes {
			c.noteLocked(f.ID, n)
		}
	}
	// A run that ended between the pass's look at the slots and now
	// found nothing parked (SlotFreed): the pass it would have woken is
	// made due here, or the parked work would wait for the next tick.
	if c.e.SlotFree() && len(fs) > 0 {
		c.dueLocked()
	}
}
