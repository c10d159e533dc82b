// Package api is the daemon's one typed API (docs/design.md, "The dashboard
// and the API", "The CLI"): net/http handlers over the engine and the box,
// with JSON view types of their own.
//
// The same handler serves three doors:
//
//   - the control socket (questbox.sock, mode 0660, peers checked with
//     SO_PEERCRED) that the CLI talks to while a daemon runs;
//   - an in-process pipe, when no daemon runs: the CLI serves these
//     handlers itself over the store it opened, so every verb has one code
//     path and gives the same output and exit code both ways;
//   - the dashboard's listen address (behind its authentication).
//
// Nothing the engine stores is marshalled to a client: every response is a
// view type of this package (view.go), pinned by golden tests. Errors are
// one JSON shape, {"error": {"code": ..., "message": ...}}, whose code is
// stable. One table (errors.go) gives every error value its code, every
// code its HTTP status and the CLI's exit code (ExitCodeOf).
package api
