package api

import (
	"reflect"
	"strings"
	"testing"
)

func reflectType(v any) reflect.Type { return reflect.TypeOf(v) }

// checkOwnTypes fails if t, or any type it holds, is a named type of
// another package of ours.
func checkOwnTypes(t *testing.T, ty reflect.Type, seen map[string]bool) {
	t.Helper()
	for ty.Kind() == reflect.Pointer || ty.Kind() == reflect.Slice || ty.Kind() == reflect.Map || ty.Kind() == reflect.Array {
		if ty.Kind() == reflect.Map {
			checkOwnTypes(t, ty.Key(), seen)
		}
		ty = ty.Elem()
	}
	if pkg := ty.PkgPath(); strings.HasPrefix(pkg, "github.com/questbox/questbox/") && pkg != "github.com/questbox/questbox/ui/api" {
		t.Errorf("API view holds %s.%s", pkg, ty.Name())
	}
	if ty.Kind() != reflect.Struct || seen[ty.String()] {
		return
	}
	seen[ty.String()] = true
	for i := range ty.NumField() {
		checkOwnTypes(t, ty.Field(i).Type, seen)
	}
}
