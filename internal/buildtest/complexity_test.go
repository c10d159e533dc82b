package buildtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// maxComplex is how many functions of the module, harnesses included, may
// have a cyclomatic complexity over complexLimit. A function that branches
// that much hides a rule in its control flow; it reads better as a table
// or as the named steps it already takes. The functions of test files are
// counted too (the rigs, fakes and checkers tests share), except the
// bodies of the Test, Benchmark, Fuzz and Example functions themselves:
// a test's body is a list of cases and checks that reads top to bottom.
const (
	complexLimit = 25
	maxComplex   = 2
)

// cyclomatic counts a function's decision points the way gocyclo does:
// one, plus one per if, for, range, non-default case or select clause,
// && and ||.
func cyclomatic(body ast.Node) int {
	n := 1
	ast.Inspect(body, func(x ast.Node) bool {
		switch x := x.(type) {
		case *ast.FuncLit:
			// A closure is counted with the function that holds it, as
			// gocyclo does: the reader meets its branches there.
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			n++
		case *ast.CaseClause:
			if x.List != nil {
				n++
			}
		case *ast.CommClause:
			if x.Comm != nil {
				n++
			}
		case *ast.BinaryExpr:
			if x.Op == token.LAND || x.Op == token.LOR {
				n++
			}
		}
		return true
	})
	return n
}

type complexFunc struct {
	name string
	n    int
}

// moduleFuncs returns every function of the module's Go files (generated
// files and the entry points of tests aside, see maxComplex) with its
// complexity, the most complex first.
func moduleFuncs(t *testing.T) []complexFunc {
	t.Helper()
	root := moduleRoot(t)
	var funcs []complexFunc
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			if strings.HasSuffix(path, "_test.go") && isTestEntry(fn) {
				continue
			}
			name := fn.Name.Name
			if fn.Recv != nil && len(fn.Recv.List) == 1 {
				name = recvName(fn.Recv.List[0].Type) + "." + name
			}
			funcs = append(funcs, complexFunc{fmt.Sprintf("%s %s", rel, name), cyclomatic(fn.Body)})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(funcs, func(i, j int) bool { return funcs[i].n > funcs[j].n })
	return funcs
}

// testEntries are the prefixes of the functions go test calls itself.
var testEntries = []string{"Test", "Benchmark", "Fuzz", "Example"}

// isTestEntry reports whether fn is one go test runs: a plain function
// named for one of testEntries, the prefix followed by nothing or by a
// character that is not a lower-case letter (so "Testify" is a helper).
func isTestEntry(fn *ast.FuncDecl) bool {
	if fn.Recv != nil {
		return false
	}
	name := fn.Name.Name
	for _, prefix := range testEntries {
		if rest, ok := strings.CutPrefix(name, prefix); ok {
			r, _ := utf8.DecodeRuneInString(rest)
			return rest == "" || !unicode.IsLower(r)
		}
	}
	return false
}

func recvName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recvName(e.X)
	case *ast.IndexExpr:
		return recvName(e.X)
	case *ast.IndexListExpr:
		return recvName(e.X)
	case *ast.Ident:
		return e.Name
	}
	return "?"
}

func TestFewFunctionsBranchTooMuch(t *testing.T) {
	funcs := moduleFuncs(t)
	if len(funcs) < 1000 {
		t.Fatalf("found %d functions in the module; the walk missed its files", len(funcs))
	}
	var over []string
	for _, f := range funcs {
		if f.n > complexLimit {
			over = append(over, fmt.Sprintf("%4d  %s", f.n, f.name))
		}
	}
	if len(over) > maxComplex {
		t.Errorf("%d functions have a cyclomatic complexity over %d, at most %d may:\n%s",
			len(over), complexLimit, maxComplex, strings.Join(over, "\n"))
	}
}

func TestTestEntriesAreNotCounted(t *testing.T) {
	src := `package p
func Test(t *T) {}
func TestX(t *T) {}
func Test_x(t *T) {}
func BenchmarkX(b *B) {}
func FuzzX(f *F) {}
func ExampleX() {}
func Testify() {}
func rig() {}
func (r rig) TestX() {}
`
	f, err := parser.ParseFile(token.NewFileSet(), "p_test.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"Test": true, "TestX": true, "Test_x": true, "BenchmarkX": true,
		"FuzzX": true, "ExampleX": true, "Testify": false, "rig": false}
	for i, decl := range f.Decls {
		fn := decl.(*ast.FuncDecl)
		w := want[fn.Name.Name]
		if fn.Recv != nil {
			w = false
		}
		if got := isTestEntry(fn); got != w {
			t.Errorf("decl %d: isTestEntry(%s) = %v, want %v", i, fn.Name.Name, got, w)
		}
	}
}

func TestCyclomaticCountsDecisions(t *testing.T) {
	src := `package p
func f(a, b bool, xs []int, c chan int) {
	if a && b || a { }
	for range xs { }
	for i := 0; i < 1; i++ { }
	switch { case a: ; case b: ; default: }
	select { case <-c: ; default: }
	_ = func() { if a { } }
}`
	f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	// 1 + if + && + || + range + for + 2 cases + 1 comm clause + closure's if
	if got, want := cyclomatic(f.Decls[0].(*ast.FuncDecl).Body), 10; got != want {
		t.Errorf("cyclomatic = %d, want %d", got, want)
	}
}
