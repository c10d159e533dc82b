package api

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/internal/config"
)

// sentinelsOf reads the package files of dir and returns the text of
// every exported error value (var ErrX = errors.New("text")) by name, and
// the file that declares it.
func sentinelsOf(t *testing.T, dir string) (texts map[string]string, files map[string]string) {
	t.Helper()
	texts, files = map[string]string{}, map[string]string{}
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("%s sources: %v (%d files)", dir, err, len(paths))
	}
	fset := token.NewFileSet()
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, name := range vs.Names {
				if !name.IsExported() || !strings.HasPrefix(name.Name, "Err") || i >= len(vs.Values) {
					continue
				}
				call, ok := vs.Values[i].(*ast.CallExpr)
				if !ok || len(call.Args) != 1 {
					continue
				}
				lit, ok := call.Args[0].(*ast.BasicLit)
				if !ok {
					continue
				}
				text, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				texts[name.Name], files[name.Name] = text, filepath.Base(p)
			}
			return false
		})
	}
	return texts, files
}

// TestEverySentinelHasARow pins the error table to the files that declare
// the error values clients meet (engine/domain/errors.go, config/error.go): every
// error value of those packages is declared there, and has a row (a code
// with an HTTP status and an exit code). A new sentinel without a row
// fails here.
func TestEverySentinelHasARow(t *testing.T) {
	for _, pkg := range []struct{ dir, file string }{{"../../engine/domain", "errors.go"}, {"../../internal/config", "error.go"}} {
		texts, files := sentinelsOf(t, pkg.dir)
		if len(texts) < 2 {
			t.Fatalf("found %d sentinels in %s; the parser missed them", len(texts), pkg.dir)
		}
		for name, text := range texts {
			if files[name] != pkg.file {
				t.Errorf("%s.%s is declared in %s; every error value lives in %s", filepath.Base(pkg.dir), name, files[name], pkg.file)
			}
			row := -1
			for i, s := range sentinels {
				if s.err.Error() == text {
					row = i
				}
			}
			if row < 0 {
				t.Errorf("%s.%s (%q) has no row in the error table (ui/api/errors.go)", filepath.Base(pkg.dir), name, text)
				continue
			}
			if _, ok := codes[sentinels[row].code]; !ok {
				t.Errorf("%s.%s: code %q is not in the table of codes", filepath.Base(pkg.dir), name, sentinels[row].code)
			}
		}
	}
	for code, r := range codes {
		if r.status < 400 || r.exit == ExitOK {
			t.Errorf("code %s: status %d, exit %d; want an error status and a non-zero exit", code, r.status, r.exit)
		}
	}
}

// TestErrorTable: what each error value is answered with, over HTTP and as
// the CLI's exit code, and how its message ends.
func TestErrorTable(t *testing.T) {
	for _, tc := range []struct {
		err    error
		code   string
		status int
		exit   int
		ends   string
	}{
		{engine.ErrInUse, CodeUnavailable, 503, ExitStore, "store is in use by another process"},
		{engine.ErrCorrupt, CodeUnavailable, 503, ExitStore, "store is corrupt"},
		{engine.ErrSchema, CodeUnavailable, 503, ExitStore, "store schema is newer than this questbox"},
		{engine.ErrLedgerBroken, CodeUnavailable, 503, ExitStore, "verdict ledger is broken"},
		{engine.ErrStoreFailed, CodeUnavailable, 503, ExitStore, "store unavailable"},
		{engine.ErrReadOnly, CodeUnavailable, 503, ExitStore, "store is open read-only"},
		{engine.ErrNotFound, CodeNotFound, 404, ExitUsage, "not found"},
		{os.ErrNotExist, CodeNotFound, 404, ExitUsage, "file does not exist"},
		{engine.ErrLocked, CodeConflict, 409, ExitUsage, "node is locked"},
		{engine.ErrIllegalMove, CodeConflict, 409, ExitUsage, "illegal status change"},
		{engine.ErrBusy, CodeConflict, 409, ExitUsage, "node is busy"},
		{engine.ErrStaleConsent, CodeConflict, 409, ExitUsage, "consent is void: the claim changed after it was shown"},
		{engine.ErrEventsPruned, CodeConflict, 409, ExitUsage, "events were pruned"},
		{engine.ErrInvalid, CodeInvalid, 400, ExitUsage, "invalid input"},
		{config.ErrInvalid, CodeInvalid, 400, ExitUsage, "invalid config"},
		{config.ErrUnknownGate, CodeInvalid, 400, ExitUsage, "unknown gate profile"},
		{errors.New("disk on fire"), CodeInternal, 500, ExitUsage, "disk on fire"},
		{errorf(CodeInvalid, "submit needs ?node=N"), CodeInvalid, 400, ExitUsage, "submit needs ?node=N: invalid input"},
		{errorf(CodeNotFound, "no such API route: GET /x"), CodeNotFound, 404, ExitUsage, "GET /x: not found"},
		{errorf(CodeForbidden, "not from this uid"), CodeForbidden, 403, ExitStore, "not from this uid"},
		{errorf(CodeUnavailable, "the daemon is stopping"), CodeUnavailable, 503, ExitStore, "the daemon is stopping"},
	} {
		t.Run(tc.err.Error(), func(t *testing.T) {
			err := fmt.Errorf("quest q1: %w", tc.err)
			e := ErrorOf(err)
			if e.Code != tc.code || HTTPStatus(e.Code) != tc.status || ExitCodeOf(err) != tc.exit {
				t.Errorf("got %s %d exit %d, want %s %d exit %d", e.Code, HTTPStatus(e.Code), ExitCodeOf(err), tc.code, tc.status, tc.exit)
			}
			if !strings.HasSuffix(e.Message, tc.ends) {
				t.Errorf("got message %q, want it to end in %q", e.Message, tc.ends)
			}
		})
	}
	if ExitCodeOf(nil) != ExitOK {
		t.Errorf("got exit %d for no error, want 0", ExitCodeOf(nil))
	}
}

// TestStopAndResumeRefusedAsConflict: the README promises 409 conflict for
// an illegal move; stopping a stopped quest and resuming an active one are
// that.
func TestStopAndResumeRefusedAsConflict(t *testing.T) {
	e := newEngines(t)
	hc, stop := InProcess(New(Options{Engines: e, Internal: true}))
	defer stop()
	c := NewClient(hc, "test")
	ctx := context.Background()
	external := engine.ProviderExternal
	q, err := c.NewQuest(ctx, NewQuest{Name: "q", Direction: "find the best free OCR", Provider: &external})
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, err error) {
		t.Helper()
		ae, ok := errors.AsType[*Error](err)
		if !ok || ae.Code != CodeConflict || HTTPStatus(ae.Code) != http.StatusConflict {
			t.Errorf("%s: got %v, want code conflict (409)", what, err)
			return
		}
		if !strings.HasSuffix(ae.Message, ": illegal status change") {
			t.Errorf("%s: got message %q, want it to end in the sentinel's text", what, ae.Message)
		}
	}
	_, err = c.ResumeQuest(ctx, q.ID, QuestCommand{})
	check("resume an active quest", err)
	if _, err := c.StopQuest(ctx, q.ID, QuestCommand{}); err != nil {
		t.Fatal(err)
	}
	_, err = c.StopQuest(ctx, q.ID, QuestCommand{})
	check("stop a stopped quest", err)
}
