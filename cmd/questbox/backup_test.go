package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/engine/storetest"
	"github.com/questbox/questbox/internal/daemon/daemontest"
	"github.com/questbox/questbox/ui/api"
)

func verifyJSON(t *testing.T, c []string) api.Verify {
	t.Helper()
	var v api.Verify
	decode(t, must(t, 0, "", append([]string{"verify", "--json"}, c...)...), &v)
	return v
}

// keptStores lists the stores a restore kept in data.
func keptStores(t *testing.T, data string) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(data, "questbox.db.before-restore-*"))
	return m
}

// TestBackupAndRestoreWhileBusy is what backup promises (docs/design.md,
// "Service, image and updates"): a daemon records results every second (a
// command agent answering at once, a one-second tick); `backup` writes a copy
// that verifies; a restore of it into the running daemon loses nothing that
// was committed when the backup began, and the daemon works on; a corrupt
// file and a newer questbox's file are refused naming why, changing nothing;
// and a restore without a daemon swaps the file under the store's lock.
func TestBackupAndRestoreWhileBusy(t *testing.T) {
	data := daemontest.ShortDir(t)
	// Each answer differs (a fresh uuid), so loop control sees
	// progress, and each locks its node dead: one ledger record a run.
	canned := filepath.Join(t.TempDir(), "answer")
	os.WriteFile(canned, []byte(answer("dead", "dead on arrival, run PID.")), 0o644)
	cfg := writeConfig(t, `[providers.canned]
type = "command"
argv = ["sh", "-c", "cat > /dev/null; sed \"s/PID/$(cat /proc/sys/kernel/random/uuid)/\" `+canned+`"]
`)
	c := []string{"--config", cfg, "--data", data}
	must(t, 0, "", append([]string{"quest", "new", "busy", "--direction", "canned answers", "--provider", "canned", "--max-agent-runs", "100000"}, c...)...)
	hyps := make([]string, 60)
	for i := range hyps {
		hyps[i] = "hypothesis number " + string(rune('A'+i%26)) + strings.Repeat("x", i)
	}
	must(t, 0, "", append(append([]string{"scan", "q1"}, hyps...), c...)...)
	dm := startDaemon(t, data, "--config", cfg, "--tick", "1s")

	waitFor(t, "results recorded", func() bool { return verifyJSON(t, c).Records >= 3 })
	// What was committed before the backup began.
	before := lockedNodes(t, data)
	beforeRecords := verifyJSON(t, c).Records

	dir := t.TempDir()
	var b backupView
	decode(t, must(t, 0, "", append([]string{"backup", "--json", "--out", dir}, c...)...), &b)
	if filepath.Dir(b.File) != dir || !strings.HasPrefix(filepath.Base(b.File), "questbox-") || b.Records < beforeRecords || b.LockedNodes < len(before) {
		t.Fatalf("backup: %+v, want a questbox-TIME.db in %s with at least %d records and %d locked nodes", b, dir, beforeRecords, len(before))
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".questbox-backup-*")); len(left) > 0 {
		t.Errorf("backup left its temporary copy: %v", left)
	}
	// The daemon went on meanwhile: wait for a result after the backup.
	must(t, 0, "", append([]string{"scan", "q1", "one more after the backup"}, c...)...)
	waitFor(t, "a result after the backup", func() bool { return verifyJSON(t, c).Records > b.Records })

	// A corrupt file and a newer questbox's file are refused, and the
	// daemon serves its store as it was.
	corrupt := filepath.Join(dir, "corrupt.db")
	raw, _ := os.ReadFile(b.File)
	bad := append([]byte(nil), raw...)
	for i := 2 * 4096; i < len(bad)-4096; i += 4096 {
		copy(bad[i:i+64], strings.Repeat("\xff", 64))
	}
	os.WriteFile(corrupt, bad, 0o600)
	r := must(t, 1, "", append([]string{"restore", corrupt}, c...)...)
	if !strings.Contains(r.stderr, "backup refused, nothing was changed") || !strings.Contains(r.stderr, "corrupt") || !strings.Contains(r.stderr, corrupt) {
		t.Errorf("restore of a corrupt file said %q", r.stderr)
	}
	newer := filepath.Join(dir, "newer.db")
	os.WriteFile(newer, raw, 0o600)
	setSchema(t, newer, 99)
	r = must(t, 1, "", append([]string{"restore", newer}, c...)...)
	if !strings.Contains(r.stderr, "backup refused, nothing was changed") || !strings.Contains(r.stderr, "schema v99") {
		t.Errorf("restore of a newer file said %q", r.stderr)
	}
	if k := keptStores(t, data); len(k) > 0 {
		t.Errorf("a refused restore kept the store as %v", k)
	}
	if got, _ := os.ReadFile(newer); string(got[:4096]) != string(raw[:4096]) {
		t.Errorf("restore wrote to the file it refused")
	}

	// Restore into the running daemon.
	var rep api.Restore
	decode(t, must(t, 0, "", append([]string{"restore", "--json", b.File}, c...)...), &rep)
	if rep.Kept == "" || rep.Schema != engine.SchemaVersion {
		t.Errorf("restore: %+v", rep)
	}
	if _, err := os.Stat(rep.Kept); err != nil {
		t.Errorf("the replaced store was not kept: %v", err)
	}
	after := lockedNodes(t, data)
	for id, n := range before {
		if !bytes.Equal(after[id], n) {
			t.Errorf("node %s before the backup:\n%s\nafter the restore:\n%s", id, n, after[id])
		}
	}
	if v := verifyJSON(t, c); v.Records < beforeRecords {
		t.Errorf("after the restore %d ledger records, before the backup %d", v.Records, beforeRecords)
	}
	// The daemon works on the restored store.
	restored := verifyJSON(t, c).Records
	must(t, 0, "", append([]string{"scan", "q1", "one more after the restore"}, c...)...)
	waitFor(t, "a result after the restore", func() bool { return verifyJSON(t, c).Records > restored })

	// Without a daemon.
	if err := dm.stop(); err != nil {
		t.Fatalf("daemon: %v", err)
	}
	decode(t, must(t, 0, "", append([]string{"restore", "--json", b.File}, c...)...), &rep)
	if k := keptStores(t, data); len(k) != 2 {
		t.Errorf("after two restores the kept stores are %v", k)
	}
	after = lockedNodes(t, data)
	for id, n := range before {
		if !bytes.Equal(after[id], n) {
			t.Errorf("without a daemon: node %s before the backup:\n%s\nafter the restore:\n%s", id, n, after[id])
		}
	}
	if v := verifyJSON(t, c); v.Records != b.Records {
		t.Errorf("without a daemon: %d ledger records after the restore, the backup had %d", v.Records, b.Records)
	}
}

// setSchema writes schema v into the store file at path, as a newer
// questbox would have: in place (bbolt keeps a key's value right after
// it; the meta bucket is inline in its parent's page, so storetest's page
// edits do not reach it).
func setSchema(t *testing.T, path string, v uint64) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	old := append([]byte("schema"), storetest.Seq(engine.SchemaVersion)...)
	// Every copy: the live page's and those of free pages.
	if !bytes.Contains(raw, old) {
		t.Fatalf("%s does not hold the schema key and value", path)
	}
	raw = bytes.ReplaceAll(raw, old, append([]byte("schema"), storetest.Seq(v)...))
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestRestoreIntoAWaitingDaemon: a daemon that refused its store (corrupt:
// it waits with the red LED for a repair) takes a restore at once, and
// opens the restored store by itself.
func TestRestoreIntoAWaitingDaemon(t *testing.T) {
	data := daemontest.ShortDir(t)
	d := []string{"--data", data}
	must(t, 0, "", append([]string{"quest", "new", "kept", "--direction", "survive a restore", "--provider", "external"}, d...)...)
	backup := filepath.Join(t.TempDir(), "b.db")
	must(t, 0, "", append([]string{"backup", "--out", backup}, d...)...)
	// Both meta pages damaged: corrupt, and the daemon waits.
	store := filepath.Join(data, engine.StoreFile)
	raw, _ := os.ReadFile(store)
	copy(raw[16:32], bytes.Repeat([]byte{0xff}, 16))
	copy(raw[4096+16:4096+32], bytes.Repeat([]byte{0xff}, 16))
	os.WriteFile(store, raw, 0o600)
	startDaemon(t, data)
	waitFor(t, "the daemon to wait for its store", func() bool {
		r := qb(t, "", append([]string{"quest", "list"}, d...)...)
		return r.code == 2 && strings.Contains(r.stderr, "waiting for its store")
	})
	var rep api.Restore
	decode(t, must(t, 0, "", append([]string{"restore", "--json", backup}, d...)...), &rep)
	if rep.Kept == "" {
		t.Errorf("the corrupt store was not kept: %+v", rep)
	}
	waitFor(t, "the daemon to open the restored store", func() bool {
		return qb(t, "", append([]string{"quest", "show", "q1"}, d...)...).code == 0
	})
}
