package api

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"strings"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/internal/config"
)

// Error codes. They are stable: clients (the CLI's exit codes, the
// dashboard, scripts) decide on them, never on the message.
const (
	// CodeInvalid: the request is malformed or names something that cannot
	// be (an empty direction, an unknown mode, a bad flag value). HTTP 400.
	CodeInvalid = "invalid"
	// CodeNotFound: the quest or node does not exist. HTTP 404.
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
	// a process inside an agent's confinement, a missing CSRF token, a
	// foreign Origin). HTTP 403.
	CodeForbidden = "forbidden"
	// CodeTooMany: too many failed attempts (logins); the Retry-After
	// header says when to try again. HTTP 429.
	CodeTooMany = "too_many_requests"
	// CodeUnavailable: the store or the daemon cannot serve: no store
	// where a read looked (a read creates none), in use by another
	// process, corrupt, written by a newer questbox, refusing
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

// The error table: every error code with its HTTP status, the CLI's exit
// code and its wording, and every error value (sentinel) with its code. It
// is the one place that decides them: the API's handlers answer with it,
// the CLI exits with it (ExitCodeOf), and a test pins that every sentinel
// of engine/domain/errors.go and config/error.go has a row.

// codeRule is what an error code means outside: the HTTP status it is sent
// with, the CLI's exit code, and the error value whose text ends its
// messages (nil when several sentinels share the code and each message
// ends in its own).
type codeRule struct {
	status int
	exit   int
	text   error
}

// codes is the table of error codes.
var codes = map[string]codeRule{
	CodeInvalid:      {http.StatusBadRequest, ExitUsage, engine.ErrInvalid},
	CodeNotFound:     {http.StatusNotFound, ExitUsage, engine.ErrNotFound},
	CodeConflict:     {http.StatusConflict, ExitUsage, nil},
	CodeTooLarge:     {http.StatusRequestEntityTooLarge, ExitUsage, nil},
	CodeUnauthorized: {http.StatusUnauthorized, ExitUsage, nil},
	CodeForbidden:    {http.StatusForbidden, ExitStore, nil},
	CodeTooMany:      {http.StatusTooManyRequests, ExitUsage, nil},
	CodeUnavailable:  {http.StatusServiceUnavailable, ExitStore, nil},
	CodeInternal:     {http.StatusInternalServerError, ExitUsage, nil},
}

// sentinels is the table of error values and the code each is answered
// with: every sentinel of engine/domain/errors.go and config/error.go, and the
// file system's that reach a client. An error that wraps several takes
// the first row it matches (a failed store write that also wraps an I/O
// error is unavailable).
var sentinels = []struct {
	err  error
	code string
}{
	{engine.ErrBackupRefused, CodeInvalid}, // before the reason's own sentinel
	{engine.ErrInUse, CodeUnavailable},
	{engine.ErrCorrupt, CodeUnavailable},
	{engine.ErrSchema, CodeUnavailable},
	{engine.ErrLedgerBroken, CodeUnavailable},
	{engine.ErrStoreFailed, CodeUnavailable},
	{engine.ErrDeviceKey, CodeUnavailable},
	{engine.ErrReadOnly, CodeUnavailable},
	{engine.ErrNoStore, CodeUnavailable}, // before fs.ErrNotExist, which it wraps
	{engine.ErrNotFound, CodeNotFound},
	{fs.ErrNotExist, CodeNotFound},
	{engine.ErrLocked, CodeConflict},
	{engine.ErrIllegalMove, CodeConflict},
	{engine.ErrBusy, CodeConflict},
	{engine.ErrStaleConsent, CodeConflict},
	{engine.ErrEventsPruned, CodeConflict},
	{engine.ErrInvalid, CodeInvalid},
	{config.ErrInvalid, CodeInvalid},
	{config.ErrUnknownGate, CodeInvalid},
}

// HTTPStatus is the status code an error code is sent with (500 for a
// code the table does not have).
func HTTPStatus(code string) int {
	if r, ok := codes[code]; ok {
		return r.status
	}
	return http.StatusInternalServerError
}

// Exit codes of the CLI (docs/design.md, "The CLI").
const (
	ExitOK     = 0
	ExitUsage  = 1 // usage or input error, a refused request
	ExitStore  = 2 // the store or the daemon is unavailable
	ExitFail   = 3 // the verdict was FAIL
	ExitReview = 4 // the verdict was REVIEW
)

// ExitCode is the CLI's exit code for an error code.
func ExitCode(code string) int {
	if r, ok := codes[code]; ok {
		return r.exit
	}
	return ExitUsage
}

// ExitCodeOf is the CLI's exit code for err, whatever returned it: the
// API (an *Error), the engine, the store or the config opened by the CLI
// itself. nil is ExitOK.
func ExitCodeOf(err error) int {
	if err == nil {
		return ExitOK
	}
	return ExitCode(ErrorOf(err).Code)
}

// errorf is an Error with a code.
func errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorOf maps what the engine, the store or the config returned to an
// Error, by the table: every sentinel has its code; anything else is
// internal. Its message ends in the text of the code's sentinel ("…:
// invalid input", "…: not found"), as every error of the engine does.
func ErrorOf(err error) *Error {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.worded()
	}
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			return &Error{Code: s.code, Message: ending(err.Error(), s.err)}
		}
	}
	return &Error{Code: CodeInternal, Message: err.Error()}
}

// worded returns e with its message ending in the text of its code's
// sentinel (an error the API itself found: "submit needs ?node=N: invalid
// input").
func (e *Error) worded() *Error {
	text := codes[e.Code].text
	if text == nil {
		return e
	}
	return &Error{Code: e.Code, Message: ending(e.Message, text)}
}

// ending is msg ending in the text of sentinel, unless msg says it
// already (a store error names the cause after it: "…: store unavailable:
// no space left on device").
func ending(msg string, sentinel error) string {
	if strings.Contains(msg, sentinel.Error()) {
		return msg
	}
	return msg + ": " + sentinel.Error()
}

// WriteError sends an error in the API's one shape with its HTTP status.
// Doors in front of the API (the dashboard's authentication) use it so
// that a refused request looks like any other API error.
func WriteError(w http.ResponseWriter, code, message string) {
	writeJSON(w, HTTPStatus(code), errorBody{Error: (&Error{Code: code, Message: message}).worded()})
}
