package prompttmpl

import "strings"

// Kind is what a value is: what a template may do with it.
type Kind uint8

const (
	// String and Int values are printed ({{.Field}}).
	String Kind = iota + 1
	Int
	// A Struct has named fields; it cannot be printed, only read.
	Struct
	// A List is ranged over ({{range .Field}}); its elements are structs.
	List
)

// A Type says what a template may read from a value of it. A Struct's
// values are pointers to the Go struct its fields read; a List's values
// are Go slices of its element's struct. Types are built once, at package
// initialisation, by the package whose data a template reads, and are
// read-only afterwards: safe for concurrent use.
type Type struct {
	name   string
	kind   Kind
	fields []Field // Struct
	elem   *Type   // List
	length func(any) int
	index  func(any, int) any
}

var (
	// StringType is a Go string.
	StringType = &Type{name: "string", kind: String}
	// IntType is a Go int, printed in decimal.
	IntType = &Type{name: "int", kind: Int}
)

// A Field is one readable field of a Struct type: its name in a template
// (.Name), its type, and how it is read from a pointer to the struct.
type Field struct {
	name string
	typ  *Type
	get  func(any) any
}

// NewStruct is a Struct type named name (in error messages) whose values
// are *T, with fields built by [Str], [Num], [Sub] and [Slice] for that
// same T.
func NewStruct(name string, fields ...Field) *Type {
	return &Type{name: name, kind: Struct, fields: fields}
}

// Str is a string field of a *T.
func Str[T any](name string, get func(*T) string) Field {
	return Field{name, StringType, func(v any) any { return get(v.(*T)) }}
}

// Num is an int field of a *T.
func Num[T any](name string, get func(*T) int) Field {
	return Field{name, IntType, func(v any) any { return get(v.(*T)) }}
}

// Sub is a struct field of a *T: get returns a pointer to it, and typ is
// the Struct type of U.
func Sub[T, U any](name string, typ *Type, get func(*T) *U) Field {
	return Field{name, typ, func(v any) any { return get(v.(*T)) }}
}

// Slice is a list field of a *T: a slice of U, whose Struct type is elem.
// Ranging over it sets dot to a pointer to each element in turn.
func Slice[T, U any](name string, elem *Type, get func(*T) []U) Field {
	list := &Type{name: "list of " + elem.name, kind: List, elem: elem,
		length: func(v any) int { return len(v.([]U)) },
		index:  func(v any, i int) any { return &v.([]U)[i] }}
	return Field{name, list, func(v any) any { return get(v.(*T)) }}
}

// field is t's field called name, or nil.
func (t *Type) field(name string) *Field {
	for i := range t.fields {
		if t.fields[i].name == name {
			return &t.fields[i]
		}
	}
	return nil
}

// fieldNames lists t's fields, for messages.
func (t *Type) fieldNames() string {
	names := make([]string, len(t.fields))
	for i, f := range t.fields {
		names[i] = f.name
	}
	return strings.Join(names, ", ")
}

// truth is whether v (of type t) counts as true in {{if}} and {{with}},
// as Go's text/template decides: a non-empty string or list, a non-zero
// int, any struct.
func (t *Type) truth(v any) bool {
	switch t.kind {
	case String:
		return v.(string) != ""
	case Int:
		return v.(int) != 0
	case List:
		return t.length(v) > 0
	}
	return true
}
