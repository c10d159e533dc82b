package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"time"

	"github.com/questbox/questbox/engine"
)

// Run is the view of one agent run (docs/design.md, "Runs and their logs"):
// Name is what people read (quest:<quest>:<node>:<k>), ID the store's key;
// either names it in /api/runs/{run}/log.
type Run struct {
	ID       string    `json:"id"`
	Name     string    `json:"name"`
	Quest    string    `json:"quest"`
	Node     string    `json:"node"`
	Role     string    `json:"role"`
	Provider string    `json:"provider"`
	Attempt  int       `json:"attempt"`
	Started  time.Time `json:"started"`
	Ended    time.Time `json:"ended,omitzero"`
	Running  bool      `json:"running"`
	// Exit is how the agent's run ended: answered, timeout, killed,
	// crashed (ExitCode), deferred, interrupted; "" while it runs.
	Exit     string `json:"exit"`
	ExitCode int    `json:"exit_code,omitempty"`
	// Outcome is what the engine made of it: PASS, FAIL, REVIEW,
	// DEFERRED, INTERRUPTED, interrupted, aborted, discarded.
	Outcome string `json:"outcome"`
	Tokens  int    `json:"tokens"`
	// CostUSD is the run's cost in US dollars as its agent CLI reported
	// it; absent when it reported none.
	CostUSD  float64 `json:"cost_usd,omitempty"`
	BytesIn  int64   `json:"bytes_in"`
	BytesOut int64   `json:"bytes_out"`
	Error    string  `json:"error,omitempty"`
	Redacted bool    `json:"redacted"`
	// Log says whether the run's log is kept (it may have been dropped to
	// keep the logs under logs.total).
	Log bool `json:"log"`
}

// RunView is the view of r; logs, when not nil, says whether its log is
// kept.
func RunView(r engine.Run, hasLog func(string) bool) Run {
	name := r.Name
	if name == "" {
		name = r.ID // a run recorded before runs had names
	}
	v := Run{ID: r.ID, Name: name, Quest: r.Quest, Node: r.Node, Role: r.Role, Provider: r.Provider, Attempt: r.Attempt,
		Started: r.Started, Ended: r.Ended, Running: r.Ended.IsZero(), Exit: r.Exit, ExitCode: r.ExitCode, Outcome: r.Outcome,
		Tokens: r.Tokens, CostUSD: r.CostUSD, BytesIn: r.BytesIn, BytesOut: r.BytesOut, Error: r.Error, Redacted: r.Redacted}
	if hasLog != nil {
		v.Log = hasLog(r.ID)
	}
	return v
}

// runList is GET /api/runs?quest=Q&node=N: the runs of a quest, of one
// of its nodes, or of every quest, oldest first.
func (s *Server) runList(w http.ResponseWriter, r *http.Request, eng *engine.Engine) error {
	runs, err := eng.QuestRuns(r.URL.Query().Get("quest"), r.URL.Query().Get("node"))
	if err != nil {
		return err
	}
	var has func(string) bool
	if d := eng.Logs(); d != nil {
		has = d.Has
	}
	out := make([]Run, len(runs))
	for i, run := range runs {
		out[i] = RunView(run, has)
	}
	return ok(w, out)
}

// runLog is GET /api/runs/{run}/log[?follow=1]: the run's log as plain
// text. {run} is a run id, a run name or a node id (its latest run). With
// follow, a run in flight streams (chunked, flushed as it writes) until it
// ends.
func (s *Server) runLog(w http.ResponseWriter, r *http.Request, eng *engine.Engine) error {
	run, err := eng.FindRun(r.PathValue("run"))
	if err != nil {
		return err
	}
	follow := r.URL.Query().Get("follow") != ""
	if !eng.Logs().Has(run.ID) {
		// Sent before any of the log, as an error of the API's shape.
		return eng.RunLog(r.Context(), io.Discard, run.ID, false)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("X-Questbox-Run", run.ID)
	if follow {
		// A run may last longer than the door's write timeout; the
		// stream ends with the run or the client.
		_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
	}
	w.WriteHeader(http.StatusOK)
	fw := flushWriter{w: w}
	if err := eng.RunLog(r.Context(), fw, run.ID, follow); err != nil && r.Context().Err() == nil {
		// The status is sent: the log ends where it broke.
		s.opt.Log.Warn("run log cut short", "run", run.ID, "err", err)
	}
	return nil
}

// flushWriter flushes the response when the log asks (a followed run's
// every chunk).
type flushWriter struct{ w http.ResponseWriter }

func (f flushWriter) Write(p []byte) (int, error) { return f.w.Write(p) }
func (f flushWriter) Flush()                      { http.NewResponseController(f.w).Flush() }

// Runs is GET /api/runs.
func (c *Client) Runs(ctx context.Context, quest, node string) (rs []Run, err error) {
	return rs, c.get(ctx, withQuery("/api/runs", "quest", quest, "node", node), &rs)
}

// RunLog is GET /api/runs/{run}/log: it copies the log to w as it comes
// (with follow, until the run ends) and returns the run's id.
func (c *Client) RunLog(ctx context.Context, run string, follow bool, w io.Writer) (string, error) {
	path := p("/api/runs/%s/log", run)
	if follow {
		path += "?follow=1"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://questbox"+path, nil)
	if err != nil {
		return "", errorf(CodeInvalid, "%v", err)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return "", errorf(CodeUnavailable, "%s: interrupted: %v", c.where, ctx.Err())
		}
		return "", errorf(CodeUnavailable, "%s: %v: daemon unavailable", c.where, unwrapURL(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", c.errorOf(resp)
	}
	if _, err := io.Copy(w, resp.Body); err != nil {
		return "", errorf(CodeUnavailable, "%s: the log stopped: %v", c.where, err)
	}
	return resp.Header.Get("X-Questbox-Run"), nil
}

// errorOf reads an answer that is not 200 as the API's error.
func (c *Client) errorOf(resp *http.Response) error {
	var eb errorBody
	if err := json.NewDecoder(resp.Body).Decode(&eb); err != nil || eb.Error == nil {
		return errorf(CodeUnavailable, "%s answered %s without an error message", c.where, resp.Status)
	}
	return eb.Error
}
