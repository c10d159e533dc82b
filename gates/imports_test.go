package gates

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// gates is pure (docs/design.md, "Gates and levels"): no
// questbox package, no network, no clock, no process or file access, no
// randomness. Network facts arrive through ground, which is not this package.
func forbiddenImport(path string) bool {
	switch {
	case strings.HasPrefix(path, "github.com/questbox/"),
		path == "net" || strings.HasPrefix(path, "net/"),
		path == "os" || strings.HasPrefix(path, "os/"),
		path == "time",
		path == "syscall",
		path == "io/ioutil", path == "io/fs",
		path == "math/rand", path == "math/rand/v2", path == "crypto/rand",
		path == "log" || strings.HasPrefix(path, "log/"),
		path == "unsafe", path == "plugin", path == "runtime/cgo", path == "C":
		return true
	}
	return false
}

// TestImportsArePure parses the package's non-test Go files and fails on any
// forbidden direct import, and on package-level variables other than error
// sentinels (no mutable globals).
func TestImportsArePure(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if forbiddenImport(p) {
				t.Errorf("%s imports %q: gates must stay pure", fset.Position(imp.Pos()), p)
			}
		}
		full, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range full.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, s := range g.Specs {
				for _, n := range s.(*ast.ValueSpec).Names {
					if n.Name != "_" && !strings.HasPrefix(n.Name, "Err") {
						t.Errorf("%s: package-level var %s: gates has no mutable globals", fset.Position(n.Pos()), n.Name)
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("got no Go files, want the package's sources")
	}
}

// TestDepsArePure asks the go command for the package's transitive
// dependencies: nothing of ours and nothing of the network may be reachable.
// (os and time are reachable through fmt, so only direct imports are checked
// for those, above.)
func TestDepsArePure(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
		if _, statErr := os.Stat(goBin); statErr != nil {
			t.Skipf("go command not found: %v", err)
		}
	}
	out, err := exec.Command(goBin, "list", "-deps", "-json=ImportPath,Standard", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	n := 0
	for dec.More() {
		var p struct{ ImportPath string }
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		n++
		ip := p.ImportPath
		if ip == "github.com/questbox/questbox/gates" {
			continue
		}
		if strings.HasPrefix(ip, "github.com/questbox/") || ip == "net" || strings.HasPrefix(ip, "net/") || ip == "os/exec" {
			t.Errorf("gates depends on %s", ip)
		}
	}
	if n == 0 {
		t.Fatal("got no dependencies from go list, want at least the package itself")
	}
}
