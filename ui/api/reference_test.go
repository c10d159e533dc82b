package api

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/questbox/questbox/internal/reference"
)

// apiReferencePage is the generated reference of the HTTP API.
const apiReferencePage = "../../docs/reference/api.md"

// wrapperNotes say what each wrapper of a handler means for a client.
var wrapperNotes = map[string]string{
	"read":         "reads the store",
	"write":        "writes the store",
	"internalOnly": "control socket only",
}

// TestReferenceAPI generates docs/reference/api.md from the API's mux
// (every route registered in this package), the handlers' doc comments
// and the error table (codes, with their statuses, exit codes and the
// errors answered with each), with the dashboard's own routes, and fails
// when the committed page differs: a route or code in the code and not
// on the page, or the other way round. -update rewrites it.
func TestReferenceAPI(t *testing.T) {
	var b strings.Builder
	b.WriteString(reference.Header("HTTP API reference",
		"The API answers on the control socket (`<data>/questbox.sock`, or `daemon.socket`), which is how\n"+
			"the `questbox` command talks to the daemon, and under `/api/` on the dashboard's address\n"+
			"(`daemon.listen`), where reads need a login unless `dashboard.read = \"public\"` and changes always\n"+
			"do. Bodies and answers are JSON unless a route says otherwise; every error has one shape,\n"+
			"`{\"error\": {\"code\": \"not_found\", \"message\": \"quest q9: not found\"}}`, and clients decide on\n"+
			"its code, never on its message."))

	api := routeRows(t, ".", true)
	b.WriteString("\n## Routes\n\n")
	reference.Table(&b, []string{"route", "what it does", "notes"}, api)

	b.WriteString("\n## Error codes\n\n")
	reference.Table(&b, []string{"code", "HTTP status", "exit code of `questbox`", "meaning", "errors answered with it"}, codeRows(t))

	b.WriteString("\n## The dashboard's own routes\n\n" +
		"On `daemon.listen`, beside `/api/`. Changes need a logged-in session, a page of the dashboard's own\n" +
		"origin (or one in `dashboard.origins`) and the session's CSRF token.\n\n")
	reference.Table(&b, []string{"route", "what it does", "notes"}, routeRows(t, "../dashboard", false))

	page := b.String()
	if err := reference.Lint(page); err != nil {
		t.Error(err)
	}
	reference.Check(t, apiReferencePage, []byte(page), *update)

	// The codes the page lists are the table's, every one.
	for code := range codes {
		if !strings.Contains(page, "| `"+code+"` |") {
			t.Errorf("%s has no row for the error code %s", apiReferencePage, code)
		}
	}
}

// routeRows are the routes registered in the package in dir, with what
// each handler's doc comment says it does. With mux, each route is also
// asked of a real Server: one it does not have would answer with the
// catch-all's "no such API route".
func routeRows(t *testing.T, dir string, mux bool) [][]string {
	t.Helper()
	src, err := reference.Parse(dir)
	if err != nil {
		t.Fatal(err)
	}
	routes, err := src.Routes()
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]string
	for _, r := range routes {
		if r.Pattern == "/" {
			rows = append(rows, []string{"any other", "answers `not_found`", ""})
			continue
		}
		what := userSentences(r.Handler, r.Doc)
		if what == "" {
			t.Errorf("%s: route %q: its handler has no doc comment to say what it does (or a comment above the registration)", dir, r.Pattern)
		}
		var notes []string
		for _, w := range r.Wrappers {
			n, ok := wrapperNotes[w]
			if !ok {
				t.Errorf("%s: route %q: the wrapper %s has no note in wrapperNotes", dir, r.Pattern, w)
			}
			notes = append(notes, n)
		}
		if mux {
			checkRouted(t, r.Pattern)
		}
		rows = append(rows, []string{reference.Code(r.Pattern), reference.Cell(what), strings.Join(notes, "; ")})
	}
	return rows
}

// userSentences is the first paragraph of a handler's doc comment, for
// a client: without the
// handler's Go name ("questList lists" is "Lists", "health is the
// daemon's health" is "The daemon's health"), or the route it repeats ("runLog is GET /api/runs/{run}/log[?follow=1]: the log").
func userSentences(handler, doc string) string {
	text := reference.Paragraph(doc)
	if handler != "" {
		text = strings.TrimPrefix(text, handler+" ")
	}
	if strings.HasPrefix(text, "is GET ") || strings.HasPrefix(text, "is POST ") {
		if _, rest, ok := strings.Cut(text, ": "); ok {
			text = rest
		}
	}
	// "health is the daemon's health": the route is the subject.
	text = strings.TrimPrefix(strings.TrimPrefix(text, "is "), "are ")
	r, n := utf8.DecodeRuneInString(text)
	return string(unicode.ToUpper(r)) + text[n:]
}

// checkRouted asks a Server for pattern with its method and its path
// (wildcards filled in) and fails when the catch-all answers: the page
// would list a route the mux does not serve.
func checkRouted(t *testing.T, pattern string) {
	t.Helper()
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		method, path = http.MethodGet, pattern
	}
	for _, w := range []string{"{id}", "{node}", "{run}"} {
		path = strings.ReplaceAll(path, w, "x1")
	}
	path = strings.ReplaceAll(path, "{$}", "")
	s := New(Options{})
	req, err := http.NewRequest(method, "http://questbox"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, h := s.mux.Handler(req)
	if h != pattern {
		t.Errorf("route %q: the mux routes %s %s to %q", pattern, method, path, h)
	}
}

// codeRows are the error table's codes, in the order of their
// constants, with what each constant's doc comment says.
func codeRows(t *testing.T) [][]string {
	t.Helper()
	src, err := reference.Parse(".")
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]string
	seen := map[string]bool{}
	for _, c := range src.StringConsts() {
		rule, ok := codes[c.Value]
		if !ok || !strings.HasPrefix(c.Name, "Code") {
			continue
		}
		seen[c.Value] = true
		meaning := reference.Text(c.Doc)
		meaning = strings.TrimPrefix(meaning, c.Name+": ")
		// The status is a column of its own.
		meaning = strings.TrimSpace(strings.TrimSuffix(meaning, fmt.Sprintf("HTTP %d.", rule.status)))
		if meaning == "" {
			t.Errorf("error code %s (%s) has no doc comment to say what it means", c.Value, c.Name)
		}
		var errs []string
		for _, s := range sentinels {
			if s.code == c.Value && !slices.Contains(errs, s.err.Error()) {
				errs = append(errs, s.err.Error())
			}
		}
		var quoted []string
		for _, e := range errs {
			quoted = append(quoted, reference.Code(e))
		}
		rows = append(rows, []string{reference.Code(c.Value), fmt.Sprintf("%d %s", rule.status, http.StatusText(rule.status)),
			fmt.Sprint(rule.exit), reference.Cell(meaning), strings.Join(quoted, ", ")})
	}
	for code := range codes {
		if !seen[code] {
			t.Errorf("error code %q has no Code constant with a doc comment in errors.go", code)
		}
	}
	return rows
}
