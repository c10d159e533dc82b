package engine

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependenciesPointInward pins the layers (docs/design.md, "Layers and
// dependencies"): cmd wires everything; ui and device consume the engine;
// engine uses gates; gates depends on nothing of ours. Each package may reach
// (directly or not) only the listed packages of this module, so nothing
// reaches a layer above its own: no device or engine package reaches ui
// (ui/api included). The store (engine/store) is below the domain and imports
// none of it. The device package itself (LEDs, button) knows nothing of the
// engine; device/box joins the two. clock, the one source of time, is a leaf
// that the engine and the device use and gates never does. Within ui, the
// faces reach the engine only through ui/api: TestFacesSpeakOnlyTheAPI.
func TestDependenciesPointInward(t *testing.T) {
	const mod = "github.com/questbox/questbox/"
	allowed := map[string][]string{
		"internal/clock/...": {"internal/clock"},
		"engine/...":         {"engine", "gates", "internal/clock"},
		// The council's rules reach the engine's transaction through their
		// own interfaces (council.Txn, council.SittingReader), never the
		// engine itself; a sitting's members are read as records.NodeHead.
		"engine/council/...": {"engine/council", "engine/domain", "engine/records", "engine/store", "engine/internal", "gates"},
		// The storage knows the file format and nothing of the domain above
		// it (docs/design.md, "Layers and dependencies"): the engine imports
		// it, never the reverse.
		"engine/store/...": {"engine/store", "engine/internal"},
		// The store's handle commits and signs through the store and the
		// ledger; the schema and the event group are the engine's, handed
		// to it.
		"engine/commit/...": {"engine/commit", "engine/ledger", "engine/domain", "engine/store", "engine/internal", "gates"},
		// The ledger's rules read and write the ledger through the store's
		// handles; they know the domain's types and nothing of the rules.
		// The outbox reads the events' records; it writes none.
		"engine/outbox/...": {"engine/outbox", "engine/domain", "engine/records", "engine/store", "engine/internal", "gates"},
		"engine/ledger/...": {"engine/ledger", "engine/domain", "engine/store", "engine/internal", "gates"},
		// The records layer: the domain's record forms over the store's
		// file format, below the engine.
		"engine/records/...": {"engine/records", "engine/domain", "engine/store", "engine/internal", "gates"},
		// What an agent is sent: the prompt reads the records through the
		// store's handles and the engine's interfaces, never the engine.
		"engine/prompt/...": {"engine/prompt", "engine/domain", "engine/store", "engine/internal", "engine/agent",
			"engine/prompttmpl", "engine/runlog", "gates"},
		// The verdict's rules reach the transaction through their own
		// interface: no engine, no other concern's package (the store
		// only as the domain reaches it).
		"engine/verdict/...": {"engine/verdict", "engine/domain", "engine/store", "engine/internal", "gates"},
		// The store's check reads the records and the ledger; what it must
		// read as the engine does it asks through its own interface.
		"engine/verify/...": {"engine/verify", "engine/domain", "engine/ledger", "engine/records", "engine/store",
			"engine/internal", "gates"},
		// Runs as people read them: the records and the logs, no rules.
		"engine/runs/...": {"engine/runs", "engine/domain", "engine/records", "engine/runlog", "engine/store",
			"engine/internal", "gates"},
		// What an export reads and keeps: the ledger's head, the records.
		"engine/export/...": {"engine/export", "engine/domain", "engine/ledger", "engine/records", "engine/store",
			"engine/internal", "gates"},
		// What runs and what waits: the consent queue and the quests, read
		// through the engine's Source.
		"engine/activity/...": {"engine/activity", "engine/domain", "engine/store", "engine/internal", "gates"},
		// The judge cache keeps the judge's verdicts in the store, through
		// the engine's group commit (judgecache.Store).
		"engine/judgecache/...": {"engine/judgecache", "engine/store", "engine/internal", "gates"},
		"gates/...":             {"gates"},
		"internal/config/...":   {"internal/config", "engine", "gates", "device", "internal/clock"},
		"device":                {"device", "internal/clock"},
		"device/...":            {"device", "engine", "gates", "internal/clock"},
		"ui/...":                {"ui", "device", "engine", "gates", "internal/config", "internal/clock"},
		// The daemon's assembly wires every layer; cmd/questbox calls it.
		"internal/daemon/...": {"internal/daemon", "ui", "device", "engine", "gates", "internal/config", "internal/clock",
			"internal/confine", "internal/journald", "internal/release", "internal/update"},
		// The rules of Teams sit below the engine, which calls them with its
		// transaction (team.Txn); they speak the domain and the gates.
		"engine/team/...": {"engine/team", "engine/domain", "engine/store", "engine/internal", "gates"},
		// So do the consent queue's, which apply a human's consent
		// (gates/consent) and never a Team's rule but through their Txn.
		"engine/humangate/...": {"engine/humangate", "engine/domain", "engine/store", "engine/internal", "gates"},
		// The budgets are arithmetic over the domain's quests: the engine
		// checks them and answers a refusal.
		"engine/budget/...": {"engine/budget", "engine/domain", "engine/store", "engine/internal", "gates"},
		// The follow-up chain knows quests and nodes by their ids and the
		// engine through its own interface (followup.Engine).
		"engine/followup/...": {"engine/followup"},
		// The tick's memory of what committed: it holds the domain's
		// Quests and nodes' heads and checks the store's transactions,
		// and is handed what commits by the engine above it.
		"engine/tickmem/...": {"engine/tickmem", "engine/domain", "engine/store", "engine/internal", "gates"},
	}
	for pattern, may := range allowed {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "./../"+pattern).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", pattern, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			rest, ours := strings.CutPrefix(dep, mod)
			if !ours {
				continue
			}
			ok := false
			for _, m := range may {
				ok = ok || rest == m || strings.HasPrefix(rest, m+"/")
			}
			if !ok {
				t.Errorf("%s reaches %s; it may only use %v", pattern, dep, may)
			}
		}
	}
}

// TestFacesSpeakOnlyTheAPI pins the rule that faces speak only the API
// (docs/design.md, "Layers and dependencies"): the dashboard, MQTT and
// /metrics import no engine package; whatever they show or do goes through
// ui/api (its typed calls and its event watch), which alone imports the
// engine. Nor do they import any other package of the module but ui/api
// (not even the box, the config or the clock: the API offers what they
// need), so a rule they apply has one copy, the API's. Their tests may use
// harnesses (engine fakes, a broker, a browser); only the faces' own code
// is pinned.
func TestFacesSpeakOnlyTheAPI(t *testing.T) {
	const mod = "github.com/questbox/questbox/"
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}: {{join .Imports \" \"}}",
		"./../ui/dashboard/...", "./../ui/mqtt/...", "./../ui/metrics/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	faces := 0
	for line := range strings.Lines(string(out)) {
		pkg, imports, _ := strings.Cut(strings.TrimSpace(line), ": ")
		faces++
		for _, imp := range strings.Fields(imports) {
			if imp == mod+"engine" || strings.HasPrefix(imp, mod+"engine/") {
				t.Errorf("%s imports %s: a face speaks only ui/api", pkg, imp)
				continue
			}
			if strings.HasPrefix(imp, mod) && imp != mod+"ui/api" {
				t.Errorf("%s imports %s: a face imports no package of ours but ui/api", pkg, imp)
			}
		}
	}
	if faces < 3 {
		t.Fatalf("go list found %d face packages, want at least ui/dashboard, ui/mqtt and ui/metrics:\n%s", faces, out)
	}
}

// TestCommandLineImportsNoEngine pins that cmd/questbox parses, calls
// ui/api's client or internal/daemon, and prints: what a verb needs of
// the engine reaches it through ui/api's view types or internal/daemon.
func TestCommandLineImportsNoEngine(t *testing.T) {
	const mod = "github.com/questbox/questbox/"
	for _, tags := range []string{"", "updatefault"} {
		out, err := exec.Command("go", "list", "-tags", tags, "-f", "{{join .Imports \"\\n\"}}", "./../cmd/questbox").CombinedOutput()
		if err != nil {
			t.Fatalf("go list -tags %q: %v\n%s", tags, err, out)
		}
		n := 0
		for _, imp := range strings.Fields(string(out)) {
			n++
			if imp == mod+"engine" || strings.HasPrefix(imp, mod+"engine/") {
				t.Errorf("cmd/questbox (tags %q) imports %s: the daemon's assembly belongs in internal/daemon", tags, imp)
			}
		}
		if n == 0 {
			t.Fatalf("go list -tags %q found no imports of cmd/questbox:\n%s", tags, out)
		}
	}
}

// TestOnlyTheStoreImportsBbolt pins that the records layer has one room:
// engine/store (and the file reader under engine/internal it uses) alone
// imports bbolt. The engine reads and writes its records through the
// store's transaction handles (store.Tx) and never sees bbolt; tests
// elsewhere, the engine's included, open or damage store files through
// store (OpenBare) and engine/storetest.
func TestOnlyTheStoreImportsBbolt(t *testing.T) {
	const mod = "github.com/questbox/questbox/"
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}: {{join .Imports \" \"}} | {{join .TestImports \" \"}} {{join .XTestImports \" \"}}", "./../...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	store := 0
	for line := range strings.Lines(string(out)) {
		pkg, imports, _ := strings.Cut(strings.TrimSpace(line), ": ")
		rest := strings.TrimPrefix(pkg, mod)
		if rest == "engine/store" || strings.HasPrefix(rest, "engine/internal/") {
			store++
			continue
		}
		prod, tests, _ := strings.Cut(imports, "|")
		for _, imp := range strings.Fields(prod) {
			if strings.HasPrefix(imp, "go.etcd.io/bbolt") {
				t.Errorf("%s imports %s: records are read and written through engine/store", pkg, imp)
			}
		}
		for _, imp := range strings.Fields(tests) {
			if strings.HasPrefix(imp, "go.etcd.io/bbolt") {
				t.Errorf("%s's tests import %s: they open store files through engine/store (OpenBare) or engine/storetest", pkg, imp)
			}
		}
	}
	if store < 2 {
		t.Fatalf("go list found %d of engine/store and engine/internal/boltfile:\n%s", store, out)
	}
}
