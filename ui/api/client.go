package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// Client is a typed client of the API. Every method returns an *Error on
// failure: the server's, or one with CodeUnavailable when the daemon could
// not be reached or stopped answering.
type Client struct {
	hc    *http.Client
	where string // for messages: "daemon on /run/questbox/questbox.sock"
}

// NewClient returns a client over hc (whose transport reaches the API);
// where names the server in transport errors.
func NewClient(hc *http.Client, where string) *Client { return &Client{hc: hc, where: where} }

// SocketClient is an http.Client that reaches the API on the control
// socket at path.
func SocketClient(path string) *http.Client {
	d := net.Dialer{Timeout: time.Second}
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, "unix", path)
		},
		DisableKeepAlives: true,
	}}
}

// do sends a request and decodes the answer into out (nil: discard).
func (c *Client) do(ctx context.Context, method, path string, body io.Reader, contentType string, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, "http://questbox"+path, body)
	if err != nil {
		return errorf(CodeInvalid, "%v", err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return errorf(CodeUnavailable, "%s: interrupted: %v", c.where, ctx.Err())
		}
		return errorf(CodeUnavailable, "%s: %v: daemon unavailable", c.where, unwrapURL(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return c.failed(resp)
	}
	dec := json.NewDecoder(resp.Body)
	if out == nil {
		return nil
	}
	if err := dec.Decode(out); err != nil {
		return errorf(CodeUnavailable, "%s: read the answer: %v: daemon unavailable", c.where, err)
	}
	return nil
}

// failed is the error a response other than 200 carries.
func (c *Client) failed(resp *http.Response) error {
	var eb errorBody
	if err := json.NewDecoder(resp.Body).Decode(&eb); err != nil || eb.Error == nil {
		return errorf(CodeUnavailable, "%s answered %s without an error message", c.where, resp.Status)
	}
	return eb.Error
}

func unwrapURL(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return ue.Err
	}
	return err
}

func (c *Client) get(ctx context.Context, path string, out any) error {
	return c.do(ctx, http.MethodGet, path, nil, "", out)
}

func (c *Client) post(ctx context.Context, path string, in, out any) error {
	raw, err := json.Marshal(in)
	if err != nil {
		return errorf(CodeInvalid, "%v", err)
	}
	return c.do(ctx, http.MethodPost, path, bytes.NewReader(raw), "application/json", out)
}

func p(format string, ids ...string) string {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = url.PathEscape(id)
	}
	return fmt.Sprintf(format, args...)
}

// Health is GET /healthz.
func (c *Client) Health(ctx context.Context) (h Health, err error) {
	return h, c.get(ctx, "/healthz", &h)
}

// Quests is GET /api/quests.
func (c *Client) Quests(ctx context.Context) (qs []Quest, err error) {
	return qs, c.get(ctx, "/api/quests", &qs)
}

// NewQuest is POST /api/quests.
func (c *Client) NewQuest(ctx context.Context, req NewQuest) (q Quest, err error) {
	return q, c.post(ctx, "/api/quests", req, &q)
}

// Quest is GET /api/quests/{id}.
func (c *Client) Quest(ctx context.Context, id string) (d QuestDetail, err error) {
	return d, c.get(ctx, p("/api/quests/%s", id), &d)
}

// StopQuest is POST /api/quests/{id}/stop. cmd.Source "" is the door's
// source (the CLI's on the socket).
func (c *Client) StopQuest(ctx context.Context, id string, cmd QuestCommand) (q Quest, err error) {
	return q, c.post(ctx, p("/api/quests/%s/stop", id), cmd, &q)
}

// ResumeQuest is POST /api/quests/{id}/resume. cmd.Source "" is the
// door's source.
func (c *Client) ResumeQuest(ctx context.Context, id string, cmd QuestCommand) (q Quest, err error) {
	return q, c.post(ctx, p("/api/quests/%s/resume", id), cmd, &q)
}

// Status is GET /api/quests/{id}/status.
func (c *Client) Status(ctx context.Context, id string) (s Status, err error) {
	return s, c.get(ctx, p("/api/quests/%s/status", id), &s)
}

// Next is GET /api/quests/{id}/next.
func (c *Client) Next(ctx context.Context, quest string) (n Next, err error) {
	return n, c.get(ctx, p("/api/quests/%s/next", quest), &n)
}

// Scan is POST /api/quests/{id}/scan.
func (c *Client) Scan(ctx context.Context, quest string, hypotheses []string) (s Scan, err error) {
	return s, c.post(ctx, p("/api/quests/%s/scan", quest), ScanRequest{Hypotheses: hypotheses}, &s)
}

// Submit is POST /api/quests/{id}/submit?node=N with the answer as the body.
func (c *Client) Submit(ctx context.Context, quest, node string, answer []byte) (v Verdict, err error) {
	path := p("/api/quests/%s/submit", quest) + "?node=" + url.QueryEscape(node)
	return v, c.do(ctx, http.MethodPost, path, bytes.NewReader(answer), "application/octet-stream", &v)
}

// Node is GET /api/nodes/{id}.
func (c *Client) Node(ctx context.Context, id string) (n Node, err error) {
	return n, c.get(ctx, p("/api/nodes/%s", id), &n)
}

// AbortNode is POST /api/nodes/{id}/abort.
func (c *Client) AbortNode(ctx context.Context, id, reason string) (n Node, err error) {
	return n, c.post(ctx, p("/api/nodes/%s/abort", id), AbortRequest{Reason: reason}, &n)
}

// Rules is GET /api/rules: the rules of quest's profile, of gate, or (both
// "") the built-in kinds and the default profile.
func (c *Client) Rules(ctx context.Context, quest, gate string) (r Rules, err error) {
	return r, c.get(ctx, withQuery("/api/rules", "quest", quest, "gate", gate), &r)
}

// withQuery is path with the query of the pairs key, value in kv whose
// value is not "" (filters left out), or path itself when there are none.
func withQuery(path string, kv ...string) string {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			q.Set(kv[i], kv[i+1])
		}
	}
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return path
}

// Presets is GET /api/presets: the presets of a new quest.
func (c *Client) Presets(ctx context.Context) (p []Preset, err error) {
	return p, c.get(ctx, "/api/presets", &p)
}

// Verify is GET /api/verify.
func (c *Client) Verify(ctx context.Context) (v Verify, err error) {
	return v, c.get(ctx, "/api/verify", &v)
}

// Events is GET /api/events?since=SEQ&limit=N (limit 0: the server's page).
func (c *Client) Events(ctx context.Context, since uint64, limit int) (e Events, err error) {
	path := "/api/events?since=" + strconv.FormatUint(since, 10)
	if limit > 0 {
		path += "&limit=" + strconv.Itoa(limit)
	}
	return e, c.get(ctx, path, &e)
}

// Consents is GET /api/consents.
func (c *Client) Consents(ctx context.Context) (cs []Consent, err error) {
	return cs, c.get(ctx, "/api/consents", &cs)
}

// Tick is POST /api/tick.
func (c *Client) Tick(ctx context.Context) (t Tick, err error) {
	return t, c.post(ctx, "/api/tick", struct{}{}, &t)
}

// Device is GET /api/device.
func (c *Client) Device(ctx context.Context) (d Device, err error) {
	return d, c.get(ctx, "/api/device", &d)
}

// Press is POST /api/device/press.
func (c *Client) Press(ctx context.Context, req PressRequest) (ps []Press, err error) {
	return ps, c.post(ctx, "/api/device/press", req, &ps)
}

// ExportBegin is POST /api/quests/{id}/export.
func (c *Client) ExportBegin(ctx context.Context, quest string, req ExportRequest) (b Export, err error) {
	return b, c.post(ctx, p("/api/quests/%s/export", quest), req, &b)
}

// ExportAck is POST /api/quests/{id}/export/ack.
func (c *Client) ExportAck(ctx context.Context, quest, token string) error {
	return c.post(ctx, p("/api/quests/%s/export/ack", quest), ExportAckRequest{Token: token}, nil)
}

// ExportAbort is POST /api/quests/{id}/export/abort.
func (c *Client) ExportAbort(ctx context.Context, quest, file string) error {
	return c.post(ctx, p("/api/quests/%s/export/abort", quest), ExportAbortRequest{File: file}, nil)
}

// ExportTo writes the quest's terminal nodes not exported yet to w as
// JSONL, each batch followed by its signature line (ExportSealLine), then
// acknowledges them: at least once (if this process dies between writing
// and acknowledging, the next export repeats those lines; each carries
// its node id).
func (c *Client) ExportTo(ctx context.Context, quest string, w io.Writer) (int, error) {
	b, err := c.ExportBegin(ctx, quest, ExportRequest{})
	if err != nil || len(b.Lines) == 0 {
		return 0, err
	}
	for _, line := range b.batchLines() {
		if _, err := io.WriteString(w, line); err != nil {
			return 0, errorf(CodeInvalid, "export %s: write: %v", quest, err)
		}
	}
	if err := c.ExportAck(ctx, quest, b.Token); err != nil {
		return 0, err
	}
	return len(b.Lines), nil
}

// batchLines are the lines an export writes of batch b: its nodes, then
// its signature.
func (b Export) batchLines() []string {
	if b.Seal == "" {
		return b.Lines
	}
	return append(slices.Clip(b.Lines), b.Seal)
}

// ExportFile appends the quest's terminal nodes not exported yet to the
// file at path (absolute), exactly once across failures and crashes: the
// API journals the batch with the file's size; the lines are appended and
// synced (the file and its directory) before they are acknowledged. A batch
// that was never acknowledged — this process died, or the disk filled — is
// sent again with the same offset, and the file is cut back to it first, so
// no line is ever in the file twice and none is skipped.
func (c *Client) ExportFile(ctx context.Context, quest, path string) (int, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return 0, errorf(CodeInvalid, "export %s: %v", quest, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, errorf(CodeInvalid, "export %s: %v", quest, err)
	}
	b, err := c.ExportBegin(ctx, quest, ExportRequest{File: path, Size: fi.Size()})
	if err != nil || len(b.Lines) == 0 {
		return 0, err
	}
	if b.TruncateTo == nil {
		return 0, errorf(CodeInternal, "export %s: the API gave no offset for a file export", quest)
	}
	off := *b.TruncateTo
	if err := writeAt(f, off, b.batchLines()); err != nil {
		// Cut the file back and drop the journal, so the next export may
		// go anywhere; if even that fails, the journal stays and the next
		// export to this file cuts it back itself.
		if terr := cutBack(f, off); terr == nil {
			c.ExportAbort(context.WithoutCancel(ctx), quest, path)
		}
		return 0, errorf(CodeInvalid, "export %s: write %s: %v (nothing was exported; the file is as it was)", quest, path, err)
	}
	if err := c.ExportAck(ctx, quest, b.Token); err != nil {
		err.(*Error).Message = fmt.Sprintf("%s (the %d lines written to %s are not acknowledged yet: the next `questbox export %s --out %s` writes them again in their place, once)",
			err.Error(), len(b.Lines), path, quest, path)
		return 0, err
	}
	return len(b.Lines), nil
}

// writeAt cuts f to off, appends lines there and syncs the file and its
// directory (a file this export created must survive a power cut too).
func writeAt(f *os.File, off int64, lines []string) error {
	if err := f.Truncate(off); err != nil {
		return err
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return err
	}
	var buf bytes.Buffer
	for _, l := range lines {
		buf.WriteString(l)
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(f.Name()))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func cutBack(f *os.File, off int64) error {
	if err := f.Truncate(off); err != nil {
		return err
	}
	return f.Sync()
}
