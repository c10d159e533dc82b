package api

import (
	"context"
	"slices"
	"testing"
)

// TestChoices: GET /api/choices offers the New-quest form the box's
// providers, gate profiles, roles and presets, and the defaults an empty
// field takes (its shape pinned by testdata/choices.json).
func TestChoices(t *testing.T) {
	sock, _ := serve(t, SocketConfig{Policy: DefaultPeerPolicy()})
	got, err := NewClient(SocketClient(sock), sock).Choices(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(got.Providers, "external") {
		t.Errorf("providers %q: want the built-in external", got.Providers)
	}
	if !slices.Contains(got.Gates, got.Defaults.Gate) {
		t.Errorf("gates %q do not offer the default %q", got.Gates, got.Defaults.Gate)
	}
	for _, r := range got.Defaults.Roles {
		if !slices.Contains(got.Roles, r) {
			t.Errorf("roles %q do not offer the default role %q", got.Roles, r)
		}
	}
	if len(got.Presets) != len(Presets) {
		t.Errorf("presets %+v, want the table's %d", got.Presets, len(Presets))
	}
	golden(t, "choices", got)
}
