package api

import (
	"context"
	"errors"
	"io"
	"net/http"
)

// MaxRelease bounds a release uploaded to POST /api/update (the binary and
// its signature, as multipart/form-data).
const MaxRelease = 64 << 20

// Updater installs releases on the box: the daemon gives one to the
// dashboard's door (its upload) and none to the others (the routes then
// answer unavailable; the CLI has `questbox update`). Both methods are
// safe for concurrent use.
type Updater interface {
	// Install checks binary and its minisign signature sig and, when they
	// pass, stages the release and has the daemon restart into it. A
	// refused release changes nothing and its error is an *Error saying
	// why (CodeInvalid: unsigned, another key, a bad signature, another
	// machine; CodeConflict: an update is on trial already).
	Install(ctx context.Context, binary, sig []byte) (UpdateStatus, error)
	// Status says what runs, is on trial and is kept for rollback.
	Status() (UpdateStatus, error)
}

// UpdateStatus is GET /api/update, and POST /api/update's answer.
type UpdateStatus struct {
	// Running is the version of the daemon answering.
	Running string `json:"running"`
	// Committed is the version the box starts (a trial aside).
	Committed string `json:"committed,omitempty"`
	// Rollback is the version kept for a rollback, if any.
	Rollback string `json:"rollback,omitempty"`
	// Trial is the version on trial or staged for the next start.
	Trial string `json:"trial,omitempty"`
	// Last says what the last update did (committed, rolled back, why).
	Last string `json:"last,omitempty"`
}

// updateStatus is the firmware the box runs and the releases it holds
// (UpdateStatus).
func (s *Server) updateStatus(w http.ResponseWriter, r *http.Request) {
	s.guard(w, r, func() error {
		if s.opt.Update == nil {
			return errorf(CodeUnavailable, "updates are installed with `questbox update` on the box")
		}
		st, err := s.opt.Update.Status()
		if err != nil {
			return err
		}
		return ok(w, st)
	})
}

// updateInstall installs a signed release uploaded as multipart/form-data
// (parts binary and signature), checked as `questbox update` checks it.
func (s *Server) updateInstall(w http.ResponseWriter, r *http.Request) {
	s.guard(w, r, func() error {
		if s.opt.Update == nil {
			return errorf(CodeUnavailable, "updates are installed with `questbox update` on the box")
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxRelease+1<<20)
		mr, err := r.MultipartReader()
		if err != nil {
			return errorf(CodeInvalid, "send the release as multipart/form-data with the parts binary and signature")
		}
		var bin, sig []byte
		for {
			p, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return uploadErr(err)
			}
			var limit int64
			var dst *[]byte
			switch p.FormName() {
			case "binary":
				limit, dst = MaxRelease, &bin
			case "signature":
				limit, dst = 64<<10, &sig
			default:
				continue
			}
			b, err := io.ReadAll(io.LimitReader(p, limit+1))
			if err != nil {
				return uploadErr(err)
			}
			if int64(len(b)) > limit {
				return errorf(CodeTooLarge, "the %s part is larger than %d bytes", p.FormName(), limit)
			}
			*dst = b
		}
		if len(bin) == 0 {
			return errorf(CodeInvalid, "no binary part: choose the release file")
		}
		st, err := s.opt.Update.Install(r.Context(), bin, sig)
		if err != nil {
			return err
		}
		return ok(w, st)
	})
}

func uploadErr(err error) error {
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return errorf(CodeTooLarge, "the upload is larger than %d bytes", MaxRelease)
	}
	return errorf(CodeInvalid, "the upload cannot be read: %v", err)
}
