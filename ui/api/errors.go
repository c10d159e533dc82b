package api

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"

	"github.com/questbox/questbox/config"
	"github.com/questbox/questbox/engine"
)

// Error codes. They are stable: clients (the CLI's exit codes, the
// dashboard, scripts) decide on them, never on the message.
const (
	// CodeInvalid: the request is malformed or names something that cannot
	// be (an empty direction, an unknown mode, a bad flag value). HTTP 400.
	CodeInvalid = "invalid"
	// CodeNotFound: the quest or node does not exist, or no store exists
	// yet (a read without a daemon creates none). HTTP 404.
	CodeNotFound = "not_found"
	// CodeConflict: the request is well formed but the state refuses it (a
	// locked node, an illegal move, a busy node, a stale consent, a real
	// button). HTTP 409.
	CodeConflict = "conflict"
	// CodeTooLarge: the request body is over its limit. HTTP 413.
	CodeTooLarge = "too_large"
	// CodeUnauthorized: the request needs a logged-in session. HTTP 401.
	CodeUnauthorized = "unauthorized"
	// CodeForbidden: this peer may not do that (another uid on the socket,
	// a missing CSRF token, a foreign Origin). HTTP 403.
	CodeForbidden = "forbidden"
	// CodeTooMany: too many failed attempts (logins); the Retry-After
	// header says when to try again. HTTP 429.
	CodeTooMany = "too_many_requests"
	// CodeUnavailable: the store or the daemon cannot serve: in use by
	// another process, corrupt, written by a newer questbox, refusing
	// writes (a full disk), the daemon waiting for a repair or stopping, or
	// a verb that needs a running daemon. HTTP 503.
	CodeUnavailable = "unavailable"
	// CodeInternal: a bug. HTTP 500.
	CodeInternal = "internal"
)

// Error is the one error shape of the API:
//
//	{"error": {"code": "not_found", "message": "quest q9: not found"}}
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Message }

// errorBody is the JSON envelope of an Error.
type errorBody struct {
	Error *Error `json:"error"`
}

// HTTPStatus is the status code an error code is sent with.
func HTTPStatus(code string) int {
	switch code {
	case CodeInvalid:
		return http.StatusBadRequest
	case CodeNotFound:
		return http.StatusNotFound
	case CodeConflict:
		return http.StatusConflict
	case CodeTooLarge:
		return http.StatusRequestEntityTooLarge
	case CodeUnauthorized:
		return http.StatusUnauthorized
	case CodeForbidden:
		return http.StatusForbidden
	case CodeTooMany:
		return http.StatusTooManyRequests
	case CodeUnavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// Exit codes of the CLI (SPEC §8).
const (
	ExitOK     = 0
	ExitUsage  = 1 // usage or input error, a refused request
	ExitStore  = 2 // the store or the daemon is unavailable
	ExitFail   = 3 // the verdict was FAIL
	ExitReview = 4 // the verdict was REVIEW
)

// ExitCode is the CLI's exit code for an error code.
func ExitCode(code string) int {
	switch code {
	case CodeUnavailable, CodeForbidden:
		return ExitStore
	}
	return ExitUsage
}

// errorf is an Error with a code.
func errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// classify maps what the engine, the store or the config returned to an
// Error. Every sentinel the engine documents has its code; anything else is
// internal.
func classify(err error) *Error {
	if e, ok := errors.AsType[*Error](err); ok {
		return e
	}
	code := CodeInternal
	switch {
	case errors.Is(err, engine.ErrInUse), errors.Is(err, engine.ErrCorrupt), errors.Is(err, engine.ErrSchema),
		errors.Is(err, engine.ErrLedgerBroken), errors.Is(err, engine.ErrStoreFailed):
		code = CodeUnavailable
	case errors.Is(err, engine.ErrNotFound), errors.Is(err, fs.ErrNotExist):
		code = CodeNotFound
	case errors.Is(err, engine.ErrLocked), errors.Is(err, engine.ErrIllegalMove), errors.Is(err, engine.ErrBusy),
		errors.Is(err, engine.ErrStaleConsent):
		code = CodeConflict
	case errors.Is(err, engine.ErrInvalid), errors.Is(err, config.ErrInvalid):
		code = CodeInvalid
	}
	return &Error{Code: code, Message: err.Error()}
}

// WriteError sends an error in the API's one shape with its HTTP status.
// Doors in front of the API (the dashboard's authentication) use it so
// that a refused request looks like any other API error.
func WriteError(w http.ResponseWriter, code, message string) {
	writeJSON(w, HTTPStatus(code), errorBody{Error: &Error{Code: code, Message: message}})
}
