// Package prompttmpl is the template language of role prompts: the part of
// Go's text/template a prompt needs, over data whose shape is declared as
// a [Type] instead of found by reflection.
//
// A template is text with actions between {{ and }}:
//
//	{{.Field.Field}}            print a string or int field (. alone: dot itself)
//	{{if .F}}…{{else if .G}}…{{else}}…{{end}}
//	{{with .F}}…{{else with .G}}…{{else}}…{{end}}   dot becomes .F inside
//	{{range .List}}…{{else}}…{{end}}                dot is each element; else when empty
//	{{/* a comment */}}
//
// A - next to a delimiter followed (or preceded) by a space, {{- or -}},
// trims the white space before (or after) the action, as in text/template.
// Truth is text/template's: an empty string, a zero int and an empty list
// are false, every struct is true. Whatever a template renders, Go's
// text/template renders the same bytes from the same template and data.
//
// Everything else of text/template — functions and pipelines, variables,
// constants, parentheses, {{define}}, {{template}}, {{block}}, {{break}},
// {{continue}}, printing a struct or a list — is refused by [Parse], as is
// a field the data does not have, with an [*Error] naming where. A
// template that parses cannot fail to render: it uses no reflection and
// calls no method, which also lets the linker drop the methods no code
// calls (text/template's method calls make it keep every exported method
// of every type in the binary).
package prompttmpl

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Error is a template that Parse refused: where, by 1-based line and
// column (in characters) of the action at fault, and why.
type Error struct {
	Name      string
	Line, Col int
	Msg       string
}

func (e *Error) Error() string { return fmt.Sprintf("%s:%d:%d: %s", e.Name, e.Line, e.Col, e.Msg) }

// Template is a parsed template. It is read-only: safe for concurrent
// use.
type Template struct {
	root  *Type
	nodes []node
}

type nodeKind uint8

const (
	textNode nodeKind = iota
	printNode
	ifNode
	withNode
	rangeNode
)

// node is a piece of a parsed template: text, or an action with the field
// path it reads from dot and the type it finds there; if, with and range
// have a body and an else (alt).
type node struct {
	kind      nodeKind
	text      string
	path      []*Field
	typ       *Type
	body, alt []node
}

// Parse parses text, named name in errors, as a template over data of
// type root, which must be a Struct.
func Parse(name, text string, root *Type) (*Template, error) {
	p := &parser{name: name, src: text}
	if err := p.lex(); err != nil {
		return nil, err
	}
	nodes, end, err := p.list(root)
	if err != nil {
		return nil, err
	}
	if end != nil {
		return nil, p.errorf(end, "{{%s}} without an {{if}}, {{with}} or {{range}} before it", end.words[0])
	}
	return &Template{root: root, nodes: nodes}, nil
}

// Render renders t with data, a value of the root type t was parsed for.
func (t *Template) Render(data any) string {
	var b strings.Builder
	render(&b, t.nodes, data)
	return b.String()
}

func render(b *strings.Builder, nodes []node, dot any) {
	for i := range nodes {
		n := &nodes[i]
		if n.kind == textNode {
			b.WriteString(n.text)
			continue
		}
		v := dot
		for _, f := range n.path {
			v = f.get(v)
		}
		switch n.kind {
		case printNode:
			if n.typ.kind == Int {
				b.WriteString(strconv.Itoa(v.(int)))
			} else {
				b.WriteString(v.(string))
			}
		case ifNode, withNode:
			switch {
			case !n.typ.truth(v):
				render(b, n.alt, dot)
			case n.kind == withNode:
				render(b, n.body, v)
			default:
				render(b, n.body, dot)
			}
		case rangeNode:
			l := n.typ.length(v)
			if l == 0 {
				render(b, n.alt, dot)
			}
			for j := range l {
				render(b, n.body, n.typ.index(v, j))
			}
		}
	}
}

// item is a piece of the source: text, or an action's words and the
// offset of its {{.
type item struct {
	text  string
	words []string
	src   string
	pos   int
	isAct bool
}

type parser struct {
	name, src string
	items     []item
	next      int
}

const spaceChars = " \t\r\n" // text/template's white space

func isSpace(c byte) bool { return strings.IndexByte(spaceChars, c) >= 0 }

// lex splits the source into text and actions, drops comments and applies
// trim markers the way text/template's lexer does.
func (p *parser) lex() error {
	src, pos, trimNext := p.src, 0, false
	for {
		i := strings.Index(src[pos:], "{{")
		if i < 0 {
			p.text(src[pos:], trimNext, false)
			return nil
		}
		start := pos + i
		after := start + 2
		trimPrev := len(src) >= after+2 && src[after] == '-' && isSpace(src[after+1])
		p.text(src[pos:start], trimNext, trimPrev)
		if trimPrev {
			after += 2
		}
		if strings.HasPrefix(src[after:], "/*") {
			end := strings.Index(src[after+2:], "*/")
			if end < 0 {
				return p.errorAt(start, "unclosed comment: no */ after /*")
			}
			rest := after + 2 + end + 2
			switch {
			case strings.HasPrefix(src[rest:], "}}"):
				pos, trimNext = rest+2, false
			case len(src) >= rest+4 && isSpace(src[rest]) && strings.HasPrefix(src[rest+1:], "-}}"):
				pos, trimNext = rest+4, true
			default:
				return p.errorAt(start, "a comment must end with */}} (or */ -}})")
			}
			continue
		}
		end := strings.Index(src[after:], "}}")
		if end < 0 {
			return p.errorAt(start, "unclosed action: no }} after "+quote(src[start:]))
		}
		body := src[after : after+end]
		pos, trimNext = after+end+2, false
		if n := len(body); n >= 2 && body[n-1] == '-' && isSpace(body[n-2]) {
			body, trimNext = body[:n-2], true
		}
		p.items = append(p.items, item{isAct: true, pos: start, src: src[start:pos],
			words: strings.FieldsFunc(body, func(r rune) bool { return r < utf8.RuneSelf && isSpace(byte(r)) })})
	}
}

// text adds a text item, trimmed at its start and end as the markers
// around it ask; an empty one is left out.
func (p *parser) text(s string, trimStart, trimEnd bool) {
	if trimStart {
		s = strings.TrimLeft(s, spaceChars)
	}
	if trimEnd {
		s = strings.TrimRight(s, spaceChars)
	}
	if s != "" {
		p.items = append(p.items, item{text: s})
	}
}

// list parses nodes over dot of type dot up to the end of the source, or
// up to an {{else…}} or {{end}}, which it returns.
func (p *parser) list(dot *Type) ([]node, *item, error) {
	var nodes []node
	for p.next < len(p.items) {
		it := &p.items[p.next]
		p.next++
		if !it.isAct {
			nodes = append(nodes, node{kind: textNode, text: it.text})
			continue
		}
		w := it.words
		if len(w) > 0 && (w[0] == "else" || w[0] == "end") {
			return nodes, it, nil
		}
		n, err := p.action(it, dot)
		if err != nil {
			return nil, nil, err
		}
		nodes = append(nodes, n)
	}
	return nodes, nil, nil
}

// action parses the action it: a field to print, or an if, with or range
// with everything up to its {{end}}.
func (p *parser) action(it *item, dot *Type) (node, error) {
	w := it.words
	if why := unsupported(it); why != "" {
		return node{}, p.errorf(it, "%s", why)
	}
	switch kind, control := map[string]nodeKind{"if": ifNode, "with": withNode, "range": rangeNode}[w[0]]; {
	case control && len(w) == 2:
		return p.control(it, kind, w[1], dot)
	case control:
		return node{}, p.errorf(it, "%s: {{%s}} takes one field: {{%s .Field}}", quote(it.src), w[0], w[0])
	case len(w) != 1:
		return node{}, p.errorf(it, "%s is not supported: an action is a field ({{.Field}}), {{if .Field}}, {{with .Field}}, {{range .Field}}, {{else}} or {{end}}", quote(it.src))
	}
	path, typ, err := p.field(it, dot, w[0])
	if err != nil {
		return node{}, err
	}
	switch typ.kind {
	case Struct:
		return node{}, p.errorf(it, "%s is a %s, which cannot be printed; print one of its fields: %s", w[0], typ.name, typ.fieldNames())
	case List:
		return node{}, p.errorf(it, "%s is a %s, which cannot be printed; range over it: {{range %s}}…{{end}}", w[0], typ.name, w[0])
	}
	return node{kind: printNode, path: path, typ: typ}, nil
}

// control parses the rest of an if, with or range whose field is arg,
// from the action it.
func (p *parser) control(it *item, kind nodeKind, arg string, dot *Type) (node, error) {
	n := node{kind: kind}
	var err error
	if n.path, n.typ, err = p.field(it, dot, arg); err != nil {
		return n, err
	}
	inner := dot
	switch {
	case kind == withNode:
		inner = n.typ
	case kind == rangeNode && n.typ.kind != List:
		return n, p.errorf(it, "range over %s, a %s: only a list can be ranged over", arg, n.typ.name)
	case kind == rangeNode:
		inner = n.typ.elem
	}
	body, end, err := p.list(inner)
	if err != nil {
		return n, err
	}
	n.body = body
	if end == nil {
		return n, p.errorf(it, "%s has no {{end}}", quote(it.src))
	}
	switch w := end.words; {
	case len(w) == 1 && w[0] == "end":
		return n, nil
	case len(w) == 1 && w[0] == "else":
		alt, end2, err := p.list(dot)
		if err != nil {
			return n, err
		}
		if end2 == nil {
			return n, p.errorf(it, "%s has no {{end}}", quote(it.src))
		}
		if len(end2.words) != 1 || end2.words[0] != "end" {
			return n, p.errorf(end2, "%s after {{else}}: want {{end}}", quote(end2.src))
		}
		n.alt = alt
		return n, nil
	case len(w) == 3 && w[0] == "else" && (kind == ifNode && w[1] == "if" || kind == withNode && w[1] == "with"):
		// {{if a}}x{{else if b}}y{{end}} is {{if a}}x{{else}}{{if b}}y{{end}}{{end}}:
		// the chain shares the one {{end}}.
		chained, err := p.control(end, kind, w[2], dot)
		if err != nil {
			return n, err
		}
		n.alt = []node{chained}
		return n, nil
	}
	return n, p.errorf(end, "%s is not supported: use {{end}} or {{else}}%s", quote(end.src), map[nodeKind]string{
		ifNode: ", {{else if .Field}}", withNode: ", {{else with .Field}}"}[kind])
}

// field resolves arg (".", ".A" or ".A.B…") from dot of type dot.
func (p *parser) field(it *item, dot *Type, arg string) ([]*Field, *Type, error) {
	if arg == "." {
		return nil, dot, nil
	}
	if !strings.HasPrefix(arg, ".") {
		return nil, nil, p.errorf(it, "%q is not a field: a field starts with a dot (.Name)", arg)
	}
	var path []*Field
	typ := dot
	for _, name := range strings.Split(arg[1:], ".") {
		if name == "" {
			return nil, nil, p.errorf(it, "%q is not a field: a dot without a name", arg)
		}
		if typ.kind != Struct {
			return nil, nil, p.errorf(it, "%s: a %s has no field %s", arg, typ.name, name)
		}
		f := typ.field(name)
		if f == nil {
			return nil, nil, p.errorf(it, "%s: %s has no field %s (its fields: %s)", arg, typ.name, name, typ.fieldNames())
		}
		path, typ = append(path, f), f.typ
	}
	return path, typ, nil
}

// functions are text/template's predefined functions, named in refusals.
var functions = []string{"and", "call", "html", "index", "slice", "js", "len", "not", "or", "print", "printf",
	"println", "urlquery", "eq", "ge", "gt", "le", "lt", "ne"}

// unsupported says which part of text/template an action uses that this
// language does not have, or "".
func unsupported(it *item) string {
	w := it.words
	body := strings.Join(w, " ")
	switch {
	case len(w) == 0:
		return quote(it.src) + ": an empty action"
	case strings.ContainsAny(body, "\"`'"):
		return quote(it.src) + ": constants are not supported"
	case strings.Contains(body, "$"):
		return quote(it.src) + ": variables are not supported"
	case strings.Contains(body, "|"):
		return quote(it.src) + ": pipelines are not supported"
	case strings.ContainsAny(body, "()"):
		return quote(it.src) + ": parentheses are not supported"
	}
	for _, f := range functions {
		if w[0] == f {
			return quote(it.src) + ": functions (" + f + ") are not supported"
		}
	}
	switch w[0] {
	case "define", "template", "block", "break", "continue":
		return quote(it.src) + ": {{" + w[0] + "}} is not supported"
	}
	return ""
}

// quote is an action's source as errors show it, cut when long.
func quote(src string) string {
	if utf8.RuneCountInString(src) > 40 {
		r := []rune(src)
		return string(r[:40]) + "…"
	}
	return src
}

func (p *parser) errorf(it *item, format string, args ...any) error {
	return p.errorAt(it.pos, fmt.Sprintf(format, args...))
}

// errorAt is an *Error at byte offset pos of the source.
func (p *parser) errorAt(pos int, msg string) error {
	before := p.src[:pos]
	lineStart := strings.LastIndexByte(before, '\n') + 1
	return &Error{Name: p.name, Line: 1 + strings.Count(before, "\n"), Col: 1 + utf8.RuneCountInString(before[lineStart:]), Msg: msg}
}
