package api

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/questbox/questbox/engine"
)

// Backup and restore. GET /api/backup streams one consistent copy of the
// store (engine.Engine.Backup: a read transaction, the engine keeps
// ticking) as application/octet-stream with its Content-Length; the
// client verifies it before keeping it (engine.WriteBackup). POST
// /api/restore takes a backup file as its body and restores it
// (Restorer). Both carry the whole store: only the doors that set
// Options.Internal (the control socket, whose peers are the owner and the
// questbox group, and the in-process door) serve them; the network door
// answers forbidden.

// Restorer is what a source of engines does to restore a backup: stop
// using its store (a daemon stops dispatching, lets its runs be
// interrupted as at shutdown, and closes it), replace the store by the
// file src (engine.Restore), and open it again. A source that is not a
// Restorer answers restore with unavailable.
type Restorer interface {
	Restore(ctx context.Context, backup io.Reader, name string) (engine.RestoreReport, error)
}

// Restore is what POST /api/restore answers.
type Restore struct {
	// Store is the store that now holds the backup; Kept is where the one
	// it replaced was kept ("" if there was none).
	Store string `json:"store"`
	Kept  string `json:"kept,omitempty"`
	// Schema is the backup's schema; Migrated says it was brought to this
	// questbox's.
	Schema   int  `json:"schema"`
	Migrated bool `json:"migrated,omitempty"`
	// Notes say what the restore found and did worth knowing: what the
	// backup's ledger signature was, and that the box signed its head.
	Notes []string `json:"notes,omitempty"`
}

// MaxRestore bounds the body of POST /api/restore.
const MaxRestore = 4 << 30

// TransferTimeout is how long a backup's copy or a restore's upload and
// swap may take on the control socket: a whole store, written to or read
// from an SD card, and for a restore the daemon's stop (daemon.grace) and
// its store's reopen with the full page check. It replaces the socket's
// BodyTimeout and WriteTimeout for these two routes only.
const TransferTimeout = time.Hour

// longTransfer lifts the connection's deadlines to TransferTimeout (a
// door without deadlines ignores it).
func longTransfer(w http.ResponseWriter) {
	rc := http.NewResponseController(w)
	at := time.Now().Add(TransferTimeout)
	_ = rc.SetReadDeadline(at)
	_ = rc.SetWriteDeadline(at)
}

func (s *Server) internalOnly(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.opt.Internal {
			s.fail(w, r, errorf(CodeForbidden, "backup and restore are served only on the control socket (`questbox backup`, `questbox restore`)"))
			return
		}
		h(w, r)
	}
}

// backup streams a verified copy of the store, made while the daemon
// works.
func (s *Server) backup(w http.ResponseWriter, r *http.Request, eng *engine.Engine) error {
	longTransfer(w)
	started := false
	_, err := eng.Backup(w, func(n int64) {
		started = true
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusOK)
	})
	if err != nil && started {
		// The client sees a body shorter than its length, and its copy
		// does not verify.
		s.opt.Log.Error("backup cut short", "err", err)
		return nil
	}
	return err
}

// restore verifies the uploaded backup (the body) and makes it the
// store, keeping the current one beside it (Restore).
func (s *Server) restore(w http.ResponseWriter, r *http.Request) {
	s.guard(w, r, func() error {
		rs, can := s.opt.Engines.(Restorer)
		if !can {
			return errorf(CodeUnavailable, "this door cannot restore a backup")
		}
		longTransfer(w)
		name := r.URL.Query().Get("name")
		if name == "" {
			name = "the uploaded backup"
		}
		rep, err := rs.Restore(r.Context(), http.MaxBytesReader(w, r.Body, MaxRestore), name)
		if err != nil {
			return err
		}
		return ok(w, Restore{Store: rep.Store, Kept: rep.Kept, Schema: int(rep.Schema), Migrated: rep.Migrated, Notes: rep.Notes})
	})
}

// Backup is GET /api/backup: it writes the copy to w and returns its
// size. A copy cut short is an error.
func (c *Client) Backup(ctx context.Context, w io.Writer) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://questbox/api/backup", nil)
	if err != nil {
		return 0, errorf(CodeInvalid, "%v", err)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, errorf(CodeUnavailable, "%s: %v: daemon unavailable", c.where, unwrapURL(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, c.failed(resp)
	}
	n, err := io.Copy(w, resp.Body)
	if err != nil {
		return n, errorf(CodeUnavailable, "%s: the backup was cut short after %d bytes: %v", c.where, n, err)
	}
	if resp.ContentLength >= 0 && n != resp.ContentLength {
		return n, errorf(CodeUnavailable, "%s: the backup was cut short: %d of %d bytes", c.where, n, resp.ContentLength)
	}
	return n, nil
}

// Restore is POST /api/restore with the backup file at path as its body.
func (c *Client) Restore(ctx context.Context, path string) (rep Restore, err error) {
	f, err := os.Open(path)
	if err != nil {
		return rep, errorf(CodeInvalid, "restore: %v", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return rep, errorf(CodeInvalid, "restore: %v", err)
	}
	if fi.IsDir() {
		return rep, errorf(CodeInvalid, "restore %s: is a directory, not a backup", filepath.Clean(path))
	}
	return rep, c.do(ctx, http.MethodPost, "/api/restore?name="+url.QueryEscape(path), f, "application/octet-stream", &rep)
}
