package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/internal/daemon/daemontest"
	"github.com/questbox/questbox/ui/api"
)

// goldenDir holds a store made by each released schema's questbox
// (scripts/golden-stores.sh COMMIT SCHEMA), with what that version printed.
const goldenDir = "../../engine/testdata/golden"

// goldenNodeFields are the fields of `quest show --json`'s nodes that a
// later questbox must read back as the version that wrote them printed
// them (each where that version printed it).
var goldenNodeFields = []string{"id", "quest", "role", "hypothesis", "status", "terminal", "verdict", "evidence", "claim_hash", "tries", "depth"}

// TestGoldenStores is the schema history (docs/design.md, "Service, image and
// updates"): every released store schema's golden store opens with today's
// questbox — read-only, which writes nothing — verifies, migrates at the
// first writing command, verifies again, and reads back the quest, its locked
// nodes, its ledger and its export cursor as the version that made it
// recorded them.
func TestGoldenStores(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join(goldenDir, "schema*"))
	var schemas []int
	for _, d := range dirs {
		n, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(d), "schema"))
		if err != nil {
			t.Fatalf("%s: not schemaN", d)
		}
		schemas = append(schemas, n)
	}
	slices.Sort(schemas)
	// Every released schema up to this build's has one.
	for v := 2; v <= engine.SchemaVersion; v++ {
		if !slices.Contains(schemas, v) {
			t.Errorf("no golden store for schema %d in %s (scripts/golden-stores.sh COMMIT %d)", v, goldenDir, v)
		}
	}
	for _, v := range schemas {
		t.Run("schema"+strconv.Itoa(v), func(t *testing.T) { goldenStore(t, v) })
	}
}

func goldenStore(t *testing.T, schema int) {
	src := filepath.Join(goldenDir, "schema"+strconv.Itoa(schema))
	data := daemontest.ShortDir(t)
	raw := copyGoldenStore(t, src, data, schema)
	var was goldenRecord
	readJSON(t, filepath.Join(src, "verify.json"), &was)
	// (schema 1's verify did not print its schema)
	if (was.Schema != schema && was.Schema != 0) || was.LockedNodes == 0 || was.Records == 0 {
		t.Fatalf("%s/verify.json: %+v: not a schema %d store with locked nodes", src, was, schema)
	}
	checkGoldenReadOnly(t, data, raw, schema, was)

	// The first writing command migrates; the export cursor still says
	// what was exported, so nothing is exported twice.
	out := filepath.Join(t.TempDir(), "again.jsonl")
	must(t, 0, "", "export", "q1", "--out", out, "--data", data)
	if b, _ := os.ReadFile(out); len(b) != 0 {
		t.Errorf("after the migration, export wrote again what schema %d had exported:\n%s", schema, b)
	}
	var v goldenVerify
	decode(t, must(t, 0, "", "verify", "--json", "--data", data), &v)
	if v.Schema != engine.SchemaVersion || v.Records != was.Records || v.LockedNodes != was.LockedNodes {
		t.Errorf("migrated: schema %d, %d records, %d locked; want %d, %d, %d", v.Schema, v.Records, v.LockedNodes, engine.SchemaVersion, was.Records, was.LockedNodes)
	}
	checkGoldenShow(t, src, data, schema)
	checkGoldenExport(t, src, schema, was, v)
	// Every store is signed by this box's key once migrated: the key it
	// came with, or the one its first writing command made.
	if v.Signature.State != "signed" || v.Signature.Key == "" || v.Signature.Key != v.Signature.BoxKey {
		t.Errorf("migrated: the ledger's signature %+v; want signed by this box's key", v.Signature)
	}
}

// copyGoldenStore copies the golden store of schema in src, with its
// device key when it has one, into the data directory data, and returns
// the store's bytes.
func copyGoldenStore(t *testing.T, src, data string, schema int) []byte {
	raw, err := os.ReadFile(filepath.Join(src, "questbox.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, engine.StoreFile), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	// From schema 10 the store's ledger head is signed by the key of
	// the box that made it: the golden store comes with that key, as a
	// box keeps it beside its store. Before, there was none.
	key, err := os.ReadFile(filepath.Join(src, engine.DeviceKeyFile))
	switch {
	case err == nil:
		if err := os.WriteFile(filepath.Join(data, engine.DeviceKeyFile), key, 0o600); err != nil {
			t.Fatal(err)
		}
	case schema >= 10 || !errors.Is(err, fs.ErrNotExist):
		t.Fatalf("the golden store of schema %d: its device key: %v", schema, err)
	}
	return raw
}

// checkGoldenReadOnly checks that a read-only open writes nothing: it
// reads the old schema as it is, or says it needs an upgrade first.
func checkGoldenReadOnly(t *testing.T, data string, raw []byte, schema int, was goldenRecord) {
	r := qb(t, "", "verify", "--json", "--data", data)
	switch {
	case r.code == 0:
		var v struct{ Schema, Records int }
		decode(t, r, &v)
		if v.Schema != schema || v.Records != was.Records {
			t.Errorf("read-only verify: schema %d, %d records; want %d, %d", v.Schema, v.Records, schema, was.Records)
		}
	case r.code == 2 && strings.Contains(r.stderr, "needs an upgrade"):
	default:
		t.Errorf("read-only verify: exit %d, %s", r.code, r.stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(data, engine.StoreFile)); !bytes.Equal(got, raw) {
		t.Fatal("a read-only command changed the store")
	}
}

// checkGoldenShow checks the quest and its nodes read back as the version
// of schema printed them (src's show.json).
func checkGoldenShow(t *testing.T, src, data string, schema int) {
	var old, now struct {
		Quest map[string]any   `json:"quest"`
		Nodes []map[string]any `json:"nodes"`
	}
	readJSON(t, filepath.Join(src, "show.json"), &old)
	decode(t, must(t, 0, "", "quest", "show", "q1", "--json", "--data", data), &now)
	for _, k := range []string{"id", "name", "direction", "status", "mode", "provider"} {
		if ov, ok := old.Quest[k]; ok && !jsonEqual(ov, now.Quest[k]) {
			t.Errorf("quest %s: %v, schema %d's questbox printed %v", k, now.Quest[k], schema, ov)
		}
	}
	byID := map[any]map[string]any{}
	for _, n := range now.Nodes {
		byID[n["id"]] = n
	}
	if len(now.Nodes) != len(old.Nodes) {
		t.Errorf("%d nodes, schema %d's questbox printed %d", len(now.Nodes), schema, len(old.Nodes))
	}
	for _, on := range old.Nodes {
		n := byID[on["id"]]
		for _, k := range goldenNodeFields {
			if ov, ok := on[k]; ok && !jsonEqual(ov, n[k]) {
				t.Errorf("node %v %s: %v, schema %d's questbox printed %v", on["id"], k, n[k], schema, ov)
			}
		}
	}
}

// checkGoldenExport checks that what was exported is the locked nodes,
// each once; from schema 10 signed by the key of the box that made it
// (the migrated store's, v's).
func checkGoldenExport(t *testing.T, src string, schema int, was goldenRecord, v goldenVerify) {
	exp, _ := os.ReadFile(filepath.Join(src, "export.jsonl"))
	if lines := nodeLines(strings.Split(strings.TrimSpace(string(exp)), "\n")); len(lines) != was.LockedNodes {
		t.Errorf("export.jsonl has %d node lines, the store %d locked nodes", len(lines), was.LockedNodes)
	}
	if schema >= 10 {
		if _, err := api.VerifyExport(bytes.NewReader(exp), v.Signature.Key); err != nil {
			t.Errorf("export.jsonl does not verify with the store's key: %v", err)
		}
	}
}

// goldenRecord is what a golden store's verify.json says of it.
type goldenRecord struct {
	Schema      int `json:"schema"`
	Records     int `json:"records"`
	LockedNodes int `json:"locked_nodes"`
}

type goldenVerify struct {
	Schema      int                 `json:"schema"`
	Records     int                 `json:"records"`
	LockedNodes int                 `json:"locked_nodes"`
	Signature   api.LedgerSignature `json:"signature"`
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
