package main

import (
	"strings"
	"testing"
)

// TestPresetHelp: --preset's help is written from api.Presets, the table
// the dashboard's form reads too, in the words it always had.
func TestPresetHelp(t *testing.T) {
	out := must(t, 0, "", "quest", "new", "-h").stdout
	want := "a named combination of flags: council (= --mode team --council reviewer:2,judge:1) or teams (= --mode team --teams)"
	if !strings.Contains(out, want) {
		t.Errorf("quest new -h does not say\n%s\n:\n%s", want, out)
	}
}
