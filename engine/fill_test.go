package engine

import (
	"encoding"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/questbox/questbox/engine/store"
)

// fillEvery sets every exported field of the struct v points to, nested
// structs, lists, maps and pointers included, to a value that is not zero
// and differs from every other field's, so that a codec that drops,
// swaps or zeroes any field fails a round trip. An integer type that
// marshals itself to text (an enum) gets its first value that does.
func fillEvery(v any) {
	n := 0
	fillValue(reflect.ValueOf(v).Elem(), &n)
}

var (
	timeType      = reflect.TypeFor[time.Time]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
	tally         = reflect.TypeFor[store.Tally]()
)

func fillValue(v reflect.Value, n *int) {
	*n++
	switch {
	case v.Type() == timeType:
		v.Set(reflect.ValueOf(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(*n) * 1_000_003 * time.Microsecond)))
		return
	case reflect.PointerTo(v.Type()).Implements(textMarshaler) && v.Kind() != reflect.Struct:
		// A value of its own kind that it can write (an enum's first
		// valid value past zero, if any).
		for k := int64(1); k < 64; k++ {
			switch v.Kind() {
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
				v.SetInt(k)
			case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
				v.SetUint(uint64(k))
			default:
				return
			}
			if _, err := v.Addr().Interface().(encoding.TextMarshaler).MarshalText(); err == nil {
				return
			}
		}
		v.SetZero()
		return
	case reflect.PointerTo(v.Type()).Implements(tally):
		// Counts in two slots (StatusCounts).
		t := v.Addr().Interface().(store.Tally)
		t.Make()
		for i := range 2 {
			name, _ := t.Entry(i)
			if err := t.Set(name, int64(*n)*7+int64(i)); err != nil {
				panic(err)
			}
		}
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("text %d ✓", *n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(*n) * 7)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(*n) * 11)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(*n) + 0.5)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillValue(v.Elem(), n)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			fillValue(s.Index(i), n)
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for range 2 {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fillValue(k, n)
			fillValue(e, n)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			if recorded(v.Type().Field(i)) {
				fillValue(v.Field(i), n)
			}
		}
	default:
		panic("BUG: fillEvery: no value for " + v.Type().String())
	}
}

// recorded reports whether f is a field a record keeps: exported, and
// not marked record:"-" (what the engine keeps of a record while it
// holds it, never written).
func recorded(f reflect.StructField) bool { return f.IsExported() && f.Tag.Get("record") != "-" }

// leafFields lists the exported fields of struct type t as paths
// ("Limits.MaxTries"), descending into nested structs but time.Time and
// a table of counts (store.Tally).
func leafFields(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		if !recorded(f) {
			continue
		}
		if f.Type.Kind() == reflect.Struct && f.Type != timeType && !reflect.PointerTo(f.Type).Implements(tally) {
			for _, sub := range leafFields(f.Type) {
				out = append(out, f.Name+"."+sub)
			}
			continue
		}
		out = append(out, f.Name)
	}
	return out
}

// missing is what of want is not in have.
func missing(want, have []string) string {
	set := map[string]bool{}
	for _, h := range have {
		set[h] = true
	}
	var out []string
	for _, w := range want {
		if !set[w] {
			out = append(out, w)
		}
	}
	return strings.Join(out, ", ")
}
