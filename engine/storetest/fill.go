package storetest

import (
	"encoding"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/questbox/questbox/engine/store"
)

// FillEvery sets every exported field of the struct v points to, nested
// structs, lists, maps and pointers included, to a value that is not zero
// and differs from every other field's, so that a codec that drops,
// swaps or zeroes any field fails a round trip. An integer type that
// marshals itself to text (an enum) gets its first value that does.
func FillEvery(v any) {
	n := 0
	FillValue(reflect.ValueOf(v).Elem(), &n)
}

var (
	timeType      = reflect.TypeFor[time.Time]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
	tally         = reflect.TypeFor[store.Tally]()
)

// FillValue sets v as FillEvery sets a field, numbering its values on
// from *n (one field alone, as FillEvery would fill it).
func FillValue(v reflect.Value, n *int) {
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
		FillValue(v.Elem(), n)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			FillValue(s.Index(i), n)
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for range 2 {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			FillValue(k, n)
			FillValue(e, n)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			if Recorded(v.Type().Field(i)) {
				FillValue(v.Field(i), n)
			}
		}
	default:
		panic("BUG: FillEvery: no value for " + v.Type().String())
	}
}

// Recorded reports whether f is a field a record keeps: exported, and
// not marked record:"-" (what the engine keeps of a record while it
// holds it, never written).
func Recorded(f reflect.StructField) bool { return f.IsExported() && f.Tag.Get("record") != "-" }

// LeafFields lists the exported fields of struct type t as paths
// ("Limits.MaxTries"), descending into nested structs but time.Time and
// a table of counts (store.Tally).
func LeafFields(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		if !Recorded(f) {
			continue
		}
		if f.Type.Kind() == reflect.Struct && f.Type != timeType && !reflect.PointerTo(f.Type).Implements(tally) {
			for _, sub := range LeafFields(f.Type) {
				out = append(out, f.Name+"."+sub)
			}
			continue
		}
		out = append(out, f.Name)
	}
	return out
}

// Missing is what of want is not in have.
func Missing(want, have []string) string {
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
