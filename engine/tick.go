package engine

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/budget"
	"github.com/questbox/questbox/engine/council"
	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/followup"
	"github.com/questbox/questbox/engine/humangate"
	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
	"github.com/questbox/questbox/engine/tickmem"
)

// TickReport says what one tick did.
type TickReport struct {
	Dispatched []string `json:"dispatched"` // node ids sent to providers
	Terminated []string `json:"terminated"` // quests stopped by a budget
	Finished   []string `json:"finished"`   // quests marked done
	Resumed    []string `json:"resumed"`    // deferred nodes back to pending
	// Took is how long the tick's own work took (agent runs proceed after
	// it), as Serve measured it; 0 from Tick itself.
	Took time.Duration `json:"-"`
}

type dispatch struct {
	// quest is the tick's transaction's copy of the quest, shared by
	// the quest's dispatches of the tick (a council's members): nothing
	// changes it once the transaction has committed, and its runs only
	// read it (runRequest, judge). A pointer, not a copy: a copy was 600
	// bytes a dispatch to allocate and move.
	quest *Quest
	node  *Node
	run   Run
	// req is the agent's request when the tick built it, else nil. The
	// tick builds it only for an owner (whose prompt lists the
	// proposals, which change after the commit) and for a replay; a
	// council member's run renders its own from what the tick read for
	// it (member), and a worker's run builds its own from the committed
	// store (runRequest), both off the tick's transaction. A pointer:
	// most dispatches have none, and a request is 192 bytes.
	req    *agent.Request
	member *memberPrompt
	prov   Provider
	// opt are the options in force when the tick dispatched it: its run
	// is prompted, redacted and judged by them, whatever a reload
	// changes meanwhile (reload.go).
	opt *Options
}

// memberPrompt is a council member's prompt as its dispatch read it in
// the tick's transaction: the member as the prompt shows it (pending,
// before the dispatch marked it running) and what the prompt shows of
// the store (its owner's material, the nodes above it). Its run renders
// the request from it alone (runRequest), reading nothing from the
// store, so the prompt is the one the tick would have built, byte for
// byte, whatever commits in between.
type memberPrompt struct {
	node *Node // read only
	src  promptSource
}

// Tick runs one round (docs/design.md, "The tick") in a single write
// transaction: for each active quest, the one that waited longest first (see
// activeQuests), it applies loop control, brings deferred nodes back when the
// network is up, and dispatches at most one node if the quest has none
// running, up to MaxParallel runs in flight. The runs it starts proceed in
// the background; Wait waits for them.
//
// A tick that changes nothing commits nothing: quests are read without
// being tracked, and only the ones a tick changes are written (see
// engine/budget/wallclock.go for how wall-clock time passes without a
// write).
func (e *Engine) Tick(ctx context.Context) (TickReport, error) {
	if err := e.writable(); err != nil {
		return TickReport{}, err
	}
	e.mu.Lock()
	if e.closing {
		e.mu.Unlock()
		return TickReport{}, fmt.Errorf("engine is shutting down")
	}
	// The tick itself counts as work in flight: Shutdown, once it set
	// closing, waits for a tick already past this point and for the runs
	// it starts, and never races their wg.Add.
	e.wg.Add(1)
	e.mu.Unlock()
	defer e.wg.Done()
	// Asked even when idle: the probe behind it keeps the LEDs' network
	// state (and its events) current.
	online := e.opt.Online == nil || e.opt.Online()
	if e.idle() {
		// Nothing active and no consent to expire: no write at all, so an
		// idle box does not wear its SD card once a minute. Nor does it
		// keep the memory of its busy ticks.
		e.mu.Lock()
		e.slabFree, e.startRoom, e.tickScratch = nil, nil, nil
		e.mu.Unlock()
		return TickReport{}, nil
	}
	var r *tickRound
	tb := e.takeTickScratch()
	err := e.update(func(t *txn) error {
		r = &tickRound{e: e, t: t, online: online}
		tb.lend(t)
		return r.run()
	})
	if r != nil {
		e.keepTickScratch(tb, r.t)
	}
	if err != nil {
		if r != nil {
			e.mu.Lock()
			e.starting -= r.reserved
			e.mu.Unlock()
		}
		return TickReport{}, err
	}
	if r.pruneLater {
		e.pruneDue.Store(r.pruneAt)
	}
	// Committed: the set of slabs is the dispatches' now, each run's
	// until it ends (tickslabs.go).
	e.holdSlabs(r.slabs, len(r.ds))
	if e.startHook != nil {
		e.startHook()
	}
	e.start(r.ds, r.slabs)
	return r.rep, nil
}

// tickRound is one tick's write transaction: what it reports, the
// dispatches it makes, and the slots left for them.
type tickRound struct {
	e        *Engine
	t        *txn
	online   bool
	slots    int
	rep      TickReport
	ds       []dispatch
	reserved int // dispatches counted in e.starting
	// slabs is what the tick carves its quests, heads and dispatches
	// from (tickslabs.go): the attempt's own, never handed on when it
	// fails.
	slabs *tickSlabs
	// provName's provider is prov, the latest the tick looked up: most
	// of a tick's dispatches share one.
	provName string
	prov     Provider
	// pruneLater: the tick left its retention prune to the group
	// commit of its runs' results (pruneLater); pruneAt is its commit.
	pruneLater bool
	pruneAt    uint64
	// starved is set when a turn had a node to dispatch and no slot;
	// parked are the quests of a follow-up pass so starved (chain.go).
	starved bool
	parked  []followup.Quest
	// pass: a follow-up pass (chain.go), which ends no quest and aborts
	// no member for a budget: it leaves the dispatch to the tick.
	pass bool
}

// provider is the engine's provider called name, nil when none is.
func (r *tickRound) provider(name string) Provider {
	if name != r.provName || r.prov == nil {
		r.provName, r.prov = name, r.t.opt.Providers[name]
	}
	return r.prov
}

// run is the tick inside its transaction (a retry starts it afresh).
func (r *tickRound) run() error {
	e, t := r.e, r.t
	// Free slots are counted inside the write transaction: writers are
	// serialised, so an overlapping tick (the daemon's and `questbox
	// tick`) sees every run an earlier one dispatched, started or still
	// reserved.
	e.mu.Lock()
	r.slots = e.opt.MaxParallel - len(e.inflight) - e.starting
	if len(t.quests) == 0 && e.lastActive > 0 && t.scratch != nil {
		t.quests = t.scratch.questsByID(e.lastActive)
	}
	r.slabs = e.takeSlabs()
	need := e.slabNeed
	e.mu.Unlock()
	r.slabs.Fit(need)
	t.slabs = &r.slabs.Slabs
	if _, err := humangate.Expire(t, t.opt.ConsentExpiry); err != nil {
		return err
	}
	qs, err := t.activeQuests()
	if err != nil {
		return err
	}
	e.view.Trim(qs)
	e.decoded.Trim(qs)
	e.sittings.Trim(qs)
	e.owners.Trim(qs)
	t.saveWallIfDue(qs)
	// Each quest dispatches at most once, or once per seat of its council
	// (its members run concurrently), each dispatch takes a slot: sized
	// once, the list is never copied as it grows (a dispatch is a
	// kilobyte, a tick may make a thousand).
	r.ds = r.slabs.dispatches(max(0, min(r.slots, mostDispatches(qs))))
	r.rep.Dispatched = make([]string, 0, cap(r.ds))
	t.later = &e.later
	t.later.reset(cap(r.ds))
	// A dispatch's event takes about 64 bytes of the group record.
	t.groupRoom = 64 * min(cap(r.ds), records.GroupEvents)
	e.mu.Lock()
	e.lastActive = len(qs)
	e.mu.Unlock()
	for i, q := range qs {
		t.laterRank = t.activeRank[i]
		if err := r.quest(q); err != nil {
			return err
		}
	}
	if err := t.FlushRunning(); err != nil {
		return err
	}
	var pruned int
	if r.pruneLater = len(r.ds) > 0; r.pruneLater {
		pruned, err = t.trimOutbox(t.opt.OutboxMax)
		r.pruneAt = uint64(t.tx.ID())
	} else {
		pruned, err = t.pruneEvents(e.opt.EventRetention)
	}
	if err != nil {
		return err
	}
	if pruned == 0 {
		if err := t.unchanged(); err != nil {
			return err // nothing dispatched, nothing changed
		}
	}
	e.mu.Lock()
	e.starting += len(r.ds)
	e.mu.Unlock()
	r.reserved = len(r.ds)
	return nil
}

// mostDispatches is the most dispatches a tick can make for qs: one per
// quest, and one per seat for a quest with a council (its members may
// all dispatch in the tick, council.go).
func mostDispatches(qs []*Quest) int {
	n := 0
	for _, q := range qs {
		n += max(1, len(q.CouncilReviewers)+len(q.CouncilJudges))
	}
	return n
}

// quest is one active quest's turn: loop control, deferred nodes back when
// the network is up, then at most one dispatch if nothing runs.
//
// The turn of a quest that reads no running entry but its own quest's,
// and none after its own dispatch (ownTurn), puts its dispatch's running
// entry later, with the other such quests' entries, in key order
// (flushRunning); so does the turn of a sitting council, its members'
// entries, when they may be (council). Any other turn first puts those
// kept so far, so that it reads the running index as it is.
//
// Why the entries kept so far need no put before an own turn or a
// council's: they are the entries of the quests whose turns came before
// (a quest has one turn a tick), and such a turn reads running entries
// of its own quest's nodes only, by their keys (quest/node), which no
// entry of another quest is; the index after the flush holds the same
// entries whatever the order of their puts.
func (r *tickRound) quest(q *Quest) error {
	t := r.t
	switch {
	case ownTurn(q):
		t.laterRunning = true
		err := r.turn(q)
		t.laterRunning = false
		return err
	case q.Queued[queuedCouncil] == "":
		if err := t.FlushRunning(); err != nil {
			return err
		}
	}
	return r.turn(q)
}

// ownTurn says whether q's turn reads no running entry but its own
// quest's, and none after its own dispatch: a quest with no council, no
// phase gates and no replays reads its own nodes, its own indexes and its
// own running entries (records.NodeHead, undefer; a Team quest's owner turn its
// hypothesis index, its owner's node and material, newOwner and request)
// and dispatches at most one node, last.
func ownTurn(q *Quest) bool {
	return !q.HasCouncil() && q.Queued[queuedCouncil] == "" &&
		len(q.PhaseGates) == 0 && len(q.Replays) == 0
}

// turn is quest's turn for q.
func (r *tickRound) turn(q *Quest) error {
	t := r.t
	if reason := t.OverBudget(q); reason != "" && q.Queued[queuedCouncil] == "" {
		if q.Running != "" {
			return nil // let the run finish; terminate next tick
		}
		return r.terminate(q, reason)
	}
	if q.EgressConsent != "" {
		return nil // nothing of it leaves the box before its consent (package engine/humangate)
	}
	if r.online {
		back, err := t.undefer(q)
		if err != nil {
			return err
		}
		r.rep.Resumed = append(r.rep.Resumed, back...)
	}
	if over, err := r.sittingOrGated(q); over || err != nil {
		return err
	}
	if r.slots > 0 {
		d, ok, err := t.replay(q)
		if err != nil {
			return err
		}
		if ok {
			r.slots--
			r.ds = append(r.ds, d)
			r.rep.Dispatched = append(r.rep.Dispatched, d.node.ID)
			return nil
		}
	}
	return r.next(q)
}

// sittingOrGated is the part of q's turn that comes before its next
// node, a tick's or a follow-up pass's (chain.go): a sitting council's
// members and merge, a run in flight, a phase gate to sit. It reports
// whether the turn is over.
func (r *tickRound) sittingOrGated(q *Quest) (bool, error) {
	if q.Queued[queuedCouncil] != "" {
		// A council sits: its members run concurrently, nothing else
		// dispatches (council.go). Seated within the budgets, it decides
		// with the votes it has when they end (budget.go).
		return true, r.council(q)
	}
	if q.Running != "" {
		return true, nil
	}
	if len(q.PhaseGates) > 0 {
		if sat, err := council.PhaseGates(r.t, r, q); err != nil || sat {
			return true, err
		}
	}
	return false, nil
}

// next picks q's next node and dispatches it. A quest that cannot
// dispatch now (an external agent pulls its work; no slot is free) still
// finishes or gets its owner node, but its next node is not read. An
// external quest with per-role providers is read: its node is dispatched
// when its provider is one the box spawns, and left to `next` when it is
// external (see Engine.Next).
func (r *tickRound) next(q *Quest) error {
	t := r.t
	dispatchable := r.dispatchable(q)
	n, done, err := t.pick(q, dispatchable)
	if err != nil {
		return err
	}
	if done != "" {
		if err := t.SetQuestStatus(q, QuestDone, done); err != nil {
			return err
		}
		r.rep.Finished = append(r.rep.Finished, q.ID)
		return nil
	}
	return r.dispatchPicked(q, n, dispatchable)
}

// dispatchable says whether q may dispatch a node now: a slot is free
// and the box runs some of its work (not all of it pulled by an outside
// agent).
func (r *tickRound) dispatchable(q *Quest) bool {
	spawns := q.Provider != ProviderExternal || len(q.RoleProviders) > 0
	if spawns && r.slots <= 0 {
		r.starved = true
	}
	return spawns && r.slots > 0
}

// dispatchPicked dispatches n, the node picked for q (nil: none): an
// owner of a quest with a council opens its design phase, whose members
// dispatch at once when slots are free; any other node dispatches when
// dispatchable (see next) and its provider is one the box spawns.
func (r *tickRound) dispatchPicked(q *Quest, n *Node, dispatchable bool) error {
	t := r.t
	if n != nil && n.Role == RoleOwner && q.HasCouncil() {
		// The owner's design phase: its council sits, and its members
		// dispatch in this very tick when slots are free.
		if ended, err := r.seatless(q); ended || err != nil {
			return err
		}
		owner, err := t.Node(n.ID)
		if err != nil {
			return err
		}
		if err := council.Open(t, q, owner); err != nil {
			return err
		}
		return r.council(q)
	}
	if n == nil || !dispatchable {
		return nil
	}
	if domain.IsMember(n.Role) {
		// A member outside a sitting council: its owner was aborted.
		full, err := t.Node(n.ID)
		if err != nil {
			return err
		}
		return t.Abort(q, full, "its council was dissolved")
	}
	name := q.ProviderFor(n)
	if name == ProviderExternal {
		return nil // an outside agent pulls it with `next`
	}
	if stopped, err := r.egressStop(q, name); stopped || err != nil {
		return err
	}
	prov := r.provider(name)
	if prov == nil {
		return t.SetQuestStatus(q, QuestStopped, fmt.Sprintf("provider %q is not configured; fix the config and `quest resume %s`", name, q.ID))
	}
	var req *agent.Request
	if n.Role == RoleOwner {
		req = new(agent.Request)
		var err error
		if *req, err = t.request(q, n); err != nil {
			return err
		}
	}
	return r.queue(q, n, name, prov, req, nil)
}

// queue records a run of n on provider name, counts it, reserves its
// tokens and takes a slot, and queues it for dispatch once the tick
// commits; req is the request when the tick built it, else nil: its run
// renders it from member when set (a council member's), else its run
// builds it (runRequest). The request and the run are passed by pointer:
// most dispatches have no request, and each is a few hundred bytes to
// copy. Every dispatch of the tick comes here, and none is made that the
// quest's budgets refuse (budget.go).
func (r *tickRound) queue(q *Quest, n *Node, name string, prov Provider, req *agent.Request, member *memberPrompt) error {
	reserve := budget.Reservation(r.t.opt.MaxTokens, name)
	if why := budget.Admit(q, n, name, reserve); why != "" {
		return r.refuse(q, n, why)
	}
	run, err := r.t.planRun(q, n, name, reserve)
	if err != nil {
		return err
	}
	q.Counters.AgentRuns++
	r.slots--
	// Filled in place: a composite literal appended would be built and
	// then copied. The slot may be an earlier tick's: zeroed first.
	if len(r.ds) < cap(r.ds) {
		r.ds = r.ds[:len(r.ds)+1]
	} else {
		r.ds = append(r.ds, dispatch{}) // not reached: mostDispatches bounds them
	}
	d := &r.ds[len(r.ds)-1]
	*d = dispatch{}
	d.quest, d.node, d.run, d.member, d.prov, d.req, d.opt = q, n, *run, member, prov, req, r.t.opt
	r.rep.Dispatched = append(r.rep.Dispatched, n.ID)
	return nil
}

// activeQuests reads (without tracking) every active quest in the order the
// tick serves them:
// the one that waited longest since its last dispatch first (then the
// oldest quest). Slots go to the front of the queue, and a quest that
// dispatches moves to its back, so under max_parallel every quest with
// work is dispatched within ceil(quests / max_parallel) ticks of the
// previous dispatch (when runs end within a tick). The order comes from
// DispatchSeq, written with the dispatch itself: fairness costs no write.
//
// When the tickmem.QuestCache is current (own transaction, nothing written yet,
// every commit since it was validated learned), each active quest is a
// copy of its entry and no quest record is read; else each record is read
// and compared with its entry, and the cache is validated for the next
// transaction, unless a quest came from the transaction's own reads.
func (t *txn) activeQuests() ([]*Quest, error) {
	var qs []*Quest
	if t.scratch != nil {
		qs = t.scratch.quests[:0]
	}
	// own: the engine's transaction alone (not a group commit's, whose
	// earlier writes are not committed), so the quests bucket is as last
	// committed until the transaction saves its quests at its end.
	own := t.e.store.shared.in(t.tx) == nil
	if own {
		var refs []tickmem.CachedRef
		if t.scratch != nil {
			refs = t.scratch.refs[:0]
		}
		refs, ok := t.e.decoded.CurrentSet(t.tx, t.quests, refs)
		if t.scratch != nil {
			t.scratch.refs = refs
		}
		if ok {
			return t.cachedActive(qs, refs), nil
		}
	}
	current := own && t.e.decoded.Current(t.tx)
	validate := own && !current
	// The active index and the quests bucket are both keyed by quest id:
	// walking them side by side reads each active quest with a step of
	// the quests cursor (or a few, past finished quests) instead of a
	// search from the root.
	qc := t.tx.Quests().Cursor()
	var qk, qv []byte
	c := t.tx.Active().Cursor()
	t.walk = &runningWalk{c: t.tx.Running().Cursor()}
	defer func() { t.walk = nil }()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		id := string(k)
		if q, ok := t.quests[id]; ok {
			qs = append(qs, q) // read (and maybe changed) earlier in the transaction
			validate = false   // its entry was not compared here
			continue
		}
		// Carved from a slab: a thousand active quests cost a few dozen
		// allocations.
		q := t.allocQuest()
		if current && t.e.decoded.GetCurrent(id, q, t.slabs.MapsOf(q)) {
			t.fromCache = true
			qs = append(qs, t.adoptQuest(id, q))
			continue
		}
		for step := 0; qk != nil && bytes.Compare(qk, k) < 0 && step < 8; step++ {
			qk, qv = qc.Next()
		}
		if qk == nil || bytes.Compare(qk, k) < 0 {
			qk, qv = qc.Seek(k)
		}
		raw := qv
		if !bytes.Equal(qk, k) {
			raw = nil
		}
		q, err := t.cachedQuestInto(id, raw, q, own)
		if err != nil {
			return nil, err
		}
		// A record that is not active under the active index has no
		// entry: the cache cannot give this set.
		validate = validate && q.Status == QuestActive
		qs = append(qs, q)
	}
	if validate {
		t.e.decoded.Validated(t.tx, qs)
	}
	return t.sortActive(qs), nil
}

// cachedActive is activeQuests from the tickmem.QuestCache's active set (refs,
// currentSet): each quest a copy of its entry, or the transaction's own
// when it read the quest already; neither a record nor the active index
// is read.
func (t *txn) cachedActive(qs []*Quest, refs []tickmem.CachedRef) []*Quest {
	t.walk = &runningWalk{c: t.tx.Running().Cursor()}
	defer func() { t.walk = nil }()
	for _, r := range refs {
		if q, ok := t.quests[r.ID]; ok {
			qs = append(qs, q)
			continue
		}
		q := t.allocQuest()
		tickmem.TickCopyInto(q, r.Quest, t.slabs.MapsOf(q))
		t.fromCache = true
		qs = append(qs, t.adoptQuest(r.ID, q))
	}
	clear(refs) // holds no quest past the tick
	return t.sortActive(qs)
}

// sortActive orders qs, the active quests in the active index's order,
// as the tick serves them (sortByDispatch), and keeps them for the next
// tick.
func (t *txn) sortActive(qs []*Quest) []*Quest {
	t.activeRank = sortByDispatch(qs, t.scratch)
	if t.scratch != nil {
		t.scratch.quests = qs
	}
	return qs
}

// sortByDispatch orders qs by DispatchSeq, then by creation ("q9"
// before "q10"; ids not of that form by their bytes), and returns the place each had before, in the new
// order. The keys are sorted beside their quests, read once, ids parsed
// once: a comparison of two quests' fields is two loads from quests
// scattered over the heap, a tick sorts a thousand, and parsing both ids
// was most of a comparison. Keys already in order (no quest dispatched
// since the order was last the active index's) are not sorted.
//
// With s (a tick's), the keys and the ranks are kept in s for the next
// tick.
func sortByDispatch(qs []*Quest, s *tickScratch) []int32 {
	var keys []dispatchKey
	var rank []int32
	if s != nil {
		keys, rank = s.keys[:0], s.rank[:0]
	}
	keys, rank = slices.Grow(keys, len(qs))[:len(qs)], slices.Grow(rank, len(qs))[:len(qs)]
	if s != nil {
		s.keys, s.rank = keys, rank
	}
	for i, q := range qs {
		n, err := strconv.ParseUint(strings.TrimPrefix(q.ID, "q"), 10, 64)
		keys[i] = dispatchKey{q.DispatchSeq, n, q, int32(i), err == nil}
	}
	if !slices.IsSortedFunc(keys, compareDispatchKeys) {
		slices.SortFunc(keys, compareDispatchKeys)
	}
	for i, k := range keys {
		qs[i], rank[i] = k.q, k.rank
	}
	return rank
}

// dispatchKey is what sortByDispatch orders a quest by: its DispatchSeq,
// then its id's number (numeric: the id is "q" and a number).
type dispatchKey struct {
	seq, num uint64
	q        *Quest
	rank     int32
	numeric  bool
}

// compareDispatchKeys orders by DispatchSeq, then by creation: by the
// ids' numbers when both are numeric, else by the ids' bytes.
func compareDispatchKeys(a, b dispatchKey) int {
	if c := cmp.Compare(a.seq, b.seq); c != 0 {
		return c
	}
	if a.numeric && b.numeric {
		return cmp.Compare(a.num, b.num)
	}
	return strings.Compare(a.q.ID, b.q.ID)
}

// OverBudget says which budget a quest has used up, or "", counting its
// wall-clock time up to now.
func (t *txn) OverBudget(q *Quest) string {
	c := q.Counters
	c.WallUsed = t.wallUsed(q)
	return budget.Reached(q.Limits, c)
}

// undefer moves a quest's deferred nodes back to pending. The quest's
// counts say whether it has any, so the index is not looked at for the
// quests (nearly all, on most ticks) that have none.
func (t *txn) undefer(q *Quest) ([]string, error) {
	if q.Counts.Get(Deferred) == 0 {
		return nil, nil
	}
	var ids []string
	b := subRO(t.tx, bDeferred, q.ID)
	if b == nil {
		return nil, nil
	}
	if err := b.ForEach(func(_, v []byte) error { ids = append(ids, string(v)); return nil }); err != nil {
		return nil, err
	}
	for _, id := range ids {
		n, err := t.Node(id)
		if err != nil {
			return nil, err
		}
		if err := t.Move(q, n, Pending, "network is back"); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// open counts the nodes of q that still have work ahead of them.
func open(q *Quest) int {
	c := &q.Counts
	return c.Get(Pending) + c.Get(Running) + c.Get(Deferred) + c.Get(AwaitingConsent) + c.Get(Passed) + c.Get(Proposed)
}

func total(q *Quest) int { return q.Counts.Total() }

// pick chooses the node to dispatch for a quest with nothing running, per
// its mode. done is non-empty when the quest has finished its work. A
// node it reads is read for its dispatch only (records.NodeHead): it must not be
// saved. Unless read is set, it reads no node: it may return nil where a
// pending node waits (an owner node it creates is still returned).
func (t *txn) pick(q *Quest, read bool) (n *Node, done string, err error) {
	if total(q) == 0 {
		return nil, "", nil // an external quest waiting for `scan`
	}
	if q.Mode == ModeSolo {
		if open(q) == 0 {
			return nil, ReasonNoWork, nil
		}
		if !read {
			return nil, "", nil
		}
		n, err = t.firstPending(q)
		return n, "", err
	}
	// Team: the owner runs when proposals have accumulated or nothing is
	// pending; otherwise the oldest pending worker.
	if id := t.pendingOwner(q); id != "" {
		if !read {
			return nil, "", nil
		}
		n, err = t.NodeHead(id)
		return n, "", err
	}
	every := q.Limits.OwnerEvery
	if every <= 0 {
		every = 3
	}
	waiting := q.Counts.Get(Deferred) + q.Counts.Get(AwaitingConsent)
	pending := q.Counts.Get(Pending) > 0
	if len(q.PhaseGates) > 0 {
		// Nodes a phase gate holds are no work the owner waits for.
		id, err := council.FirstDispatchable(t, q)
		if err != nil {
			return nil, "", err
		}
		pending = id != ""
	}
	if q.Counts.Get(Proposed) >= every || (!pending && waiting == 0) {
		owner, dup, err := t.NewOwner(q, q.Counts.Get(Proposed) > 0)
		if err != nil {
			return nil, "", err
		}
		// An owner of this round already exists when its run was not
		// counted (it went deferred before reaching its provider): it
		// waits for the network; never dispatch a node that is not
		// pending. Meanwhile the oldest pending worker may run.
		if !dup || owner.Status == Pending {
			return owner, "", nil
		}
	}
	if !read {
		return nil, "", nil
	}
	if len(q.PhaseGates) == 0 {
		n, err = t.firstPending(q)
		return n, "", err
	}
	id, err := council.FirstDispatchable(t, q)
	if err == nil && id != "" {
		n, err = t.NodeHead(id)
	}
	return n, "", err
}

// pendingOwner is the quest's pending owner node, kept on the quest by move
// so that the tick never scans pending nodes.
func (t *txn) pendingOwner(q *Quest) string { return q.Queued[RoleOwner] }

// ownerHypothesis is the hypothesis of the quest's owner node of round
// (its round-th owner turn), with proposals to review or without.
func ownerHypothesis(q *Quest, proposals bool, round int) string {
	hyp := fmt.Sprintf("Nothing is pending for %q: spawn new work or finish the quest.", q.Direction)
	if proposals {
		hyp = fmt.Sprintf("Review the proposals for %q: promote, abort, spawn or finish.", q.Direction)
	}
	return fmt.Sprintf("%s (owner round %d)", hyp, round)
}

// NewOwner creates the quest's next owner node, numbered by the owner
// turns the quest has had: "owner round 3" is its third. The rounds so
// far are found in the quest's hypothesis index (owner hypotheses carry
// their round, which also keeps them apart for the duplicate check), one
// lookup per round, only when an owner is due, from the first round the
// tick does not know of (tickmem.OwnerRounds). When the latest owner has
// not finished (it went deferred before reaching its provider, or waits
// for consent), it is returned with dup set: a round never opens twice.
//
// A tick's transaction (t.slabs set) teaches the engine the rounds it
// read; no other does (see tickmem.OwnerRounds).
func (t *txn) NewOwner(q *Quest, proposals bool) (*Node, bool, error) {
	round, last := 1, []byte(nil)
	if hb := subRO(t.tx, bHyps, q.ID); hb != nil {
		if k, ok := t.e.owners.Get(q.ID, q.Direction); ok {
			id := hb.Get(hypKey(ownerHypothesis(q, true, k.Next-1)))
			if id == nil {
				id = hb.Get(hypKey(ownerHypothesis(q, false, k.Next-1)))
			}
			if string(id) == k.Last {
				round, last = k.Next, id
			}
		}
		for ; ; round++ {
			id := hb.Get(hypKey(ownerHypothesis(q, true, round)))
			if id == nil {
				id = hb.Get(hypKey(ownerHypothesis(q, false, round)))
			}
			if id == nil {
				break
			}
			last = id
		}
		if t.slabs != nil && last != nil && t.Pristine(q) {
			t.e.owners.Put(q.ID, tickmem.OwnerRound{Direction: q.Direction, Next: round, Last: string(last)})
		}
		// A store from before owners were numbered by round has gaps;
		// never reuse one of its hypotheses.
		for hb.Get(hypKey(ownerHypothesis(q, proposals, round))) != nil {
			round++
		}
	}
	if last != nil {
		prev, err := t.Node(string(last))
		if err != nil {
			return nil, false, err
		}
		if !prev.Status.Terminal() {
			return prev, true, nil
		}
	}
	return t.NewNode(q, nil, RoleOwner, ownerHypothesis(q, proposals, round), Pending, "")
}

// markUnrecorded notes that run's result waits to be written because of
// err, or (nil) that it no longer does.
func (e *Engine) markUnrecorded(run string, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err == nil {
		delete(e.unrecorded, run)
		return
	}
	e.unrecorded[run], e.recordErr = true, err
}

// Unrecorded returns how many finished runs wait for their result to be
// committed, and the latest reason; 0 and nil when every result is stored.
func (e *Engine) Unrecorded() (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.unrecorded) == 0 {
		return 0, nil
	}
	return len(e.unrecorded), e.recordErr
}

// Wait blocks until every run in flight has completed and been recorded.
func (e *Engine) Wait() { e.wg.Wait() }

// InFlight is the number of runs in flight.
func (e *Engine) InFlight() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.inflight)
}

// Shutdown stops dispatching, lets runs finish within grace, then cancels
// the rest: their nodes go back to pending with an interrupted attempt.
func (e *Engine) Shutdown(grace time.Duration) {
	e.mu.Lock()
	e.closing = true
	e.mu.Unlock()
	done := make(chan struct{})
	go func() { e.wg.Wait(); close(done) }()
	if grace > 0 {
		t := e.clock.NewTimer(grace)
		defer t.Stop()
		select {
		case <-done:
			return
		case <-t.C():
		}
	}
	e.cancelRun()
	<-done
}

// Serve ticks at every multiple of every (aligned to the clock, e.g. on the
// minute) until ctx ends. onTick, if set, is called after each tick (the
// systemd watchdog is fed there).
//
// Active quests spend their wall_clock budget while Serve runs, and only
// then (see engine/budget/wallclock.go); when ctx ends, Serve stores what
// they used before it returns. One Serve runs at a time: a second call
// returns an error at once.
//
// Between ticks, Serve dispatches the follow-up work the commits enable
// (a Team's next stage, a council's members and merge, a retry after a
// FAIL) as each commit lands, in passes of its own (chain.go): it is the
// one goroutine that dispatches. Wait, while Serve runs, also waits for
// the work the results it waits for enable.
func (e *Engine) Serve(ctx context.Context, every time.Duration, onTick func(TickReport, error)) error {
	s, err := e.beginServing()
	if err != nil {
		return err
	}
	defer e.endServing(s)
	e.chain.Start()
	defer e.chain.Stop()
	for {
		now := e.clock.Now()
		next := now.Truncate(every).Add(every)
		if !e.awaitTick(ctx, next.Sub(now)) {
			return nil // ctx ended
		}
		// Real time, not the engine's clock: this measures the work (for
		// the tick duration metric), it decides nothing.
		start := time.Now()
		rep, err := e.Tick(ctx)
		rep.Took = time.Since(start)
		if onTick != nil {
			onTick(rep, err)
		}
		if err != nil {
			e.log.Error("tick failed", "err", err)
		}
	}
}

// awaitTick waits d on the engine's clock for the next tick, making the
// follow-up passes that fall due meanwhile, and reports false when ctx
// ended first. Its timer is stopped before it returns, so a fake clock
// never counts a wait that is over.
func (e *Engine) awaitTick(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := e.clock.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C():
			return true
		case <-e.chain.Wake():
			e.followUpPass()
		}
	}
}

// replay dispatches the oldest pending node of q whose answer was kept when
// its network stage could not run: the kept answer is judged again, no agent
// is asked (and no agent run is counted), even for external quests.
func (t *txn) replay(q *Quest) (dispatch, bool, error) {
	before := slices.Clone(q.Replays)
	defer func() {
		if !slices.Equal(before, q.Replays) {
			t.Track(q)
		}
	}()
	for len(q.Replays) > 0 {
		id := q.Replays[0]
		q.Replays = q.Replays[1:]
		n, err := t.Node(id)
		if err != nil {
			return dispatch{}, false, err
		}
		if n.Status == Deferred && n.Claim != nil && n.Claim.Replay {
			// Still offline: the tick brings deferred nodes back before
			// it gets here when the network is up. Keep the queue as it
			// is, so that an offline tick writes nothing.
			q.Replays = append([]string{id}, q.Replays...)
			return dispatch{}, false, nil
		}
		if n.Status != Pending || n.Claim == nil || !n.Claim.Replay {
			continue // answered or aborted since
		}
		req, err := t.request(q, n)
		if err != nil {
			return dispatch{}, false, err
		}
		run, err := t.newRun(q, n, "replay")
		if err != nil {
			return dispatch{}, false, err
		}
		return dispatch{quest: q, node: n, run: run, req: &req, prov: replayProvider(n.Claim.Raw), opt: t.opt}, true, nil
	}
	return dispatch{}, false, nil
}

// replayProvider answers with a kept answer.
type replayProvider string

func (r replayProvider) Run(ctx context.Context, _ agent.Request) (agent.Reply, error) {
	return agent.Reply{Output: []byte(r), TokensReported: true}, ctx.Err()
}

// idle reports whether a tick would have nothing to do: no active quest and
// no consent request that could expire.
func (e *Engine) idle() bool {
	idle := false
	_ = e.store.view(func(tx *store.Tx) error {
		// The quest cache knows, while current, whether any quest is
		// active without the active index's pages.
		none, known := e.decoded.NoneActive(tx)
		if !known {
			first, _ := tx.Active().Cursor().First()
			none = first == nil
		}
		noConsent, _ := tx.Consent().Cursor().First()
		idle = none && (noConsent == nil || e.conf().ConsentExpiry <= 0)
		return nil
	})
	return idle
}

// egressStop stops q, before anything is sent, when provider name's vendor
// is not one q's egress allows, or an L2 judge tier's is (the answer
// would go to it): the quest was created when the provider was of
// another vendor (the configuration changed since). It reports whether
// it stopped q.
func (r *tickRound) egressStop(q *Quest, name string) (bool, error) {
	if len(q.Egress) == 0 {
		return false, nil
	}
	why := r.e.notAllowed(q, name)
	if why == "" {
		why = r.e.judgeNotAllowed(q)
	}
	if why == "" {
		return false, nil
	}
	return true, r.t.SetQuestStatus(q, QuestStopped, why+"; nothing was sent. Declare the provider's vendor again, or start a new quest")
}
