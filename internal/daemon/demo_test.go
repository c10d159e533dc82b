package daemon

import (
	"strings"
	"testing"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/internal/config"
	"github.com/questbox/questbox/internal/daemon/daemontest"
)

// The demo quest runs every role on the demo provider, even when [roles]
// gives one a provider of a vendor the demo quest would refuse.
func TestSeedDemoIgnoresRoleProviders(t *testing.T) {
	cfg, err := config.Parse([]byte(daemontest.RolesConfig+"\n[roles.owner]\nprovider = \"claude\"\n"), "questbox.toml")
	if err != nil {
		t.Fatal(err)
	}
	st, err := engine.OpenStore(t.TempDir(), engine.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	w := newWiring(cfg, func(string) string { return "" }, 0, nil)
	t.Cleanup(w.close)
	opt, err := w.options(cfg, nil, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(st, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Shutdown(0)
	var out strings.Builder
	if err := seedDemo(&out, eng, cfg); err != nil {
		t.Fatal(err)
	}
	qs, err := eng.Quests()
	if err != nil || len(qs) != 1 {
		t.Fatalf("quests %v, %v; want the demo quest", qs, err)
	}
	if got := qs[0].RoleProviders[engine.RoleOwner]; got != engine.ProviderDemo {
		t.Errorf("the demo quest's owner runs on %q, want demo", got)
	}
}
