// Package dashboard is the web dashboard (docs/design.md, "The dashboard and
// the API"): a tiny page embedded in the binary, the daemon's API behind
// authentication, a websocket that keeps the page live, and Prometheus
// metrics, all on one net/http server with its own mux and timeouts, on
// daemon.listen.
//
// # Routes
//
//	GET  /                 the page (index.html, app.css, app.js; gzipped, about 10 KB)
//	GET  /session          what this browser may do: logged in, reading policy, CSRF token
//	POST /login            {"password": "..."}: sets the session cookie
//	POST /logout           ends the session
//	GET  /ws?since=SEQ     the websocket (see hub.go for its frames)
//	GET  /metrics          Prometheus text format (package ui/metrics)
//	GET  /healthz          the API's health, always public
//	     /api/...          the API of package ui/api, the same handlers the CLI uses
//
// The page is a client of the API and of the websocket only: every JSON
// shape it reads is one of the API's view types, and the websocket's frames
// carry what the API serves (its snapshot is built by asking the API).
//
// # Authentication
//
// Reading is public or needs the password (dashboard.read; default
// password). The password is generated on first start and written, in
// clear, to an owner-only file beside the password file, never to the log
// (EnsurePassword); `questbox password` replaces it (SetPassword), with or
// without a running daemon: the daemon reads the file again when it
// changes. Its bcrypt hash and a session key live in the password file,
// mode 0600, in the data directory.
//
// A login sets an HttpOnly, SameSite=Strict cookie (Secure over TLS) that
// the session key signs; every change also needs the session's CSRF token
// in the X-CSRF-Token header and, from a browser, an Origin of this box (or
// of dashboard.origins). The websocket checks its Origin the same way.
// Failed logins are rate limited per address and overall (ratelimit.go).
// GET requests also take HTTP basic auth with the password, for
// Prometheus and scripts.
//
// The changes offered on the network are those a person at the dashboard
// needs: stop and resume a quest, abort a node, approve and reject a
// consent (only with dashboard.consent = true; recorded as an L3 consent
// from "dashboard:owner", bound to the claim hash the page showed), and
// press the virtual button (the sim backend only). Every other change
// (new quests, submissions, exports) stays with the CLI on the box.
package dashboard
