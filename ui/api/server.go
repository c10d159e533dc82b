package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/questbox/questbox/device/box"
	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/engine/council"
	"github.com/questbox/questbox/gates"
	"github.com/questbox/questbox/internal/config"
)

// Limits on what a request may carry. A Pi Zero has 512 MB: no request may
// make the daemon hold much of it.
const (
	// MaxAnswer is the largest answer body read: one byte past the gate's
	// limit, so an oversize answer is judged (a FAIL that says how large it
	// was) without reading the rest.
	MaxAnswer = gates.MaxAnswerBytes + 1
	// MaxHypotheses bounds a scan's hypotheses (JSON).
	MaxHypotheses = 1 << 20
	// maxBody bounds every other JSON request.
	maxBody = 64 << 10
	// maxEventsPage bounds one page of /api/events.
	maxEventsPage = 1000
)

// Engines gives handlers the engine. write says whether the request may
// change the store: a source without a daemon opens the store read-only
// for reads. An error (the store is in use, corrupt, or the daemon waits
// for a repair) is sent to the client with its code.
type Engines interface {
	Engine(ctx context.Context, write bool) (*engine.Engine, error)
}

// Options configure a Server.
type Options struct {
	Engines Engines
	// Config gives the gate profiles (rules) and is never changed.
	Config *config.Config
	// Loaded, when set, gives the configuration in force instead of
	// Config: a daemon's, which its reload (SIGHUP) replaces. /healthz
	// then reports its generation and when it was loaded.
	Loaded func() LoadedConfig
	// Box is the daemon's LEDs and button; nil when no daemon runs (the
	// device routes then answer unavailable).
	Box *box.Box
	// Version is reported by /healthz.
	Version string
	Log     *slog.Logger
	// Consent, if set, lets this door approve and reject consent requests
	// (L3) with the source it returns; nil refuses them (403). Only the
	// dashboard sets it, and only when the owner enabled dashboard consent.
	Consent ConsentSource
	// Source is where this door's commands come from when a request names
	// none (QuestCommand): "" is the CLI (the control socket and the
	// in-process door); the dashboard sets SourceDashboard.
	Source Source
	// Update installs releases (POST /api/update) and says what runs (GET
	// /api/update); nil answers unavailable. The daemon gives it to the
	// dashboard's door only.
	Update Updater
	// Internal sends the message of an unexpected (internal) error to the
	// client. The control socket and the in-process door set it; the
	// network door does not, and logs it instead.
	Internal bool
}

// LoadedConfig is a configuration in force, with its generation and when
// it was loaded (Options.Loaded).
type LoadedConfig struct {
	Config     *config.Config
	Generation uint64
	At         time.Time
}

// Server is the API's handlers. It is safe for concurrent use.
type Server struct {
	opt Options
	mux *http.ServeMux
}

// New returns the API over opt.
func New(opt Options) *Server {
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	s := &Server{opt: opt, mux: http.NewServeMux()}
	s.routes()
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

func (s *Server) routes() {
	m := s.mux
	m.HandleFunc("GET /healthz", s.health)
	m.HandleFunc("GET /api/quests", s.read(s.questList))
	m.HandleFunc("POST /api/quests", s.write(s.questNew))
	m.HandleFunc("GET /api/quests/{id}", s.read(s.questShow))
	m.HandleFunc("POST /api/quests/{id}/stop", s.write(s.questStop))
	m.HandleFunc("POST /api/quests/{id}/resume", s.write(s.questResume))
	m.HandleFunc("GET /api/quests/{id}/status", s.read(s.status))
	m.HandleFunc("GET /api/quests/{id}/result", s.read(s.result))
	m.HandleFunc("GET /api/quests/{id}/next", s.read(s.next))
	m.HandleFunc("POST /api/quests/{id}/scan", s.write(s.scan))
	m.HandleFunc("POST /api/quests/{id}/submit", s.write(s.submit))
	m.HandleFunc("POST /api/quests/{id}/export", s.write(s.export))
	m.HandleFunc("POST /api/quests/{id}/export/ack", s.write(s.exportAck))
	m.HandleFunc("POST /api/quests/{id}/export/abort", s.write(s.exportAbort))
	m.HandleFunc("GET /api/nodes/{id}", s.read(s.node))
	m.HandleFunc("POST /api/nodes/{id}/abort", s.write(s.abortNode))
	m.HandleFunc("GET /api/rules", s.rules)
	m.HandleFunc("GET /api/presets", s.presets)
	m.HandleFunc("GET /api/choices", s.read(s.choices))
	m.HandleFunc("GET /api/verify", s.read(s.verify))
	m.HandleFunc("GET /api/backup", s.internalOnly(s.read(s.backup)))
	m.HandleFunc("POST /api/restore", s.internalOnly(s.restore))
	m.HandleFunc("GET /api/events", s.read(s.events))
	m.HandleFunc("GET /api/events/watch", s.read(s.watchEvents))
	m.HandleFunc("GET /api/consents", s.read(s.consents))
	m.HandleFunc("GET /api/consents/{node}", s.read(s.consentShow))
	m.HandleFunc("POST /api/consents/{node}/approve", s.write(s.consentApprove))
	m.HandleFunc("POST /api/consents/{node}/reject", s.write(s.consentReject))
	m.HandleFunc("POST /api/tick", s.write(s.tick))
	m.HandleFunc("GET /api/device", s.device)
	m.HandleFunc("POST /api/device/press", s.press)
	m.HandleFunc("GET /api/runs", s.read(s.runList))
	m.HandleFunc("GET /api/runs/{run}/log", s.read(s.runLog))
	m.HandleFunc("GET /api/update", s.updateStatus)
	m.HandleFunc("POST /api/update", s.updateInstall)
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, errorf(CodeNotFound, "no such API route: %s %s", r.Method, r.URL.Path))
	})
}

// engineHandler is a handler that needs the engine.
type engineHandler func(w http.ResponseWriter, r *http.Request, eng *engine.Engine) error

func (s *Server) read(h engineHandler) http.HandlerFunc  { return s.withEngine(false, h) }
func (s *Server) write(h engineHandler) http.HandlerFunc { return s.withEngine(true, h) }

func (s *Server) withEngine(write bool, h engineHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.guard(w, r, func() error {
			eng, err := s.opt.Engines.Engine(r.Context(), write)
			if err != nil {
				return err
			}
			return h(w, r, eng)
		})
	}
}

// guard runs fn and sends its error; a panic — bbolt asserts on a page it
// cannot read — becomes an unavailable store naming the repair commands,
// never a crash of the daemon.
func (s *Server) guard(w http.ResponseWriter, r *http.Request, fn func() error) {
	defer func() {
		if p := recover(); p != nil {
			s.opt.Log.Error("BUG: API handler panicked", "method", r.Method, "path", r.URL.Path, "panic", p, "stack", string(debug.Stack()))
			s.fail(w, r, errorf(CodeUnavailable, "the store failed while reading (%v): it may be corrupt; check it with `questbox verify` and recover what is readable with `questbox salvage`", p))
		}
	}()
	if err := fn(); err != nil {
		s.fail(w, r, err)
	}
}

// fail sends err as the API's error shape.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	e := ErrorOf(err)
	if e.Code == CodeInternal {
		s.opt.Log.Error("API request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		if !s.opt.Internal {
			e = errorf(CodeInternal, "internal error; the daemon's log has the details")
		}
	}
	writeJSON(w, HTTPStatus(e.Code), errorBody{Error: e})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

func ok(w http.ResponseWriter, v any) error {
	writeJSON(w, http.StatusOK, v)
	return nil
}

// decode reads a JSON body of at most limit bytes into v, refusing
// unknown fields and trailing data.
func decode(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, limit))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return errorf(CodeTooLarge, "request body is over %d bytes", limit)
		}
		if errors.Is(err, io.EOF) {
			return errorf(CodeInvalid, "request body is empty; want a JSON object")
		}
		return errorf(CodeInvalid, "request body: %v", err)
	}
	if dec.More() {
		return errorf(CodeInvalid, "request body has more than one JSON value")
	}
	return nil
}

// health is the daemon's health (Health): ok, or waiting with the reason
// when the store was refused and the daemon waits for a repair.
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	h := Health{Status: "ok", Version: s.opt.Version}
	if s.opt.Loaded != nil {
		l := s.opt.Loaded()
		h.Config = &ConfigState{Generation: l.Generation, Loaded: l.At.UTC(), File: l.Config.Path}
	}
	if b := s.opt.Box; b != nil {
		if st, _ := b.Status(); st.Halted != nil {
			h.Status, h.Reason = "waiting", st.Halted.Error()
		}
	}
	writeJSON(w, http.StatusOK, h)
}

// config is the configuration in force (Options.Loaded, else Config).
func (s *Server) config() *config.Config {
	if s.opt.Loaded != nil {
		return s.opt.Loaded().Config
	}
	return s.opt.Config
}

// questList lists the quests. Where no store exists (no daemon, a data
// directory without one) the engine's ErrNoStore says so: a read creates
// nothing, and "no quests" would hide a wrong --data.
func (s *Server) questList(w http.ResponseWriter, r *http.Request, eng *engine.Engine) error {
	qs, err := eng.Quests()
	if err != nil {
		return err
	}
	return ok(w, questViews(qs))
}

// NewQuest is the request of POST /api/quests. Fields left out take the
// config's [defaults]; WallClock is a Go duration ("24h").
type NewQuest struct {
	Name         string   `json:"name"`
	Direction    string   `json:"direction"`
	Mode         *string  `json:"mode,omitempty"`
	Roles        []string `json:"roles,omitempty"`
	Provider     *string  `json:"provider,omitempty"`
	Gate         *string  `json:"gate,omitempty"`
	MaxAgentRuns *int     `json:"max_agent_runs,omitempty"`
	MaxTries     *int     `json:"max_tries,omitempty"`
	WallClock    *string  `json:"wall_clock,omitempty"`
	TokenBudget  *int     `json:"token_budget,omitempty"`
	Checkpoints  []string `json:"checkpoints,omitempty"`
	Project      *string  `json:"project,omitempty"`
	// Council is the make-up of the quest's council, "reviewer:R,judge:J"
	// (docs/design.md, "Councils and Teams"); left out: none.
	// CouncilProviders names, per member kind ("reviewer", "judge"), the
	// provider of every member of that kind instead of the config's [council]
	// lists.
	Council          *string           `json:"council,omitempty"`
	CouncilProviders map[string]string `json:"council_providers,omitempty"`
	// Gates are the phases (roles) closed by a council gate (v3.1); a
	// checkpoint "<phase>_gate" puts the button at that gate.
	Gates []string `json:"gates,omitempty"`
	// RoleProviders names, per role, the provider of its nodes, over the
	// config's [roles.ROLE] provider; Egress lists the vendors the quest
	// may send its material to (default: its provider's vendor and
	// local). An unknown role or provider, or a provider of a vendor the
	// egress does not allow, is refused (400) naming it.
	RoleProviders map[string]string `json:"role_providers,omitempty"`
	Egress        []string          `json:"egress,omitempty"`
	// Teams (v3.2): the owner dispatches Teams, each revised at most
	// max_revisions times (default 2); accept_mode judge (default) or
	// human (the accept is a button consent). Refused in solo mode.
	Teams        bool    `json:"teams,omitempty"`
	MaxRevisions *int    `json:"max_revisions,omitempty"`
	AcceptMode   *string `json:"accept_mode,omitempty"`
}

// questNew creates a quest from a NewQuest body (the flags of `quest new`;
// a field left out takes the config's [defaults]) and answers it (Quest).
func (s *Server) questNew(w http.ResponseWriter, r *http.Request, eng *engine.Engine) error {
	var req NewQuest
	if err := decode(w, r, maxBody, &req); err != nil {
		return err
	}
	spec := eng.NewQuestSpec(req.Name, req.Direction)
	if req.Mode != nil {
		spec.Mode = *req.Mode
	}
	if req.Roles != nil {
		spec.Roles = req.Roles
	}
	if req.Provider != nil {
		spec.Provider = *req.Provider
	}
	if req.Gate != nil {
		spec.Gate = *req.Gate
	}
	if req.MaxAgentRuns != nil {
		spec.Limits.MaxAgentRuns = *req.MaxAgentRuns
	}
	if req.MaxTries != nil {
		spec.Limits.MaxTries = *req.MaxTries
	}
	if req.WallClock != nil {
		d, err := time.ParseDuration(*req.WallClock)
		if err != nil {
			return errorf(CodeInvalid, "wall_clock %q is not a duration such as 24h", *req.WallClock)
		}
		spec.Limits.WallClock = d
	}
	if req.TokenBudget != nil {
		spec.Limits.TokenBudget = *req.TokenBudget
	}
	if req.Checkpoints != nil {
		spec.Checkpoints = req.Checkpoints
	}
	if req.Project != nil {
		spec.Project = *req.Project
	}
	if req.Council != nil {
		r, j, err := council.Parse(*req.Council)
		if err != nil {
			return err
		}
		for kind := range req.CouncilProviders {
			if kind != engine.RoleReviewer && kind != engine.RoleJudge {
				return errorf(CodeInvalid, "council_providers: %q is not reviewer or judge", kind)
			}
		}
		eng.SetCouncil(&spec, r, j, req.CouncilProviders)
	} else if len(req.CouncilProviders) > 0 {
		return errorf(CodeInvalid, "council_providers without a council")
	}
	if req.Gates != nil {
		spec.PhaseGates = req.Gates
	}
	spec.RoleProviders, spec.Egress = req.RoleProviders, req.Egress
	spec.Teams = req.Teams
	if req.MaxRevisions != nil {
		spec.MaxRevisions = *req.MaxRevisions
	}
	if req.AcceptMode != nil {
		spec.AcceptMode = *req.AcceptMode
	}
	q, err := eng.NewQuest(spec)
	if err != nil {
		return err
	}
	return ok(w, QuestView(q))
}

// questShow is a quest with its nodes and edges (QuestDetail).
func (s *Server) questShow(w http.ResponseWriter, r *http.Request, eng *engine.Engine) error {
	q, err := eng.Quest(r.PathValue("id"))
	if err != nil {
		return err
	}
	nodes, err := eng.Nodes(q.ID)
	if err != nil {
		return err
	}
	edges, err := eng.Edges(q.ID)
	if err != nil {
		return err
	}
	return ok(w, DetailView(q, nodes, edges))
}

// questStop pauses a quest (Quest): no new runs start; runs in flight
// finish.
func (s *Server) questStop(w http.ResponseWriter, r *http.Request, eng *engine.Engine) error {
	src, err := s.source(w, r)
	if err != nil {
		return err
	}
	q, err := eng.StopQuest(r.PathValue("id"), src)
	if err != nil {
		return err
	}
	return ok(w, QuestView(q))
}

// questResume resumes a stopped quest (Quest).
func (s *Server) questResume(w http.ResponseWriter, r *http.Request, eng *engine.Engine) error {
	src, err := s.source(w, r)
	if err != nil {
		return err
	}
	q, err := eng.ResumeQuest(r.PathValue("id"), src)
	if err != nil {
		return err
	}
	return ok(w, QuestView(q))
}

// source is where the command of r came from: its QuestCommand body's
// Source, else the door's (Options.Source, else the CLI). An empty body is
// a QuestCommand of zero value.
func (s *Server) source(w http.ResponseWriter, r *http.Request) (engine.Source, error) {
	src := s.opt.Source
	if src == "" {
		src = SourceCLI
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return "", errorf(CodeTooLarge, "request body is over %d bytes", maxBody)
	}
	if err != nil {
		return "", fmt.Errorf("read the request body: %w", err)
	}
	if len(bytes.TrimSpace(body)) > 0 {
		var cmd QuestCommand
		r.Body = io.NopCloser(bytes.NewReader(body))
		if err := decode(w, r, maxBody, &cmd); err != nil {
			return "", err
		}
		if cmd.Source != "" {
			src = cmd.Source
		}
	}
	return engine.Source(src), nil
}

// status is a quest's counts and budgets; a finished quest's also count
// its findings (see Status.Findings).
func (s *Server) status(w http.ResponseWriter, r *http.Request, eng *engine.Engine) error {
	q, err := eng.Quest(r.PathValue("id"))
	if err != nil {
		return err
	}
	if !q.Finished() {
		return ok(w, StatusView(q))
	}
	res, err := eng.Result(q.ID)
	if err != nil {
		return err
	}
	v := StatusView(res.Quest)
	c := findingCounts(res)
	v.Findings = &c
	return ok(w, v)
}

// next is the next node's prompt for an external agent (Next); it
// changes nothing.
func (s *Server) next(w http.ResponseWriter, r *http.Request, eng *engine.Engine) error {
	quest := r.PathValue("id")
	work, err := eng.Next(quest)
	if err != nil {
		return err
	}
	if work == nil {
		return ok(w, Next{Quest: quest})
	}
	return ok(w, Next{Node: &work.Node, Quest: work.Quest, Role: work.Role, Hypothesis: work.Hypothesis,
		Attempt: work.Attempt, Prompt: work.Prompt})
}

// ScanRequest is the request of POST /api/quests/{id}/scan.
type ScanRequest struct {
	Hypotheses []string `json:"hypotheses"`
}

// scan seeds pending nodes from a ScanRequest's hypotheses, skipping
// duplicates (Scan).
func (s *Server) scan(w http.ResponseWriter, r *http.Request, eng *engine.Engine) error {
	var req ScanRequest
	if err := decode(w, r, 2*MaxHypotheses, &req); err != nil {
		return err
	}
	res, err := eng.Scan(r.PathValue("id"), req.Hypotheses)
	if err != nil {
		return err
	}
	return ok(w, Scan{Added: nonNil(res.Added), Skipped: nonNil(res.Skipped)})
}

// submit takes the answer as the raw request body (any bytes, exactly as
// the agent wrote them) and the node as ?node=.
func (s *Server) submit(w http.ResponseWriter, r *http.Request, eng *engine.Engine) error {
	quest, node := r.PathValue("id"), r.URL.Query().Get("node")
	if node == "" {
		return errorf(CodeInvalid, "submit needs ?node=N")
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, MaxAnswer))
	if err != nil {
		return errorf(CodeInvalid, "read the answer: %v", err)
	}
	res, err := eng.Submit(r.Context(), quest, node, raw)
	if err != nil {
		return err
	}
	return ok(w, VerdictView(res))
}

// ExportRequest is the request of POST /api/quests/{id}/export. File is
// the absolute path the client appends to and Size its size now; "" means
// the client prints the lines (at least once: no journal).
type ExportRequest struct {
	File string `json:"file,omitempty"`
	Size int64  `json:"size,omitempty"`
}

// ExportAckRequest acknowledges a batch by its token.
type ExportAckRequest struct {
	Token string `json:"token"`
}

// ExportAbortRequest drops the journal of an export to File that the
// client could not write (it has cut the file back to the journaled size).
type ExportAbortRequest struct {
	File string `json:"file"`
}

// export begins an export (Export): the terminal nodes not exported yet,
// as JSONL lines, with the token that acknowledges them.
func (s *Server) export(w http.ResponseWriter, r *http.Request, eng *engine.Engine) error {
	var req ExportRequest
	if err := decode(w, r, maxBody, &req); err != nil {
		return err
	}
	if req.File != "" && !strings.HasPrefix(req.File, "/") {
		return errorf(CodeInvalid, "export file %q must be an absolute path", req.File)
	}
	b, err := eng.ExportBegin(r.PathValue("id"), req.File, req.Size)
	if err != nil {
		return err
	}
	v := Export{Quest: b.Quest, Lines: make([]string, 0, len(b.Nodes))}
	if len(b.Nodes) > 0 {
		v.Token = fmt.Sprintf("%d-%d", b.From, b.Upto)
	}
	if b.File != "" {
		v.TruncateTo = &b.Offset
	}
	for _, n := range b.Nodes {
		line, err := json.Marshal(ExportRecord{Quest: b.Quest, Node: NodeView(n), Stages: StagesView(b.Stages[n.ID])})
		if err != nil {
			return err
		}
		v.Lines = append(v.Lines, string(line)+"\n")
	}
	if len(v.Lines) > 0 {
		seal, err := json.Marshal(ExportSealLine{Seal: ExportSealView(eng.SealExport(b, v.Lines))})
		if err != nil {
			return err
		}
		v.Seal = string(seal) + "\n"
	}
	return ok(w, v)
}

// exportAck acknowledges an export's batch by its token, so that its
// nodes are never exported again.
func (s *Server) exportAck(w http.ResponseWriter, r *http.Request, eng *engine.Engine) error {
	var req ExportAckRequest
	if err := decode(w, r, maxBody, &req); err != nil {
		return err
	}
	a, b, found := strings.Cut(req.Token, "-")
	from, err1 := strconv.ParseUint(a, 10, 64)
	upto, err2 := strconv.ParseUint(b, 10, 64)
	if !found || err1 != nil || err2 != nil || upto < from {
		return errorf(CodeInvalid, "export token %q is not one this API gave", req.Token)
	}
	quest := r.PathValue("id")
	if err := eng.ExportAck(quest, from, upto); err != nil {
		return err
	}
	return ok(w, ExportAck{Quest: quest})
}

// exportAbort abandons an export begun and not acknowledged.
func (s *Server) exportAbort(w http.ResponseWriter, r *http.Request, eng *engine.Engine) error {
	var req ExportAbortRequest
	if err := decode(w, r, maxBody, &req); err != nil {
		return err
	}
	quest := r.PathValue("id")
	if err := eng.ExportAbort(quest, req.File); err != nil {
		return err
	}
	return ok(w, ExportAck{Quest: quest})
}

// node is one node (Node).
func (s *Server) node(w http.ResponseWriter, r *http.Request, eng *engine.Engine) error {
	n, err := eng.Node(r.PathValue("id"))
	if err != nil {
		return err
	}
	return ok(w, NodeView(n))
}

// AbortRequest is the request of POST /api/nodes/{id}/abort.
type AbortRequest struct {
	Reason string `json:"reason,omitempty"`
}

// abortNode aborts a node that is not terminal, with an AbortRequest's
// reason (Node).
func (s *Server) abortNode(w http.ResponseWriter, r *http.Request, eng *engine.Engine) error {
	var req AbortRequest
	if err := decode(w, r, maxBody, &req); err != nil {
		return err
	}
	n, err := eng.AbortNode(r.PathValue("id"), req.Reason)
	if err != nil {
		return err
	}
	return ok(w, NodeView(n))
}

// rules lists a gate profile's rules: ?quest=Q (the quest's profile, which
// needs the store), ?gate=G, or neither (the built-in kinds and the
// profile new quests use; no store needed).
func (s *Server) rules(w http.ResponseWriter, r *http.Request) {
	s.guard(w, r, func() error {
		quest, gate := r.URL.Query().Get("quest"), r.URL.Query().Get("gate")
		if quest != "" && gate != "" {
			return errorf(CodeInvalid, "rules takes --quest or --gate, not both")
		}
		cfg := s.config()
		v := Rules{Gate: cfg.Defaults.Gate}
		switch {
		case quest != "":
			eng, err := s.opt.Engines.Engine(r.Context(), false)
			if err != nil {
				return err
			}
			q, err := eng.Quest(quest)
			if err != nil {
				return err
			}
			v.Quest, v.Gate = q.ID, q.Gate
			if v.Gate == "" {
				v.Gate = config.DefaultGate
			}
		case gate != "":
			v.Gate = gate
		default:
			v.Kinds = kindsView(gates.Kinds())
		}
		cat, err := cfg.Catalog(v.Gate)
		if err != nil {
			if v.Quest != "" {
				return errorf(CodeInvalid, "quest %s: %v", v.Quest, err)
			}
			return errorf(CodeInvalid, "%v", err)
		}
		v.Rules = rulesView(cat.Describe())
		return ok(w, v)
	})
}

// verify checks the store and the verdict ledger chain (Verify).
func (s *Server) verify(w http.ResponseWriter, r *http.Request, eng *engine.Engine) error {
	rep, err := eng.Verify()
	path := eng.Store().Path()
	if err != nil {
		return fmt.Errorf("verify %s: %w", path, err)
	}
	sig := rep.Signature
	return ok(w, Verify{OK: true, Store: path, Schema: int(rep.Schema), Pages: rep.Pages, Records: rep.Records, LockedNodes: rep.Locked,
		Notes: nonNil(rep.Notes), Signature: LedgerSignature{State: string(sig.State), Key: sig.Key, BoxKey: sig.BoxKey, Seq: sig.Seq, Head: sig.Head, Detail: sig.Detail}})
}

// events returns the events after ?since=SEQ (default 0), at most ?limit=
// (default and cap 1000), oldest first.
func (s *Server) events(w http.ResponseWriter, r *http.Request, eng *engine.Engine) error {
	since, err := queryUint(r, "since", 0)
	if err != nil {
		return err
	}
	limit, err := queryUint(r, "limit", maxEventsPage)
	if err != nil {
		return err
	}
	evs, err := eng.Events(since, int(min(max(limit, 1), maxEventsPage)))
	if err != nil {
		return err
	}
	v := Events{Events: EventViews(evs), Next: since}
	if len(evs) > 0 {
		v.Next = evs[len(evs)-1].Seq
	}
	return ok(w, v)
}

func queryUint(r *http.Request, name string, def uint64) (uint64, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, errorf(CodeInvalid, "?%s=%q is not a whole number", name, s)
	}
	return n, nil
}

// consents are the consent requests waiting for a human, oldest first
// (a list of Consent).
func (s *Server) consents(w http.ResponseWriter, r *http.Request, eng *engine.Engine) error {
	out, err := consentViews(eng)
	if err != nil {
		return err
	}
	return ok(w, out)
}

func (s *Server) noDaemon(verb string) *Error {
	return errorf(CodeUnavailable, "no questbox daemon is running (%s needs `questbox run`)", verb)
}

// device is the box's LEDs, button and consent queue as the daemon
// shows them (Device).
func (s *Server) device(w http.ResponseWriter, r *http.Request) {
	s.guard(w, r, func() error {
		if s.opt.Box == nil {
			return s.noDaemon("device status")
		}
		st, err := s.opt.Box.Status()
		if err != nil {
			return err
		}
		// The queue as GET /api/consents lists it, from the box's engine at
		// the box's time, so the list and the LEDs beside it agree; none
		// before the store opened. The box answers at once, even while the
		// daemon starts (the other routes wait for its engine).
		var cs []Consent
		if eng := s.opt.Box.Engine(); eng != nil {
			if cs, err = consentViewsAt(eng, st.Now); err != nil {
				return err
			}
		}
		return ok(w, DeviceView(st, cs))
	})
}

// PressRequest is the request of POST /api/device/press. Hold is a Go
// duration ("2s"; "" is a short press); Times is 1 to 9 (3 rejects).
type PressRequest struct {
	Hold  string `json:"hold,omitempty"`
	Times int    `json:"times"`
}

// press presses the simulated button (PressRequest: how long, how many
// times) and answers what each press did; refused on real pins.
func (s *Server) press(w http.ResponseWriter, r *http.Request) {
	s.guard(w, r, func() error {
		var req PressRequest
		if err := decode(w, r, maxBody, &req); err != nil {
			return err
		}
		var hold time.Duration
		if req.Hold != "" {
			d, err := time.ParseDuration(req.Hold)
			if err != nil {
				return errorf(CodeInvalid, "device press: hold %q is not a duration such as 2s", req.Hold)
			}
			hold = d
		}
		if hold < 0 || hold > box.MaxPressHold {
			return errorf(CodeInvalid, "device press: --hold %s must be between 0 and %s", hold, box.MaxPressHold)
		}
		if req.Times < 1 || req.Times > box.MaxPressTimes {
			return errorf(CodeInvalid, "device press: --times %d must be between 1 and %d", req.Times, box.MaxPressTimes)
		}
		if s.opt.Box == nil {
			return s.noDaemon("device press")
		}
		got, err := s.opt.Box.Press(r.Context(), hold, req.Times)
		switch {
		case errors.Is(err, box.ErrNotSimulated):
			return errorf(CodeConflict, "%v", err)
		case errors.Is(err, box.ErrStopping):
			return errorf(CodeUnavailable, "device press: %v", err)
		case err != nil:
			return err
		}
		out := make([]Press, len(got))
		for i, p := range got {
			out[i] = Press{Press: p.Press, Kind: p.Kind, Outcome: p.Outcome}
		}
		return ok(w, out)
	})
}
