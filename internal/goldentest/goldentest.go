// Package goldentest compares what a test produced with a golden file, for
// the test packages whose output is a contract (API JSON, the dashboard's
// session API). Each test package keeps its own -update flag and passes
// its value in.
package goldentest

import (
	"bytes"
	"os"
	"testing"
)

// Check compares got with the file at path and reports a difference as a
// test error that ends in (hint). With update it writes got to path
// instead; a missing file is a fatal error that says how to create it.
func Check(t testing.TB, path string, got []byte, update bool, hint string) {
	t.Helper()
	if update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s changed:\n--- got\n%s--- want\n%s(%s)", path, got, want, hint)
	}
}
