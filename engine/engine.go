package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/budget"
	"github.com/questbox/questbox/engine/council"
	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/followup"
	"github.com/questbox/questbox/engine/humangate"
	"github.com/questbox/questbox/engine/outbox"
	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/runlog"
	"github.com/questbox/questbox/engine/store"
	"github.com/questbox/questbox/engine/team"
	"github.com/questbox/questbox/engine/tickmem"
	"github.com/questbox/questbox/gates"
	"github.com/questbox/questbox/gates/judge"
	"github.com/questbox/questbox/internal/clock"
)

// Provider turns a prompt into an answer. Implementations must be safe for
// concurrent Run calls and must return promptly when ctx ends. A provider
// that can tell in advance that it cannot run also implements
// [ProviderChecker].
type Provider interface {
	Run(ctx context.Context, req agent.Request) (agent.Reply, error)
}

// Judge is an L2 judge (docs/design.md, "Judge discipline"): it can raise
// doubt about a claim L1 passed, never grant a PASS. *judge.Judge implements
// it.
type Judge interface {
	Batch(ctx context.Context, items []judge.Item, seed uint64) (judge.Batch, error)
	// Fingerprints name the light and heavy tiers' providers: the
	// judge sends a quest's material to their vendors, which the
	// quest's egress must allow (see judgeTiers).
	Fingerprints() (light, heavy judge.Fingerprint)
}

// ProviderExternal is the built-in provider that spawns nothing: an outside
// agent pulls work with Next and answers with Submit.
const ProviderExternal = domain.ProviderExternal

// ProviderDemo is the built-in, deterministic, offline provider the daemon
// wires for `make run`: the default provider of a quest.
const ProviderDemo = "demo"

// The defaults of Options, defined once here: config.Default refers to
// them.
const (
	// DefaultMaxParallel bounds runs in flight across quests.
	DefaultMaxParallel = 2
	// DefaultEventRetention is how many delivered events the outbox keeps.
	DefaultEventRetention = 10000
)

// DefaultQuestDefaults are what `quest new` uses when neither it nor the
// config says otherwise: team mode, the demo provider, the built-in gate
// profile, the four roles and DefaultLimits.
func DefaultQuestDefaults() QuestDefaults {
	return QuestDefaults{Mode: ModeTeam, Provider: ProviderDemo, Gate: DefaultGate,
		Roles: []string{RoleScout, RolePOC, RoleStrategist, RoleOwner}, Checkpoints: []string{}, Limits: domain.DefaultLimits()}
}

// QuestDefaults fill what `quest new` leaves out.
type QuestDefaults struct {
	Mode        string
	Provider    string
	Gate        string // gate profile; default DefaultGate
	Roles       []string
	Checkpoints []string
	Limits      Limits
	// TeamAccept is each team_kind's accept criteria (`[teams.KIND]
	// accept`), copied into a Teams quest at creation.
	TeamAccept map[string]string
}

// Options configure an Engine. Zero values get the documented defaults.
type Options struct {
	Clock clock.Clock  // default: clock.Real; tests pass a clocktest.Clock
	Log   *slog.Logger // default: discard
	// Providers by name. "external" is always available and needs no entry.
	Providers map[string]Provider
	// MaxParallel bounds runs in flight across quests (default
	// DefaultMaxParallel).
	MaxParallel int
	Defaults    QuestDefaults
	// Catalog returns the gate catalog of a quest (default: gates.DefaultCatalog
	// for the "default" profile, an error for any other).
	Catalog func(q *Quest) (*gates.Catalog, error)
	// GateNames lists the gate profiles Catalog serves; NewQuest refuses a
	// quest naming any other, listing these. It is called at every
	// NewQuest. nil: NewQuest asks Catalog instead, with the new quest
	// before it has an id, and refuses the quest with Catalog's error.
	GateNames func() []string
	// Online reports whether the network is up; nil means always online.
	// While it is false, deferred nodes stay deferred.
	Online func() bool
	// Ground returns the grounder of one evaluation (a fresh
	// ground.Snapshot over the box's resolvers). nil means no network: a
	// gate with ground rules defers its nodes.
	Ground func() gates.Grounder
	// Sources maps non-URL citation sources to their text, for the gate and
	// the judge.
	Sources map[string]string
	// Judge is the L2 judge; nil means none is configured.
	Judge Judge
	// EventRetention is how many delivered events the outbox keeps (default
	// DefaultEventRetention).
	EventRetention int
	// ReadOnly makes an engine that only reads: New does not put back
	// nodes a crash left running (that recovery is a write; the daemon and
	// the next writing command do it), and every method that writes
	// returns ErrReadOnly before it changes anything. An engine on a store
	// opened read-only is read-only whatever this says.
	ReadOnly bool
	// OutboxMax bounds the events a durable consumer (MQTT) may leave
	// undelivered; past it the oldest node, quest and device events are
	// dropped, never verdict or consent events (see outbox.go). 0 means no
	// bound; a bound below EventRetention is raised to it.
	OutboxMax int
	// Logs keeps each run's log (its answer, a command's stderr); nil
	// keeps none.
	Logs *runlog.Dir
	// ConsentExpiry, when positive, expires consent requests older than it
	// at the next tick: the node goes back to pending with no try consumed
	// and its agent runs again (a fresh claim asks again).
	ConsentExpiry time.Duration
	// Council names the providers of council members (docs/design.md,
	// "Councils and Teams"); see Engine.SetCouncil.
	Council council.Config
	// Roles configure roles by name: their provider, prompt template and
	// max_tries (docs/design.md, "Roles"; see RoleOptions).
	Roles map[string]RoleOptions
	// Vendors names the vendor of each provider (see Engine.Vendor).
	Vendors map[string]string
	// Redaction masks ([privacy] redact and the configured secrets)
	// every prompt sent to a provider or an L2 judge whose vendor is not
	// local, and every run's log before it reaches the disk; nil masks
	// nothing. See redact.go.
	Redaction *Redaction
	// EgressConsent makes NewQuest ask a human's consent for a quest
	// whose egress names a vendor that is not local ([privacy]
	// egress_consent): until it is given, nothing of the quest leaves the
	// box. See package engine/humangate.
	EgressConsent bool
	// MaxTokens names the providers whose answers are capped, with their
	// cap in tokens (an openai provider's max_tokens): a run on one
	// reserves its cap and a prompt's share of its quest's token_budget,
	// a run on any other a fixed figure (engine/budget).
	MaxTokens map[string]int
}

// Engine runs quests on a Store. It is safe for concurrent use.
type Engine struct {
	store *Store
	// readOnly: every write returns ErrReadOnly (Options.ReadOnly).
	readOnly bool
	clock    clock.Clock
	log      *slog.Logger
	// opt are the options New was given. The fields Reconfigure takes
	// again are read from cur instead (conf), never from here.
	opt Options
	// cur is the options in force: opt with what the latest Reconfigure
	// gave (reload.go). A dispatch keeps the options it was made with
	// (dispatch.opt), and its run is prompted, redacted and judged by
	// them.
	cur atomic.Pointer[Options]
	hub outbox.Hub
	// unpublished is the highest event seq committed by writes queued as
	// data and not yet published (publishQueued); 0: none.
	unpublished atomic.Uint64
	// pruneDue is the commit of the tick whose retention prune waits for
	// the next write of the group commit (pruneLater); 0: none.
	pruneDue atomic.Uint64

	runCtx    context.Context
	cancelRun context.CancelFunc
	wg        sync.WaitGroup

	mu       sync.Mutex                    // guards inflight, abortQueued, starting, closing, unrecorded, dropped, starters, startQueue, lastActive, the slabs, tickScratch
	inflight map[string]context.CancelFunc // node id -> cancel of its run; nil while it waits in startQueue
	// abortQueued are the nodes whose run was aborted while it waited in
	// startQueue: it leaves the queue cancelled.
	abortQueued map[string]bool
	// starters counts the runs in their starting phase (Engine.start), at
	// most startMax; startQueue holds the runs waiting for one of those
	// slots, oldest first. Both count in inflight.
	starters   int
	startMax   int
	startQueue []queuedRun
	// startRoom is startQueue's array from its start, for the next runs
	// to queue in once it is drained.
	startRoom []queuedRun
	// starting counts runs a tick has dispatched (or is committing) but
	// not yet started: their slots are taken.
	starting int
	closing  bool
	// lastActive is how many quests the latest tick read: the next
	// tick sizes its map of quests by it (tickRound.run).
	lastActive int
	// slabFree are the released sets of tick memory a tick carves from
	// (tickslabs.go), at most maxFreeSlabs; slabNeed is what the latest
	// tick carved, which sizes the next one's; slabReuses counts the ticks
	// that took a released set.
	slabFree   []*tickSlabs
	slabNeed   tickmem.SlabNeed
	slabReuses int
	// tickScratch is what the latest tick carved its keys, records and
	// event groups from, for the next (tickslabs.go); nil while a tick
	// uses it.
	tickScratch *tickScratch
	// later is where a tick keeps its running entries until it puts
	// them in key order (flushRunning), kept for the next tick.
	later runningLater
	// unrecorded holds the runs whose result could not be committed yet
	// (a full disk, an I/O error); each keeps retrying.
	unrecorded map[string]bool
	recordErr  error // the latest reason one failed
	// dropped holds runs aborted after their tick committed but before
	// they started: start skips them.
	dropped map[string]bool
	// startHook runs between a tick's commit and the start of its runs
	// (tests abort there).
	startHook func()

	// sess is the running Serve's session, nil when none runs (see
	// engine/budget/wallclock.go). Transactions read it once, at their
	// start.
	sess atomic.Pointer[budget.Session]
	// view is the tick's memory of the active quests' first pending
	// nodes (engine/tickmem).
	view tickmem.PendingView
	// decoded is the tick's memory of the active quests' records,
	// decoded (engine/tickmem).
	decoded tickmem.QuestCache
	// sittings is the tick's memory of the sitting councils' owners
	// (council.Sittings, council.TickSitting).
	sittings sittingOwners
	// owners is the tick's memory of the owner rounds the quests have
	// had (engine/tickmem).
	owners tickmem.OwnerRounds
	// chain is the follow-up work the commits enabled, for Serve's
	// passes (chain.go, engine/followup).
	chain *followup.Chain
}

// New returns an engine on store and puts back to pending every node a crash
// or power cut left running (docs/design.md, "The tick"), unless it is
// read-only (Options.ReadOnly). It commits only when there is such a node.
func New(store *Store, opt Options) (*Engine, error) {
	if opt.Clock == nil {
		opt.Clock = clock.Real{}
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	if opt.MaxParallel <= 0 {
		opt.MaxParallel = DefaultMaxParallel
	}
	if opt.EventRetention <= 0 {
		opt.EventRetention = DefaultEventRetention
	}
	if opt.OutboxMax > 0 && opt.OutboxMax < opt.EventRetention {
		opt.OutboxMax = opt.EventRetention
	}
	if opt.Catalog == nil {
		opt.Catalog = builtinCatalog
	}
	fillDefaults(&opt.Defaults)
	e := &Engine{store: store, clock: opt.Clock, log: opt.Log, opt: opt,
		inflight: map[string]context.CancelFunc{}, abortQueued: map[string]bool{}, unrecorded: map[string]bool{}, dropped: map[string]bool{},
		startMax: startSlots()}
	e.chain = followup.New(chainHost{e})
	cur := opt
	e.cur.Store(&cur)
	e.readOnly = opt.ReadOnly || store.ReadOnly()
	e.runCtx, e.cancelRun = context.WithCancel(context.Background())
	if !e.readOnly {
		if err := e.recoverInterrupted(); err != nil {
			return nil, err
		}
		store.expectFrom(e.runsOut)
		store.afterEachCommit(e.publishQueued)
		if logs := opt.Logs; logs != nil {
			// A result commits only after its run's log is durable: one
			// sync for all the logs of a batch (runlog's package doc).
			store.beforeEachCommit(func() {
				if err := logs.Sync(); err != nil {
					e.log.Warn("run logs not synced", "err", err)
				}
			})
		}
	}
	return e, nil
}

// fillDefaults gives the quest defaults d what they leave out, from
// DefaultQuestDefaults.
func fillDefaults(d *QuestDefaults) {
	def := DefaultQuestDefaults()
	if d.Mode == "" {
		d.Mode = def.Mode
	}
	if d.Provider == "" {
		d.Provider = def.Provider
	}
	if d.Gate == "" {
		d.Gate = def.Gate
	}
	if len(d.Roles) == 0 {
		d.Roles = def.Roles
	}
	if d.Limits == (Limits{}) {
		d.Limits = def.Limits
	}
}

// Store returns the engine's store.
func (e *Engine) Store() *Store { return e.store }

// Now is the engine's clock.
func (e *Engine) Now() time.Time { return e.clock.Now() }

// recoverInterrupted puts nodes left running back to pending with an
// "interrupted" attempt and no try consumed. With none left running it
// writes nothing.
func (e *Engine) recoverInterrupted() error {
	left := false
	err := e.store.view(func(tx *store.Tx) error {
		k, _ := tx.Running().Cursor().First()
		left = k != nil
		return nil
	})
	if err != nil || !left {
		return err
	}
	return e.update(func(t *txn) error {
		type pair struct{ node, run string }
		var left []pair
		err := t.tx.Running().ForEach(func(k, v []byte) error {
			_, node, ok := store.SplitRunningKey(k)
			r, rok := records.ScanRunEntry(v)
			if !ok || !rok {
				return fmt.Errorf("running index entry %q: %w", k, ErrCorrupt)
			}
			left = append(left, pair{node, r.ID})
			return nil
		})
		if err != nil {
			return err
		}
		for _, p := range left {
			n, err := t.Node(p.node)
			if err != nil {
				return err
			}
			q, err := t.Quest(n.Quest)
			if err != nil {
				return err
			}
			// Its agent may have spent tokens that nobody will report:
			// the run is charged its reservation.
			if err := t.EndRun(q, n, p.run, runEnd{outcome: "interrupted", exit: ExitInterrupted, msg: "the daemon stopped during the run (crash or power cut)", unsettled: true}); err != nil {
				return err
			}
			r, _, err := records.GetRun(t.tx, p.run, n.Quest, n.ID)
			if err != nil {
				return err
			}
			n.AddAttempt(Attempt{At: t.now, Run: p.run, Outcome: "interrupted", Feedback: "the daemon stopped during the run"})
			if r.Provider != "replay" && q.Counters.AgentRuns > 0 {
				q.Counters.AgentRuns-- // the agent never answered (a replay never counted one)
			}
			if err := t.Move(q, n, Pending, "interrupted: recovered at start-up, no try consumed"); err != nil {
				return err
			}
			e.log.Warn("node was interrupted; back to pending", "node", n.ID, "quest", q.ID, "run", p.run)
		}
		return nil
	})
}

// NewQuestSpec returns a spec filled with the engine's defaults.
func (e *Engine) NewQuestSpec(name, direction string) QuestSpec {
	d := e.conf().Defaults
	return QuestSpec{Name: name, Direction: direction, Mode: d.Mode, Roles: slices.Clone(d.Roles),
		Provider: d.Provider, Gate: d.Gate, Checkpoints: slices.Clone(d.Checkpoints), Limits: d.Limits,
		TeamAccept: maps.Clone(d.TeamAccept)}
}

// ProviderNames lists the providers this engine can use, sorted, the
// always-present external one included.
func (e *Engine) ProviderNames() []string {
	names := append(slices.Collect(maps.Keys(e.conf().Providers)), ProviderExternal)
	slices.Sort(names)
	return slices.Compact(names)
}

// HasProvider reports whether name is a provider this engine can use.
func (e *Engine) HasProvider(name string) bool {
	_, ok := e.conf().Providers[name]
	return ok || name == ProviderExternal
}

// NewQuest creates an active quest. Unless its provider is external, it
// gets a root scout node whose hypothesis is the direction; external quests
// start empty and are seeded with Scan.
//
// The spec is refused (ErrInvalid, every problem listed) when it could
// never run: an empty name or direction, a mode whose roles cannot make
// progress ([CheckRoles]), a checkpoint that is not a role, a gate profile
// that is not configured (Options.GateNames), a provider that is not configured or whose
// [ProviderChecker] says it cannot run (the quest's, or a role's), a
// role provider for a role the quest cannot have, a negative budget, and
// a provider (the quest's, a role's, a council member's, an L2 judge
// tier's) whose vendor the quest's egress does not allow (see
// settleRoles). With Options.EgressConsent, a quest whose egress names a
// vendor that is not local waits for a human's consent before anything of
// it leaves the box (package engine/humangate).
func (e *Engine) NewQuest(s QuestSpec) (*Quest, error) {
	if err := e.writable(); err != nil {
		return nil, err
	}
	if err := e.validateSpec(&s); err != nil {
		return nil, err
	}
	var out *Quest
	err := e.update(func(t *txn) error {
		var err error
		if out, err = t.newQuest(s); err != nil {
			return err
		}
		// Refused here, the quest's writes roll back with the
		// transaction; the check sees every provider the quest got.
		if err := e.settleRoles(out, &s); err != nil {
			return err
		}
		if e.opt.EgressConsent {
			return humangate.AskEgress(t, out)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (t *txn) newQuest(s QuestSpec) (*Quest, error) {
	seq, err := t.tx.Quests().NextSequence()
	if err != nil {
		return nil, err
	}
	q := &Quest{ID: domain.QuestID(seq), Name: s.Name, Direction: s.Direction, Status: QuestActive, Mode: s.Mode,
		Roles: s.Roles, Provider: s.Provider, Gate: s.Gate, Checkpoints: s.Checkpoints, Limits: s.Limits,
		Counts: domain.EmptyCounts(), Created: t.now, Project: s.Project,
		CouncilReviewers: s.CouncilReviewers, CouncilJudges: s.CouncilJudges, PhaseGates: s.PhaseGates}
	if s.Teams {
		q.Teams, q.MaxRevisions, q.AcceptMode, q.TeamAccept = true, s.MaxRevisions, s.AcceptMode, s.TeamAccept
	}
	// A new quest queues behind the quests dispatched before it existed.
	q.DispatchSeq = t.tx.Runs().Sequence()
	t.startWall(q)
	t.Track(q)
	if err := t.tx.Active().Put([]byte(q.ID), nil); err != nil {
		return nil, err
	}
	if err := t.Emit(Event{Kind: KindQuest, Quest: q.ID, To: string(QuestActive), Reason: "created: " + q.Name, Counters: &q.Counters}); err != nil {
		return nil, err
	}
	if s.Provider != ProviderExternal {
		root, _, err := t.NewNode(q, nil, RoleScout, s.Direction, Pending, "")
		if err != nil {
			return nil, err
		}
		if q.Teams {
			if err := t.OpenTeam(q, root); err != nil {
				return nil, err
			}
		}
	}
	return q, nil
}

// Quest returns one quest.
func (e *Engine) Quest(id string) (*Quest, error) {
	var q *Quest
	err := e.store.view(func(tx *store.Tx) error {
		var ok bool
		var err error
		q, ok, err = getQuest(tx, id)
		if err == nil && !ok {
			err = fmt.Errorf("quest %s: %w", id, ErrNotFound)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	e.liveWall(q)
	return q, nil
}

// Quests returns every quest, oldest first.
func (e *Engine) Quests() ([]*Quest, error) {
	var out []*Quest
	err := e.store.view(func(tx *store.Tx) error {
		running := tx.Running().Cursor()
		return tx.Quests().ForEach(func(k, v []byte) error {
			q := new(Quest)
			if err := records.DecodeQuest(v, q); err != nil {
				return fmt.Errorf("decode quest %s: %w", k, err)
			}
			overlayDispatch(running, q)
			e.liveWall(q)
			out = append(out, q)
			return nil
		})
	})
	slices.SortFunc(out, func(a, b *Quest) int { return a.Created.Compare(b.Created) })
	return out, err
}

// Node returns one node, with its whole attempt log.
func (e *Engine) Node(id string) (*Node, error) {
	var n *Node
	err := e.store.view(func(tx *store.Tx) error {
		var err error
		n, err = records.ReadNodeLog(tx, id)
		return err
	})
	return n, err
}

// Nodes returns a quest's nodes in creation order, each with its whole
// attempt log.
func (e *Engine) Nodes(quest string) ([]*Node, error) {
	var out []*Node
	err := e.store.view(func(tx *store.Tx) error {
		if tx.Quests().Get([]byte(quest)) == nil {
			return fmt.Errorf("quest %s: %w", quest, ErrNotFound)
		}
		b := subRO(tx, bQNodes, quest)
		if b == nil {
			return nil
		}
		return b.ForEach(func(_, id []byte) error {
			n, err := records.ReadNodeLog(tx, string(id))
			out = append(out, n)
			return err
		})
	})
	return out, err
}

// Edges returns a quest's edges in creation order.
func (e *Engine) Edges(quest string) ([]Edge, error) {
	var out []Edge
	err := e.store.view(func(tx *store.Tx) error {
		b := subRO(tx, bEdges, quest)
		if b == nil {
			return nil
		}
		return b.ForEach(func(_, v []byte) error {
			var ed Edge
			err := json.Unmarshal(v, &ed)
			out = append(out, ed)
			return err
		})
	})
	return out, err
}

// SetQuestStatus changes a quest's status with an event. Its wall clock
// stops when it leaves active (its time so far is stored) and starts when
// it becomes active.
func (t *txn) SetQuestStatus(q *Quest, to QuestStatus, reason string) error {
	from := q.Status
	t.foldWall(q)
	q.Status = to
	if to == QuestActive && from != QuestActive {
		t.startWall(q)
	}
	q.Reason = reason
	t.Track(q)
	act := t.tx.Active()
	var err error
	if to == QuestActive {
		err = act.Put([]byte(q.ID), nil)
	} else {
		err = act.Delete([]byte(q.ID))
	}
	if err != nil {
		return err
	}
	return t.Emit(Event{Kind: KindQuest, Quest: q.ID, From: string(from), To: string(to), Reason: reason, Counters: &q.Counters})
}

// StopQuest pauses a quest at a person's command from src: the tick skips
// it; a run in flight finishes. Its wall clock stops until ResumeQuest.
func (e *Engine) StopQuest(id string, src Source) (*Quest, error) {
	if !src.Valid() {
		return nil, fmt.Errorf("stop quest %s: source %q is not one of %v: %w", id, src, Sources, ErrInvalid)
	}
	var out *Quest
	err := e.update(func(t *txn) error {
		q, err := t.Quest(id)
		if err != nil {
			return err
		}
		if q.Status != QuestActive {
			return fmt.Errorf("quest %s is %s, not active: %w", id, q.Status, ErrIllegalMove)
		}
		out = q
		return t.SetQuestStatus(q, QuestStopped, domain.StoppedReason(src))
	})
	return out, err
}

// ResumeQuest makes a stopped quest active again at a person's command
// from src, and clears its stall count.
func (e *Engine) ResumeQuest(id string, src Source) (*Quest, error) {
	if !src.Valid() {
		return nil, fmt.Errorf("resume quest %s: source %q is not one of %v: %w", id, src, Sources, ErrInvalid)
	}
	var out *Quest
	err := e.update(func(t *txn) error {
		q, err := t.Quest(id)
		if err != nil {
			return err
		}
		if q.Status != QuestStopped {
			return fmt.Errorf("quest %s is %s (%s); only a stopped quest resumes: %w", id, q.Status, q.Reason, ErrIllegalMove)
		}
		q.StallSig, q.StallCount, q.StallSigs, q.StallCounts = "", 0, nil, nil
		out = q
		return t.SetQuestStatus(q, QuestActive, domain.ResumedReason(src))
	})
	return out, err
}

// AbortNode aborts any non-terminal node (owner action or `quest
// abort-node`). A run in flight for it is cancelled and its answer dropped.
func (e *Engine) AbortNode(id, reason string) (*Node, error) {
	if reason == "" {
		reason = "aborted by owner"
	}
	var (
		out     *Node
		aborted string // the run the abort ended, if the node was running
	)
	err := e.update(func(t *txn) error {
		n, err := t.Node(id)
		if err != nil {
			return err
		}
		q, err := t.Quest(n.Quest)
		if err != nil {
			return err
		}
		aborted = ""
		if n.Status == Running && len(n.Runs) > 0 {
			aborted = n.Runs[len(n.Runs)-1]
		}
		if n.ID == q.EgressConsent {
			return fmt.Errorf("node %s is quest %s's egress consent: a human gives it or refuses it (button, dashboard); aborting it would hold the quest for ever: %w", n.ID, q.ID, ErrIllegalMove)
		}
		if err := t.Abort(q, n, reason); err != nil {
			return err
		}
		out = n
		return nil
	})
	if err == nil {
		e.cancelInflight(id, aborted)
	}
	return out, err
}

func (t *txn) Abort(q *Quest, n *Node, reason string) error {
	if n.Status == Running {
		if len(n.Runs) > 0 {
			// A run this engine has under way is charged its reservation
			// until its answer comes back with what it spent; one not
			// started yet never will be (cancelInflight drops it).
			e := runEnd{outcome: "aborted", exit: ExitKilled, msg: reason, unsettled: t.e.underway(n.ID)}
			if err := t.EndRun(q, n, n.Runs[len(n.Runs)-1], e); err != nil {
				return err
			}
		}
	}
	n.Reason = reason
	if err := t.Move(q, n, Aborted, reason); err != nil {
		return err
	}
	if err := t.Ledger(n, "ABORTED", nil); err != nil {
		return err
	}
	return team.Aborted(t, q, n)
}

// cancelInflight cancels the run in flight for node. If run was dispatched
// by a tick but has not started yet (the abort landed between the tick's
// commit and the start), it is marked so that start never runs it.
func (e *Engine) cancelInflight(node, run string) {
	e.mu.Lock()
	cancel, ok := e.inflight[node]
	switch {
	case ok && cancel == nil:
		// Queued for a start slot, with no context yet: cancelled
		// when it leaves the queue (startDone).
		e.abortQueued[node] = true
	case cancel == nil && run != "" && e.starting > 0:
		e.dropped[run] = true
	}
	e.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// ScanResult says what Scan did with each hypothesis.
type ScanResult struct {
	Added   []string `json:"added"`   // new node ids
	Skipped []string `json:"skipped"` // hypotheses the quest already had
}

// Scan seeds pending nodes, one per non-empty hypothesis; a hypothesis the
// quest already has (case and spacing aside) is skipped.
func (e *Engine) Scan(quest string, hyps []string) (ScanResult, error) {
	var res ScanResult
	err := e.update(func(t *txn) error {
		res = ScanResult{}
		q, err := t.Quest(quest)
		if err != nil {
			return err
		}
		if q.Status == QuestDone || q.Status == QuestTerminated {
			return fmt.Errorf("quest %s is %s: %w", quest, q.Status, ErrInvalid)
		}
		role := RoleScout
		if !slices.Contains(q.Roles, role) {
			role = domain.WorkerRole(q.Roles)
		}
		for _, h := range hyps {
			if strings.TrimSpace(h) == "" {
				continue
			}
			n, dup, err := t.NewNode(q, nil, role, h, Pending, "")
			if err != nil {
				return err
			}
			if dup {
				res.Skipped = append(res.Skipped, strings.TrimSpace(h))
				continue
			}
			if q.Teams {
				// A seeded hypothesis is a Team, as the root is.
				if err := t.OpenTeam(q, n); err != nil {
					return err
				}
			}
			res.Added = append(res.Added, n.ID)
		}
		return nil
	})
	return res, err
}

// runEnd is how a run ended, as its record keeps it.
type runEnd struct {
	outcome  string
	tokens   int
	cost     float64
	msg      string
	exit     string
	exitCode int
	bytesIn  int64
	bytesOut int64
	// unsettled: the run ends before its answer (an abort, a crash): it
	// is charged its reservation instead of tokens.
	unsettled bool
}

// EndRun closes run id of node n, whose record moves from its running
// entry to the runs bucket (dispatch.go), and settles its tokens on q,
// its quest (settleTokens). An exit already recorded (an abort's
// "killed") stays when e has none.
func (t *txn) EndRun(q *Quest, n *Node, id string, e runEnd) error {
	if id == "" {
		return nil
	}
	b := appendOnly(t.tx.Runs())
	r, ok, err := records.GetRun(t.tx, id, n.Quest, n.ID)
	if err != nil {
		return err
	}
	if !ok {
		t.settleTokens(q, nil, e)
		return nil
	}
	t.settleTokens(q, &r, e)
	r.Ended, r.Outcome, r.CostUSD, r.Error = t.now, e.outcome, e.cost, e.msg
	if e.exit != "" {
		r.Exit, r.ExitCode = e.exit, e.exitCode
	}
	r.BytesIn, r.BytesOut = max(r.BytesIn, e.bytesIn), max(r.BytesOut, e.bytesOut)
	return b.Put([]byte(id), records.AppendRun(make([]byte, 0, 256), &r))
}

// newRun records a dispatch of n and moves it to running. The run's
// record is its running entry until it ends (dispatch.go): its number
// comes from the runs bucket's sequence, and nothing else is written.
//
// The run reserves nothing: newRun makes the runs whose tokens the box
// cannot reserve (an outside agent's answer, a replay); a tick's
// dispatch reserves with planRun.
func (t *txn) newRun(q *Quest, n *Node, provider string) (Run, error) {
	r, err := t.planRun(q, n, provider, 0)
	if err != nil {
		return Run{}, err
	}
	return *r, nil
}

// planRun is newRun for a run that reserves reserve tokens of q's
// token_budget (engine/budget), its run returned as t.planned, valid until
// the next: a tick's dispatch copies it once, into its slot (queue).
func (t *txn) planRun(q *Quest, n *Node, provider string, reserve int) (*Run, error) {
	if t.runs == nil {
		t.runs = t.tx.Runs()
	}
	seq, err := t.runs.NextSequence()
	if err != nil {
		return nil, err
	}
	// Its Name is not stored: a dispatch reads only the node's head, not
	// its runs; readers number a node's runs (see runs.Name).
	t.planned = Run{ID: domain.RunID(seq), Quest: q.ID, Node: n.ID, Role: n.Role,
		Provider: provider, Attempt: n.Tries + 1, Started: t.now, Reserved: reserve}
	// Its number among the node's runs: a head does not carry the list.
	t.planned.Nth = len(n.Runs) + 1
	if n.HeadOnly {
		t.planned.Nth = n.HeadRuns + len(n.Runs) + 1
	}
	if cap(n.Runs) == 0 {
		n.Runs = t.allocRuns() // a head lists no runs: one from the slab
	}
	n.Runs = append(n.Runs, t.planned.ID)
	if t.dispatchedTo != provider || t.dispatchedWhy == "" {
		// Most dispatches of a tick share a provider: one string for them.
		t.dispatchedTo, t.dispatchedWhy = provider, "dispatched to "+provider
	}
	t.dispatching, t.plannedSeq = &t.planned, seq
	err = t.Move(q, n, Running, t.dispatchedWhy)
	t.dispatching, t.plannedSeq = nil, 0
	return &t.planned, err
}
