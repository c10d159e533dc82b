// Package reference is for the tests that write the pages of
// docs/reference: it reads doc comments from this module's own source
// (the non-test files of a package, parsed with go/parser) and writes
// Markdown. Each page is generated from the code's own tables (the
// config's schema, the verb registry, the API's mux and error table, the
// MQTT client's topics and entities); its test regenerates it and fails
// when the committed page differs, so a key, verb, flag, topic, entity,
// route or error code cannot exist in one and not the other. [Regenerate]
// rewrites every page after a change.
package reference

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Regenerate is the one command that rewrites every generated reference
// page (docs/reference/*.md and questbox.1) from the code.
const Regenerate = "go test ./internal/config ./ui/api ./ui/mqtt ./cmd/questbox -run '^TestReference' -update"

// Header is the top of a generated Markdown page: its title, a note that
// it is generated and how to regenerate it, and what it covers.
func Header(title, intro string) string {
	return fmt.Sprintf("# %s\n\n> Generated from the code; do not edit by hand. After a change in the code,\n> regenerate every reference page with\n> `%s`.\n\n%s\n", title, Regenerate, intro)
}

// Root is the module's root directory: the nearest directory above the
// working directory (a test's package directory) that has go.mod.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("reference: no go.mod above the working directory")
		}
		dir = up
	}
}

// modulePath is this module's path, as go.mod declares it.
func modulePath(root string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", err
	}
	for l := range strings.SplitSeq(string(b), "\n") {
		if p, ok := strings.CutPrefix(strings.TrimSpace(l), "module "); ok {
			return strings.Trim(strings.TrimSpace(p), `"`), nil
		}
	}
	return "", errors.New("reference: go.mod has no module line")
}

// Source is one package's non-test Go files, parsed with their comments.
type Source struct {
	fset  *token.FileSet
	files []*ast.File
}

// Package parses the package of this module with import path importPath
// (as reflect.Type.PkgPath gives it).
func Package(importPath string) (*Source, error) {
	root, err := Root()
	if err != nil {
		return nil, err
	}
	mod, err := modulePath(root)
	if err != nil {
		return nil, err
	}
	rel, ok := strings.CutPrefix(importPath, mod)
	if !ok {
		return nil, fmt.Errorf("reference: %s is not a package of %s", importPath, mod)
	}
	return Parse(filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(rel, "/"))))
}

// Parse parses the non-test Go files of the package in dir.
func Parse(dir string) (*Source, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	s := &Source{fset: token.NewFileSet()}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(s.fset, name, nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		s.files = append(s.files, f)
	}
	if len(s.files) == 0 {
		return nil, fmt.Errorf("reference: no Go files in %s", dir)
	}
	return s, nil
}

// Field is the documentation of field of the struct type typ: its doc
// comment, or, for a field without one, the doc comment of the block of
// fields it belongs to (the nearest field above it with no blank line
// between: `// CAFile, CertFile and KeyFile configure TLS` above three
// fields), followed by its line comment. "" when the type or the field is
// not found, or has no comment at all.
func (s *Source) Field(typ, field string) string {
	st := s.structType(typ)
	if st == nil {
		return ""
	}
	var block *ast.CommentGroup // the doc of the current block of fields
	owner := ""                 // the field that block documents first
	prevEnd := 0                // the line the previous field ended on
	for _, f := range st.Fields.List {
		start := s.fset.Position(f.Pos()).Line
		switch {
		case f.Doc != nil:
			block, owner = f.Doc, ""
			if len(f.Names) > 0 {
				owner = f.Names[0].Name
			}
		case start > prevEnd+1:
			block = nil // a blank line ends a block
		}
		prevEnd = s.fset.Position(f.End()).Line
		for _, n := range f.Names {
			if n.Name != field {
				continue
			}
			var parts []string
			// A block's comment is this field's too when it is about the
			// block ("BCM 2..27, or -1 ...") or names the field
			// ("CAFile, CertFile and KeyFile ..."), not when it is the
			// first field's own ("ClientID defaults to ...").
			if t := block.Text(); block != nil && (f.Doc != nil || !strings.HasPrefix(t, owner+" ") || strings.Contains(t, field)) {
				parts = append(parts, t)
			}
			if f.Comment != nil {
				parts = append(parts, f.Comment.Text())
			}
			return strings.Join(parts, " ")
		}
	}
	return ""
}

// structType finds the struct type named typ.
func (s *Source) structType(typ string) *ast.StructType {
	ts, _ := s.typeSpec(typ)
	if ts == nil {
		return nil
	}
	st, _ := ts.Type.(*ast.StructType)
	return st
}

// Type is the doc comment of the type name.
func (s *Source) Type(name string) string {
	ts, g := s.typeSpec(name)
	switch {
	case ts == nil:
		return ""
	case ts.Doc != nil:
		return ts.Doc.Text()
	}
	return g.Doc.Text() // type X struct{...}: the comment is the declaration's
}

// typeSpec finds the declaration of the type name.
func (s *Source) typeSpec(name string) (*ast.TypeSpec, *ast.GenDecl) {
	for _, f := range s.files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, spec := range g.Specs {
				if ts := spec.(*ast.TypeSpec); ts.Name.Name == name {
					return ts, g
				}
			}
		}
	}
	return nil, nil
}

// Func is the doc comment of the function name, or of the method name of
// the type recv (a pointer receiver or not) when recv is not "".
func (s *Source) Func(recv, name string) string {
	for _, f := range s.files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Name.Name != name || (fd.Recv == nil) != (recv == "") {
				continue
			}
			if recv != "" && receiver(fd) != recv {
				continue
			}
			return fd.Doc.Text()
		}
	}
	return ""
}

// receiver is the type name of a method's receiver.
func receiver(fd *ast.FuncDecl) string {
	t := fd.Recv.List[0].Type
	if st, ok := t.(*ast.StarExpr); ok {
		t = st.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// A Const is a constant declared with a string literal.
type Const struct {
	Name, Value, Doc string
}

// StringConsts are the package's constants whose value is a string
// literal, with their doc comments (a constant's own, else its line
// comment), in source order.
func (s *Source) StringConsts() []Const {
	var out []Const
	for _, f := range s.files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					v, err := strconv.Unquote(lit.Value)
					if err != nil {
						continue
					}
					doc := vs.Doc.Text()
					if doc == "" {
						doc = vs.Comment.Text()
					}
					out = append(out, Const{Name: n.Name, Value: v, Doc: doc})
				}
			}
		}
	}
	return out
}

// A Route is one registration of an HTTP handler on a mux:
// m.HandleFunc("GET /api/quests/{id}", s.read(s.questShow)).
type Route struct {
	Pattern string
	// Handler is the method or function that answers ("questShow", or
	// "asset" for s.asset("index.html")); "" for a function literal or a
	// method of another value (s.api.ServeHTTP).
	Handler string
	// Wrappers are the calls around it, outermost first (["read"]).
	Wrappers []string
	// Doc is the handler's doc comment; for a function literal or a
	// handler of another value, the comment above the registration.
	Doc string
}

// Routes are the package's calls of HandleFunc or Handle whose pattern
// is a string literal, in source order. The handler of each is the
// innermost function value of its second argument (a call whose last
// argument is not a function value, s.asset("index.html"), is the
// handler itself); its doc is that method's, or function's, own.
func (s *Source) Routes() ([]Route, error) {
	var out []Route
	var err error
	for _, f := range s.files {
		cm := ast.NewCommentMap(s.fset, f, f.Comments)
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			recvName, recvType := "", ""
			if fd.Recv != nil && len(fd.Recv.List[0].Names) > 0 {
				recvName, recvType = fd.Recv.List[0].Names[0].Name, receiver(fd)
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				stmt, ok := n.(*ast.ExprStmt)
				if !ok {
					return true
				}
				r, ok, rerr := s.route(stmt, recvName, recvType)
				if rerr != nil {
					err = rerr
					return false
				}
				if !ok {
					return true
				}
				if r.Doc == "" {
					for _, g := range cm[stmt] {
						r.Doc += g.Text()
					}
				}
				out = append(out, r)
				return true
			})
		}
	}
	return out, err
}

// route reads one registration; ok is false for any other statement.
// recvName and recvType are the enclosing method's receiver, whose
// methods are the handlers (s.questList).
func (s *Source) route(stmt *ast.ExprStmt, recvName, recvType string) (r Route, ok bool, err error) {
	call, isCall := stmt.X.(*ast.CallExpr)
	if !isCall || len(call.Args) != 2 {
		return r, false, nil
	}
	sel, isSel := call.Fun.(*ast.SelectorExpr)
	if !isSel || (sel.Sel.Name != "HandleFunc" && sel.Sel.Name != "Handle") {
		return r, false, nil
	}
	lit, isLit := call.Args[0].(*ast.BasicLit)
	if !isLit || lit.Kind != token.STRING {
		return r, false, nil
	}
	if r.Pattern, err = strconv.Unquote(lit.Value); err != nil {
		return r, false, err
	}
	h := call.Args[1]
	for {
		c, isCall := h.(*ast.CallExpr)
		if !isCall || len(c.Args) == 0 || !funcValue(c.Args[len(c.Args)-1]) {
			break
		}
		r.Wrappers = append(r.Wrappers, name(c.Fun))
		h = c.Args[len(c.Args)-1]
	}
	if c, isCall := h.(*ast.CallExpr); isCall {
		h = c.Fun // s.asset("index.html"): asset makes the handler
	}
	switch h := h.(type) {
	case *ast.Ident:
		r.Handler, r.Doc = h.Name, s.Func("", h.Name)
	case *ast.SelectorExpr:
		if x, ok := h.X.(*ast.Ident); ok && x.Name == recvName {
			r.Handler, r.Doc = h.Sel.Name, s.Func(recvType, h.Sel.Name)
		}
	}
	return r, true, nil
}

// funcValue reports whether e may be a handler: a name, a method value,
// a call that makes one, or a function literal.
func funcValue(e ast.Expr) bool {
	switch e.(type) {
	case *ast.Ident, *ast.SelectorExpr, *ast.CallExpr, *ast.FuncLit:
		return true
	}
	return false
}

// name is the last name of an expression: s.api.ServeHTTP is ServeHTTP.
func name(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.Sel.Name
	}
	return ""
}

// goLink is a Go doc link: [Config.SocketPath], [*Error], [DefaultGate].
// TOML tables in comments ([gates.NAME], [defaults]) are lower case and
// stay.
var goLink = regexp.MustCompile(`\[(\*?[A-Z][A-Za-z0-9_.]*)\]`)

// Asides of a doc comment that speak to a Go reader, not a user: a
// parenthesis that only points at Go names or source files ("(see
// [Config.SocketPath])", "(engine.CheckRoles)", "(see presets.go)"), and
// citations of the design notes ("(docs/design.md, "The tick")").
var goAsides = []*regexp.Regexp{
	regexp.MustCompile(`\s*\((?:see )?\[\*?[A-Z][\w.]*\](?:,? (?:and )?\[\*?[A-Z][\w.]*\])*\)`),
	regexp.MustCompile(`[:;,]? see \[\*?[A-Z][\w.]*\]`),
	regexp.MustCompile(`\s*\((?:see )?[a-z]\w*\.[A-Z]\w*\)|\s*\(see [A-Z]\w*\.[A-Z]\w*\)`),
	regexp.MustCompile(`\s*\(see \w+\.go\)|[:;,]? see \w+\.go`),
	regexp.MustCompile(`\s*\(docs/design\.md, "[^"]+"(?:, "[^"]+")*\)`),
	regexp.MustCompile(`;? ?docs/design\.md, "[^"]+"(?:, "[^"]+")*(?:[,;] ?)?`),
}

// Text is a doc comment as one paragraph of plain text for a user: its
// lines joined, without the asides meant for a Go reader (goAsides), Go
// doc links without their brackets. A comment whose prose is followed by
// an indented block (an example) keeps only the prose before it.
func Text(doc string) string {
	var kept []string
	inBlock := false
	for l := range strings.SplitSeq(doc, "\n") {
		switch {
		case strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "  "):
			// An indented block is an example: the prose that led to
			// it ("..., for example:") ends where it did.
			if !inBlock && len(kept) > 0 {
				prose := strings.Join(kept, " ")
				prose = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(prose, ":"), " for example"), ",")
				if !strings.HasSuffix(prose, ".") {
					prose += "."
				}
				kept = []string{prose}
			}
			inBlock = true
		case strings.TrimSpace(l) == "":
			// A blank line neither ends an example nor adds to the prose.
		default:
			inBlock = false
			kept = append(kept, strings.TrimSpace(l))
		}
	}
	t := strings.Join(strings.Fields(strings.Join(kept, " ")), " ")
	for _, re := range goAsides {
		t = re.ReplaceAllString(t, "")
	}
	for _, r := range tidy {
		t = r.re.ReplaceAllString(t, r.with)
	}
	return goLink.ReplaceAllString(t, "$1")
}

// tidy mends the punctuation goAsides leave ("(; x)", "(x, )", "()"),
// and drops a doc link that opens a parenthesis ("([Kinds]; x)").
var tidy = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\((?:see )?\[\*?[A-Z][\w.]*\][;,] `), "("},
	{regexp.MustCompile(`\s*\(\s*[,;]?\s*\)`), ""},
	{regexp.MustCompile(`\(\s*[,;]\s*`), "("},
	{regexp.MustCompile(`\s*[,;]\s*\)`), ")"},
}

// Paragraph is the Text of a doc comment's first paragraph: what it
// does, without the how that follows.
func Paragraph(doc string) string {
	first, _, _ := strings.Cut(strings.TrimLeft(doc, "\n"), "\n\n")
	return Text(first)
}

// Sentence is the first sentence of a doc comment's Text.
func Sentence(doc string) string {
	t := Text(doc)
	for i := 0; i+1 < len(t); i++ {
		if t[i] == '.' && t[i+1] == ' ' && !abbrev(t[:i]) {
			return t[:i+1]
		}
	}
	return t
}

// abbrev reports whether s ends in an abbreviation whose dot does not end
// a sentence.
func abbrev(s string) bool {
	for _, a := range []string{"e.g", "i.e", "etc", "vs"} {
		if strings.HasSuffix(s, a) {
			return true
		}
	}
	return false
}

// Cell is s made safe for a cell of a Markdown table: pipes and newlines
// would end the cell, and <data> outside code spans would be read as an
// HTML tag.
func Cell(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	s = strings.ReplaceAll(s, "|", `\|`)
	var b strings.Builder
	inCode := false
	for _, r := range s {
		switch {
		case r == '`':
			inCode = !inCode
		case r == '<' && !inCode:
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Code is s as inline code in a table cell, with a longer fence when s
// has backquotes of its own.
func Code(s string) string {
	if s == "" {
		return ""
	}
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	pad := ""
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		pad = " "
	}
	return fence + pad + strings.ReplaceAll(s, "|", `\|`) + pad + fence
}

// Table writes a Markdown table: the header row, then rows, whose cells
// are written as given (see Cell and Code).
func Table(b *strings.Builder, header []string, rows [][]string) {
	b.WriteString("| " + strings.Join(header, " | ") + " |\n|")
	for range header {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, r := range rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
}

// forUsers are what a page for users must not carry: a citation of the
// design notes that goAsides did not drop, Go source files. (No comment
// cites an issue or an outside document at all: internal/buildtest.)
var forUsers = regexp.MustCompile(`docs/design\.md|\b\w+\.go\b`)

// Lint reports what on a generated page speaks to the code's authors
// instead of its users: a doc comment that cites the design notes or
// points at a source file. Say it in the comment for the user,
// or put it in a parenthesis goAsides drops.
func Lint(page string) error {
	var bad []string
	for i, l := range strings.Split(page, "\n") {
		if m := forUsers.FindString(l); m != "" {
			bad = append(bad, fmt.Sprintf("line %d has %q: %s", i+1, m, l))
		}
	}
	if len(bad) > 0 {
		return errors.New(strings.Join(bad, "\n"))
	}
	return nil
}

// Check compares a generated page with the committed file at path; with
// update it writes the page instead. A difference fails t with the lines
// only the code has (a key, a verb, a route the page lacks) and those
// only the page has, and the command that regenerates every page.
func Check(t testing.TB, path string, page []byte, update bool) {
	t.Helper()
	if update {
		if err := os.WriteFile(path, page, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	committed, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (regenerate: %s)", err, Regenerate)
	}
	if bytes.Equal(committed, page) {
		return
	}
	t.Errorf("%s is not what the code says; regenerate it with\n\t%s\n%s", path, Regenerate, lineDiff(string(committed), string(page)))
}

// lineDiff lists the lines of page that committed lacks (+) and those of
// committed that page lacks (-), in their order: enough to see which
// key or route changed, without a diff algorithm.
func lineDiff(committed, page string) string {
	count := func(s string) map[string]int {
		m := map[string]int{}
		for l := range strings.SplitSeq(s, "\n") {
			m[l]++
		}
		return m
	}
	inCommitted, inPage := count(committed), count(page)
	var b strings.Builder
	for l := range strings.SplitSeq(page, "\n") {
		if inCommitted[l] > 0 {
			inCommitted[l]--
			continue
		}
		b.WriteString("+ " + l + "\n")
	}
	for l := range strings.SplitSeq(committed, "\n") {
		if inPage[l] > 0 {
			inPage[l]--
			continue
		}
		b.WriteString("- " + l + "\n")
	}
	if b.Len() == 0 {
		return "(the same lines in another order)"
	}
	return b.String()
}
