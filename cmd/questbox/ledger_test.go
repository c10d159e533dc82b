package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/engine/ledger"
	"github.com/questbox/questbox/engine/storetest"
	"github.com/questbox/questbox/internal/daemon/daemontest"
)

// ledgerFixture makes a data directory with a quest of two locked nodes,
// exported to the file it returns, written by commands without a daemon
// (the first one makes the device key).
func ledgerFixture(t *testing.T) (data, export string) {
	t.Helper()
	data = daemontest.ShortDir(t)
	d := []string{"--data", data}
	must(t, 0, "", append([]string{"quest", "new", "x", "--direction", "sign it", "--provider", "external"}, d...)...)
	must(t, 0, "", append([]string{"scan", "q1", "one", "two", "three"}, d...)...)
	must(t, 0, answer("dead", "the first one is a dead end"), append([]string{"submit", "q1", "--node", "n1"}, d...)...)
	must(t, 0, answer("dead", "the second one is a dead end too"), append([]string{"submit", "q1", "--node", "n2"}, d...)...)
	export = filepath.Join(t.TempDir(), "export.jsonl")
	must(t, 0, "", append([]string{"export", "q1", "--out", export}, d...)...)
	return data, export
}

// TestVerifyNamesTheDeviceKey: verify says the head is signed by this
// box's key and prints its fingerprint, which verify-export checks an
// export against.
func TestVerifyNamesTheDeviceKey(t *testing.T) {
	data, export := ledgerFixture(t)
	k, err := ledger.LoadDeviceKey(data)
	if err != nil {
		t.Fatal(err)
	}
	r := must(t, 0, "", "verify", "--data", data)
	if !strings.Contains(r.stdout, "ok: the ledger's head (record 2) is signed by this box's key "+k.Fingerprint()) {
		t.Errorf("verify printed %q; want the head signed by %s", r.stdout, k.Fingerprint())
	}
	r = must(t, 0, "", "verify-export", export, "--key", k.Fingerprint())
	if !strings.Contains(r.stdout, "ok: "+export+": 1 batch, 2 nodes of quest q1, signed by device key "+k.Fingerprint()) {
		t.Errorf("verify-export printed %q", r.stdout)
	}
	r = must(t, 0, "", "verify-export", export) // no key named: it says to compare
	if !strings.Contains(r.stdout, "compare that key with the box's") {
		t.Errorf("verify-export without --key printed %q; want the advice to compare the key", r.stdout)
	}
}

// TestVerifyExportRefuses: a line changed, a batch cut short, lines added
// after the last signature, another key: each exits 2 naming the line and
// what failed.
func TestVerifyExportRefuses(t *testing.T) {
	_, export := ledgerFixture(t)
	good, err := os.ReadFile(export)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		body []byte
		args []string
		want string
	}{
		{"a verdict changed", bytes.Replace(good, []byte("a dead end too"), []byte("a success, too"), 1), nil, "line 3: the signature of the batch of quest q1 (lock sequences 1-2) does not match lines 1-2: they were changed"},
		{"cut short", good[:len(good)-10], nil, "line 3 does not end in a newline"},
		{"a line added", append(bytes.Clone(good), good[:bytes.IndexByte(good, '\n')+1]...), nil, "lines 4-4 are not covered by a signature"},
		{"a line dropped", good[bytes.IndexByte(good, '\n')+1:], nil, "covers 2 lines, but 1 lines precede it"},
		{"another key named", good, []string{"--key", "SHA256:" + strings.Repeat("A", 43)}, "not by the key you named"},
		{"no export", []byte("{\"id\":\"n1\"}\n"), nil, "lines 1-1 are not covered by a signature"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".jsonl")
			if err := os.WriteFile(path, c.body, 0o644); err != nil {
				t.Fatal(err)
			}
			r := must(t, 2, "", append([]string{"verify-export", path}, c.args...)...)
			if !strings.Contains(r.stderr, c.want) || !strings.Contains(r.stderr, "export does not verify") || !strings.Contains(r.stderr, path) {
				t.Errorf("verify-export said %q; want %q", r.stderr, c.want)
			}
		})
	}
	must(t, 1, "", "verify-export", filepath.Join(dir, "missing.jsonl"))
	must(t, 1, "", "verify-export", export, "--key", "not-a-fingerprint")
}

// TestVerifyLedgerRebuiltWithoutTheKey: an attacker who can write the
// store but not read the device key rewrites a locked verdict and
// rebuilds the chain with valid hashes, with bbolt on the store. verify
// exits 2 naming the ledger's signature; what the box exports next is
// unsigned, and verify-export refuses it.
func TestVerifyLedgerRebuiltWithoutTheKey(t *testing.T) {
	data, _ := ledgerFixture(t)
	must(t, 0, "", "scan", "q1", "four", "--data", data)
	rebuildLedger(t, filepath.Join(data, engine.StoreFile), "the first one is a dead end", "the first one is a success!!")

	r := must(t, 2, "", "verify", "--data", data)
	for _, want := range []string{"ledger: signature does not match the head", "the ledger was rewritten without the key", "verdict ledger is broken"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("verify said %q; want %q", r.stderr, want)
		}
	}
	// The box's next verdict and export do not launder it.
	must(t, 0, answer("dead", "the fourth one is a dead end"), "submit", "q1", "--node", "n4", "--data", data)
	must(t, 2, "", "verify", "--data", data)
	export := filepath.Join(t.TempDir(), "after.jsonl")
	must(t, 0, "", "export", "q1", "--out", export, "--data", data)
	r = must(t, 2, "", "verify-export", export)
	if !strings.Contains(r.stderr, "the batch is unsigned: this box does not sign its ledger's head") {
		t.Errorf("verify-export of what the rewritten store exported said %q", r.stderr)
	}
}

// rebuildLedger replaces from by to in the stored record of the locked
// node that holds it, binds the new record into its ledger record and
// chains the whole ledger again with valid hashes: what anyone who can
// write the store can do with bbolt, knowing only its format.
func rebuildLedger(t *testing.T, store, from, to string) {
	t.Helper()
	forged := map[string]string{} // node id -> sha256 of its forged record
	err := storetest.RewriteRecords(store, "nodes", func(_, v []byte) []byte {
		if !bytes.Contains(v, []byte(from)) {
			return nil
		}
		nv := bytes.Replace(v, []byte(from), []byte(to), 1)
		var n struct{ ID string }
		if err := json.Unmarshal(nv, &n); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(nv)
		forged[n.ID] = hex.EncodeToString(sum[:])
		return nv
	})
	if err != nil || len(forged) != 1 {
		t.Fatalf("forge the node holding %q: %d found, %v", from, len(forged), err)
	}
	prev := ""
	err = storetest.RewriteRecords(store, "ledger", func(_, v []byte) []byte { // in seq order
		var r engine.LedgerRecord
		if err := json.Unmarshal(v, &r); err != nil {
			t.Fatal(err)
		}
		if h, ok := forged[r.Node]; ok && r.NodeHash != "" {
			r.NodeHash = h
		}
		r.Prev, r.Hash = prev, ""
		raw, _ := json.Marshal(r)
		sum := sha256.Sum256(append([]byte(prev), raw...))
		r.Hash = hex.EncodeToString(sum[:])
		prev = r.Hash
		raw, _ = json.Marshal(r)
		return raw
	})
	if err == nil {
		err = storetest.RewriteRecords(store, "meta", func(k, _ []byte) []byte {
			if string(k) == "ledger_head" {
				return []byte(prev)
			}
			return nil
		})
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestRestoreOntoAnotherBox: a backup holds the head's signature, not the
// device key. Restored on another box, `restore` says the head was signed
// by another key and that this box signed it; verify passes there with
// that box's key.
func TestRestoreOntoAnotherBox(t *testing.T) {
	a, _ := ledgerFixture(t)
	ka, err := ledger.LoadDeviceKey(a)
	if err != nil {
		t.Fatal(err)
	}
	backup := filepath.Join(t.TempDir(), "a.db")
	r := must(t, 0, "", "backup", "--out", backup, "--data", a)
	if !strings.Contains(r.stdout, "the ledger's head (record 2) is signed by key "+ka.Fingerprint()) {
		t.Errorf("backup printed %q; want the head's signer named", r.stdout)
	}
	b, _ := ledgerFixture(t)
	kb, err := ledger.LoadDeviceKey(b)
	if err != nil {
		t.Fatal(err)
	}
	r = must(t, 0, "", "restore", backup, "--data", b)
	if !strings.Contains(r.stdout, "was signed by another key, "+ka.Fingerprint()) || !strings.Contains(r.stdout, "now signed by this box's key "+kb.Fingerprint()) {
		t.Errorf("restore printed %q; want the other key and this box's named", r.stdout)
	}
	r = must(t, 0, "", "verify", "--data", b)
	if !strings.Contains(r.stdout, "signed by this box's key "+kb.Fingerprint()) {
		t.Errorf("verify after the restore printed %q", r.stdout)
	}
}
