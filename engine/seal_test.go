package engine

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/questbox/questbox/engine/ledger"
	"github.com/questbox/questbox/engine/store"
)

// signAsSalvage signs the ledger's head in tx with the device key of dir,
// as Salvage and Restore sign the store they put in place (signCopy).
func signAsSalvage(t testing.TB, tx *store.Tx, dir string) error {
	t.Helper()
	k, err := ledger.LoadDeviceKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ledger.SignCopy(tx, k, LedgerSignature{State: SealSigned})
	return err
}

// ledgerStore makes a small store with two locked nodes, a FAIL and a
// pending node, and returns its data directory (with its device key).
func ledgerStore(t *testing.T) string {
	t.Helper()
	h := newHarness(t, Options{})
	q := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal; s.Mode = ModeSolo })
	res, err := h.e.Scan(q.ID, []string{"one", "two", "three", "four"})
	if err != nil {
		t.Fatal(err)
	}
	for i, raw := range []string{answer("dead", "the first is a dead end, checked twice"), answer("promising", "the second holds up on every sample"), "no json here"} {
		if _, err := h.e.Submit(context.Background(), q.ID, res.Added[i], []byte(raw)); err != nil {
			t.Fatal(err)
		}
	}
	h.close()
	return h.dir
}

func openVerify(t *testing.T, dir string, opt StoreOptions) (VerifyReport, error) {
	t.Helper()
	s, err := OpenStore(dir, opt)
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	defer s.Close()
	return s.Verify()
}

// editStore runs fn on the store file in dir with bbolt directly: what
// anyone who can write the file can do, without the device key.
func editStore(t *testing.T, dir string, fn func(tx *store.Tx) error) {
	t.Helper()
	db, err := store.OpenBare(filepath.Join(dir, StoreFile), false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(fn)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
}

// Every commit that moves the ledger's head signs it, by the device key
// made at the store's first open; a commit that does not move it writes
// no signature.
func TestLedgerHeadSignedByDeviceKey(t *testing.T) {
	h := newHarness(t, Options{})
	fi, err := os.Stat(filepath.Join(h.dir, DeviceKeyFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("device key: %v, %v; want a file of mode 0600", fi, err)
	}
	k, err := ledger.LoadDeviceKey(h.dir)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := h.e.Verify()
	if err != nil || rep.Signature.State != SealSigned || rep.Signature.Head != 0 || rep.Signature.Key != k.Fingerprint() {
		t.Fatalf("a new store: %+v, %v; want its empty ledger signed by %s", rep.Signature, err, k.Fingerprint())
	}
	q := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal; s.Mode = ModeSolo })
	res, err := h.e.Scan(q.ID, []string{"one", "two"})
	if err != nil {
		t.Fatal(err)
	}
	for i, raw := range []string{answer("dead", "a dead end, checked twice over"), "no json here"} {
		if _, err := h.e.Submit(context.Background(), q.ID, res.Added[i], []byte(raw)); err != nil {
			t.Fatal(err)
		}
		rep, err := h.e.Verify()
		if err != nil || rep.Signature.State != SealSigned || rep.Signature.Seq != uint64(rep.Records) || rep.Signature.Seq != rep.Signature.Head {
			t.Fatalf("after verdict %d: %+v, %v; want the head, record %d, signed", i+1, rep.Signature, err, rep.Records)
		}
		if !strings.Contains(rep.Signature.Detail, "signed by this box's key "+k.Fingerprint()) {
			t.Errorf("detail %q does not name this box's key", rep.Signature.Detail)
		}
	}
	var before []byte
	read := func() []byte {
		var raw []byte
		_ = h.store.view(func(tx *store.Tx) error {
			raw = bytes.Clone(tx.Meta().Get(store.KeyLedgerSeal))
			return nil
		})
		return raw
	}
	before = read()
	if _, err := h.e.Scan(q.ID, []string{"three"}); err != nil { // no verdict: the head stays
		t.Fatal(err)
	}
	if after := read(); !bytes.Equal(before, after) {
		t.Error("a commit that did not move the ledger's head signed it again")
	}
}

// The attacker: someone who can write the store but not read the device
// key rewrites a locked verdict and rebuilds the whole chain with valid
// hashes, on a copy, with bbolt. verify fails, exit 2's error, naming the
// ledger's signature; the daemon starting on that store signs nothing on
// top of it, so its next verdicts do not launder the rewrite.
func TestLedgerRewrittenWithoutTheKeyFailsVerify(t *testing.T) {
	base := ledgerStore(t)
	for _, c := range []struct {
		name  string
		also  func(tx *store.Tx) error // what else the attacker does
		state SealState
		want  string
	}{
		{"the signature left as it was", nil, SealMismatch, "the ledger was rewritten without the key"},
		{"the signature removed", func(tx *store.Tx) error { return tx.Meta().Delete(store.KeyLedgerSeal) }, SealUnsigned, "unsigned, but this box signs every head it writes"},
		{"the signature removed and the schema set back to 9", func(tx *store.Tx) error {
			if err := tx.Meta().Delete(store.KeyLedgerSeal); err != nil {
				return err
			}
			return tx.Meta().Put(kSchema, u64(9))
		}, SealUnsigned, "unsigned, but this box signs every head it writes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := copyStore(t, base)
			editStore(t, dir, func(tx *store.Tx) error {
				if err := rewriteLockedVerdict(tx); err != nil {
					return err
				}
				if c.also != nil {
					return c.also(tx)
				}
				return nil
			})
			for _, opt := range []StoreOptions{{ReadOnly: true, Check: true}, {Check: true}} {
				rep, err := openVerify(t, dir, opt)
				if !errors.Is(err, ErrLedgerBroken) || rep.Signature.State != c.state || !strings.Contains(err.Error(), "ledger: "+string(c.state)) || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("verify (read-only %v): %+v, %v; want ErrLedgerBroken, %q, saying %q", opt.ReadOnly, rep.Signature, err, c.state, c.want)
				}
				// The chain itself is sound: the signature is what
				// tells the rewrite.
				if len(rep.Problems) != 1 {
					t.Errorf("problems %q; want the signature's alone", rep.Problems)
				}
			}
			// A daemon on it: it starts, says it will not sign, and its
			// next verdict leaves the head unsigned.
			s, err := OpenStore(dir, StoreOptions{Check: true})
			if err != nil {
				t.Fatal(err)
			}
			if notes := strings.Join(s.Notes(), "\n"); !strings.Contains(notes, "does not sign new heads on top of this one") {
				t.Errorf("open notes %q; want the refusal to sign said", notes)
			}
			e, err := New(s, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.Submit(context.Background(), "q1", "n4", []byte(answer("dead", "the fourth is a dead end as well"))); err != nil {
				t.Fatal(err)
			}
			e.Shutdown(0)
			rep, err := s.Verify()
			s.Close()
			if !errors.Is(err, ErrLedgerBroken) || rep.Signature.State == SealSigned {
				t.Errorf("verify after the daemon's next verdict: %+v, %v; want the rewrite still named", rep.Signature, err)
			}
		})
	}
}

// rewriteLockedVerdict rewrites the evidence of the first locked node,
// binds its new record into its locking ledger record and chains the
// ledger again with valid hashes: a rewrite that passes every check of
// the chain.
func rewriteLockedVerdict(tx *store.Tx) error {
	nb, lb := tx.Nodes(), tx.Ledger()
	k, raw := nb.Cursor().First()
	forged := bytes.Replace(raw, []byte("a dead end, checked twice"), []byte("a success, checked twice!"), 1)
	if bytes.Equal(forged, raw) {
		return errors.New("the fixture's first node does not hold its evidence")
	}
	if err := nb.Put(bytes.Clone(k), forged); err != nil {
		return err
	}
	var keys [][]byte
	_ = lb.ForEach(func(k, _ []byte) error { keys = append(keys, bytes.Clone(k)); return nil })
	prev := ""
	for _, k := range keys {
		var r LedgerRecord
		if _, err := getJSON(lb, k, &r); err != nil {
			return err
		}
		if r.NodeHash != "" && r.Node == "n1" {
			r.NodeHash = ledger.NodeHash(forged)
		}
		r.Prev = prev
		r.Hash = r.Digest()
		prev = r.Hash
		if err := putJSON(lb, k, r); err != nil {
			return err
		}
	}
	return tx.Meta().Put(kLedgerHead, []byte(prev))
}

// A store copied from another box reads "signed by another key"; on a
// file checked on its own (a backup) the key is only named.
func TestLedgerSignedByAnotherKey(t *testing.T) {
	base := ledgerStore(t)
	k, err := ledger.LoadDeviceKey(base)
	if err != nil {
		t.Fatal(err)
	}
	dir := copyStore(t, base)
	if err := os.Remove(filepath.Join(dir, DeviceKeyFile)); err != nil {
		t.Fatal(err)
	}
	// Before this box has a key: the signer is named, nothing fails.
	rep, err := openVerify(t, dir, StoreOptions{ReadOnly: true})
	if err != nil || rep.Signature.State != SealSigned || rep.Signature.Key != k.Fingerprint() || !strings.Contains(rep.Signature.Detail, "no device key") {
		t.Fatalf("read-only verify, no key here: %+v, %v; want the signer named", rep.Signature, err)
	}
	// This box's first start makes its own key: the store is another's.
	rep, err = openVerify(t, dir, StoreOptions{})
	if !errors.Is(err, ErrLedgerBroken) || rep.Signature.State != SealOtherKey || !strings.Contains(err.Error(), "ledger: signed by another key") || !strings.Contains(err.Error(), k.Fingerprint()) {
		t.Fatalf("verify on another box: %+v, %v; want signed by another key, naming %s", rep.Signature, err, k.Fingerprint())
	}
	db, err := OpenStore(dir, StoreOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	frep, err := newStore(db.db).Verify() // the same file, checked on its own
	if err != nil || frep.Signature.State != SealSigned || frep.Signature.Key != k.Fingerprint() {
		t.Errorf("file check: %+v, %v; want the signer named, no problem", frep.Signature, err)
	}
}

// A store from before ledger signing (schema 9, today's golden store):
// read-only, verify warns it is unsigned and passes; the first writable
// open, which makes the device key, signs its head; verify then passes
// signed. A store of schema 9 copied onto a box that has its key is not
// signed (it could be a forged store set back to schema 9).
func TestUnsignedStoreSignedAtFirstStart(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "golden", "schema9", StoreFile))
	if err != nil {
		t.Fatal(err)
	}
	put := func() string {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, StoreFile), raw, 0o600); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	dir := put()
	rep, err := openVerify(t, dir, StoreOptions{ReadOnly: true})
	if err != nil || rep.Signature.State != SealUnsigned || !strings.Contains(rep.Signature.Detail, "the daemon signs it at its next start") {
		t.Fatalf("read-only verify of schema 9: %+v, %v; want a warning it is unsigned until the next start", rep.Signature, err)
	}
	if _, err := os.Stat(filepath.Join(dir, DeviceKeyFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a read-only open made the device key: %v", err)
	}
	s, err := OpenStore(dir, StoreOptions{Check: true})
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(s.Notes(), "\n")
	s.Close()
	if !strings.Contains(notes, "device key was made") || !strings.Contains(notes, "was signed with this box's new key") {
		t.Errorf("first start's notes %q; want the key made and the head signed", notes)
	}
	rep, err = openVerify(t, dir, StoreOptions{ReadOnly: true, Check: true})
	if err != nil || rep.Signature.State != SealSigned || rep.Signature.Head == 0 || rep.Signature.Seq != rep.Signature.Head || rep.Schema != SchemaVersion {
		t.Fatalf("verify after the first start: %+v, %v; want schema %d, the head signed", rep, err, SchemaVersion)
	}

	// A box that signs already: the same file copied in is not signed.
	other := put()
	copyDeviceKey(t, dir, other)
	s, err = OpenStore(other, StoreOptions{Check: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	rep, err = openVerify(t, other, StoreOptions{ReadOnly: true})
	if !errors.Is(err, ErrLedgerBroken) || rep.Signature.State != SealUnsigned || !strings.Contains(err.Error(), "`questbox restore`") {
		t.Errorf("schema 9 store copied onto a box with its key: %+v, %v; want unsigned, failing, saying how to adopt it", rep.Signature, err)
	}
}

// The device key is loaded, never replaced: a key that is malformed,
// that others may read, or that cannot be read fails the open with
// ErrDeviceKey naming the file, and stays as it was.
func TestDeviceKeyUnusable(t *testing.T) {
	for _, c := range []struct {
		name string
		set  func(path string) error
		want string
	}{
		{"not PEM", func(p string) error { return os.WriteFile(p, []byte("not a key\n"), 0o600) }, `not a PEM "PRIVATE KEY" block`},
		{"empty", func(p string) error { return os.WriteFile(p, nil, 0o600) }, "empty"},
		{"readable by others", func(p string) error { return os.Chmod(p, 0o644) }, "others may read it"},
		{"not ed25519", func(p string) error {
			return os.WriteFile(p, []byte("-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VuBCIEIICf+oSOE6wACSAZqvb8vfs1LB42qRzqP/iWw2KrlElM\n-----END PRIVATE KEY-----\n"), 0o600)
		}, "not an ed25519 key"},
		{"a directory", func(p string) error {
			if err := os.Remove(p); err != nil {
				return err
			}
			return os.Mkdir(p, 0o700)
		}, "unusable"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := copyStore(t, ledgerStore(t))
			path := filepath.Join(dir, DeviceKeyFile)
			if err := c.set(path); err != nil {
				t.Fatal(err)
			}
			before, _ := os.ReadFile(path)
			for _, opt := range []StoreOptions{{}, {ReadOnly: true}} {
				s, err := OpenStore(dir, opt)
				if err == nil {
					s.Close()
				}
				if !errors.Is(err, ErrDeviceKey) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.want) {
					t.Errorf("open (read-only %v): %v; want ErrDeviceKey naming %s and %q", opt.ReadOnly, err, path, c.want)
				}
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
				t.Error("the unusable key was replaced")
			}
		})
	}
}

// A backup carries the head's signature, not the key. Restored onto
// another box, the report says the head was signed by another key and
// that this box signed it; verify then passes with this box's key. A
// backup whose ledger was rewritten without the key is refused.
func TestRestoreOntoAnotherBoxSignsWithItsKey(t *testing.T) {
	a := ledgerStore(t)
	ka, err := ledger.LoadDeviceKey(a)
	if err != nil {
		t.Fatal(err)
	}
	backup := filepath.Join(t.TempDir(), "a.db")
	s, err := OpenStore(a, StoreOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(s, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	brep, err := e.BackupTo(backup)
	s.Close()
	if err != nil || brep.Signature.State != SealSigned || brep.Signature.Key != ka.Fingerprint() {
		t.Fatalf("backup: %+v, %v; want the head signed by %s", brep.Signature, err, ka.Fingerprint())
	}
	b := ledgerStore(t) // another box, with its own key
	kb, err := ledger.LoadDeviceKey(b)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(backup)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Restore(b, f, "a.db", time.Now())
	f.Close()
	notes := strings.Join(rep.Notes, "\n")
	if err != nil || !strings.Contains(notes, "was signed by another key, "+ka.Fingerprint()) || !strings.Contains(notes, "now signed by this box's key "+kb.Fingerprint()) {
		t.Fatalf("restore onto another box: %+v, %v; want it to say the other key, and this box's", rep, err)
	}
	vrep, err := openVerify(t, b, StoreOptions{ReadOnly: true, Check: true})
	if err != nil || vrep.Signature.State != SealSigned || vrep.Signature.Key != kb.Fingerprint() {
		t.Errorf("verify after the restore: %+v, %v; want signed by this box's key", vrep.Signature, err)
	}

	// A forged backup: refused, nothing changed.
	forged := copyStore(t, a)
	editStore(t, forged, rewriteLockedVerdict)
	f, err = os.Open(filepath.Join(forged, StoreFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := Restore(b, f, "forged.db", time.Now()); !errors.Is(err, ErrBackupRefused) || !strings.Contains(err.Error(), "rewritten without the key") {
		t.Errorf("restore of a rewritten ledger: %v; want it refused, naming the rewrite", err)
	}
}

// Salvage signs the store it puts in place, saying what the damaged
// store's signature was.
func TestSalvageSignsTheSalvagedHead(t *testing.T) {
	dir := copyStore(t, ledgerStore(t))
	k, err := ledger.LoadDeviceKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	editStore(t, dir, func(tx *store.Tx) error { // a node record that no longer decodes
		nb := tx.Nodes()
		k, v := nb.Cursor().Last()
		return nb.Put(bytes.Clone(k), append([]byte("{rot"), v...))
	})
	rep, err := Salvage(dir, time.Now())
	if err != nil || rep.Healthy || rep.Verify != "ok" {
		t.Fatalf("salvage: %+v, %v", rep, err)
	}
	if notes := strings.Join(rep.Notes, "\n"); !strings.Contains(notes, "signed by this box's key "+k.Fingerprint()) {
		t.Errorf("salvage notes %q; want the salvaged head signed by this box's key", rep.Notes)
	}
	vrep, err := openVerify(t, dir, StoreOptions{ReadOnly: true, Check: true})
	if err != nil || vrep.Signature.State != SealSigned || vrep.Signature.Key != k.Fingerprint() {
		t.Errorf("verify after salvage: %+v, %v", vrep.Signature, err)
	}
}

// An export batch is signed with the head it was read with; the seal
// checks, and fails once a line, the range or the key changes. A box that
// does not sign its head exports unsigned batches.
func TestSealExport(t *testing.T) {
	dir := copyStore(t, ledgerStore(t))
	s, err := OpenStore(dir, StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.ExportBegin("q1", "", 0)
	if err != nil || len(b.Nodes) != 2 {
		t.Fatalf("export: %d nodes, %v", len(b.Nodes), err)
	}
	lines := []string{"{\"id\":\"n1\"}\n", "{\"id\":\"n2\"}\n"}
	seal := e.SealExport(b, lines)
	if err := seal.Check(); err != nil || seal.Unsigned != "" || seal.HeadSeq == 0 {
		t.Fatalf("seal %+v: %v; want it signed and checking", seal, err)
	}
	k, _ := ledger.LoadDeviceKey(dir)
	if !bytes.Equal(seal.PublicKey, k.Public()) {
		t.Error("the seal does not carry the device key")
	}
	other := e.SealExport(b, lines[:1])
	for name, bad := range map[string]ExportSeal{
		"a line changed": func() ExportSeal { c := seal; c.LinesSHA256 = other.LinesSHA256; c.Lines = 1; return c }(),
		"range changed":  func() ExportSeal { c := seal; c.Upto++; return c }(),
		"head changed":   func() ExportSeal { c := seal; c.HeadSeq--; return c }(),
		"another key": func() ExportSeal {
			c := seal
			pub, _, _ := ed25519.GenerateKey(nil)
			c.PublicKey = pub
			return c
		}(),
	} {
		if err := bad.Check(); err == nil {
			t.Errorf("%s: the seal still checks", name)
		}
	}
	e.Shutdown(0)
	s.Close()

	editStore(t, dir, rewriteLockedVerdict)
	s, err = OpenStore(dir, StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	e, err = New(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Shutdown(0)
	b, err = e.ExportBegin("q1", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	seal = e.SealExport(b, lines)
	if err := seal.Check(); err == nil || !strings.Contains(seal.Unsigned, "does not sign its ledger's head") {
		t.Errorf("export of a rewritten ledger: %+v, %v; want it unsigned, saying why", seal, err)
	}
}

// The messages the key signs, as docs/ledger.md spells them out for a
// third party's own check.
func TestSignedMessages(t *testing.T) {
	if got, want := string(ledger.HeadMessage(12, "ab")), "questbox ledger head v1\n12 ab\n"; got != want {
		t.Errorf("head message %q, want %q", got, want)
	}
	got := string(ledger.ExportMessage("q1", 0, 3, 2, "cd", 12, "ab"))
	want := "questbox export v1\nquest q1\nbatch 0 3\nlines 2 cd\nledger 12 ab\n"
	if got != want {
		t.Errorf("export message %q, want %q", got, want)
	}
}

// BenchmarkSealHead is what signing adds to a commit that moves the
// ledger's head: the signature, its encoding and the meta write (the
// commit itself, and its fsyncs, are the same with or without it).
func BenchmarkSealHead(b *testing.B) {
	s, err := OpenStore(b.TempDir(), StoreOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	err = s.db.Update(func(tx *store.Tx) error {
		meta := tx.Meta()
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			if err := meta.Put(kLedgerHead, []byte(fmt.Sprintf("%064x", i))); err != nil {
				return err
			}
			if err := ledger.SealHead(tx, s.box.Key); err != nil { // what the store's handle runs last in each commit
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}
