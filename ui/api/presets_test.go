package api

import (
	"context"
	"reflect"
	"slices"
	"testing"
)

// TestPresets: GET /api/presets serves the one table the CLI's --preset
// reads, in its order (its shape pinned by testdata/presets.json); each
// preset names only flags of `quest new` the dashboard's form has a field
// for (runs.js maps a flag to its field).
func TestPresets(t *testing.T) {
	sock, _ := serve(t, SocketConfig{Policy: DefaultPeerPolicy()})
	got, err := NewClient(SocketClient(sock), sock).Presets(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, Presets) {
		t.Errorf("GET /api/presets: %+v, want %+v", got, Presets)
	}
	if names := PresetNames(); !slices.Equal(names, []string{"council", "teams"}) {
		t.Errorf("PresetNames: %q", names)
	}
	golden(t, "presets", got)
	form := []string{"mode", "roles", "provider", "gate", "max-agent-runs", "max-tries", "wall-clock", "token-budget", "checkpoint",
		"project", "council", "council-provider", "gates", "teams", "max-revisions", "accept-mode", "role-provider", "egress"}
	for _, p := range Presets {
		if q, ok := PresetNamed(p.Name); !ok || q.Name != p.Name {
			t.Errorf("PresetNamed(%q): %+v, %v", p.Name, q, ok)
		}
		for flag := range p.Flags {
			if !slices.Contains(form, flag) {
				t.Errorf("preset %s sets --%s, which the form's presets do not fill", p.Name, flag)
			}
		}
	}
	if _, ok := PresetNamed("none"); ok {
		t.Error(`PresetNamed("none"): found; "none" is the form's, not a preset`)
	}
}
