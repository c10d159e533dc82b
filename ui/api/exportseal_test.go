package api

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/engine/ledger"
)

// lockDead submits a dead end for node of quest q: the node locks.
func lockDead(t *testing.T, eng *engine.Engine, q, node string) {
	t.Helper()
	ans, _ := json.Marshal(map[string]any{"verdict": "dead", "evidence": node + " is a dead end on every sample.",
		"citations": []any{}, "new_directions": []string{}})
	res, err := eng.Submit(context.Background(), q, node, []byte("```json\n"+string(ans)+"\n```\n"))
	if err != nil || !res.Status.Terminal() {
		t.Fatalf("submit %s: %+v, %v; want it locked", node, res, err)
	}
}

// TestExportCarriesItsSignature: each export batch ends with its
// signature line, by the box's device key, with the ledger head it was
// read with; an export of two batches appended to one file verifies
// offline, each batch on its own.
func TestExportCarriesItsSignature(t *testing.T) {
	e := newEngines(t)
	s := e.eng.NewQuestSpec("x", "export it")
	s.Provider = engine.ProviderExternal
	q, err := e.eng.NewQuest(s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.eng.Scan(q.ID, []string{"one", "two", "three"}); err != nil {
		t.Fatal(err)
	}
	k, err := ledger.LoadDeviceKey(e.eng.Store().Dir())
	if err != nil {
		t.Fatal(err)
	}
	hc, stop := InProcess(New(Options{Engines: e, Internal: true}))
	defer stop()
	c := NewClient(hc, "internal")
	ctx := context.Background()

	var file bytes.Buffer
	lockDead(t, e.eng, q.ID, "n1")
	lockDead(t, e.eng, q.ID, "n2")
	if n, err := c.ExportTo(ctx, q.ID, &file); err != nil || n != 2 {
		t.Fatalf("first export: %d nodes, %v", n, err)
	}
	lines := strings.SplitAfter(file.String(), "\n")
	var sl ExportSealLine
	if err := json.Unmarshal([]byte(lines[2]), &sl); err != nil || sl.Seal.Lines != 2 || sl.Seal.Key != k.Fingerprint() || sl.Seal.Ledger.Seq != 2 {
		t.Fatalf("the line after the batch: %q (%v); want its seal by %s, head 2", lines[2], err, k.Fingerprint())
	}
	lockDead(t, e.eng, q.ID, "n3")
	if n, err := c.ExportTo(ctx, q.ID, &file); err != nil || n != 1 {
		t.Fatalf("second export: %d nodes, %v", n, err)
	}
	got, err := VerifyExport(bytes.NewReader(file.Bytes()), k.Fingerprint())
	want := ExportCheck{Batches: 2, Nodes: 3, Quests: []string{q.ID}, Key: k.Fingerprint(), Heads: []uint64{2, 3}}
	if err != nil || !jsonEq(got, want) {
		t.Errorf("VerifyExport: %+v, %v; want %+v", got, err, want)
	}
	// Two batches swapped still verify (each is signed on its own);
	// lines moved from one batch to the other do not.
	b := file.Bytes()
	mid := bytes.Index(b, []byte("{\"export_seal\":"))
	end := mid + bytes.IndexByte(b[mid:], '\n') + 1
	swapped := append(append([]byte{}, b[end:]...), b[:end]...)
	if _, err := VerifyExport(bytes.NewReader(swapped), ""); err != nil {
		t.Errorf("batches swapped: %v", err)
	}
	first := bytes.IndexByte(b, '\n') + 1
	moved := append(append(append([]byte{}, b[first:end]...), b[:first]...), b[end:]...)
	if _, err := VerifyExport(bytes.NewReader(moved), ""); !errors.Is(err, ErrExportUnverified) || !strings.Contains(err.Error(), "covers 2 lines, but 1 lines precede it") {
		t.Errorf("a line moved past its batch's signature: %v", err)
	}
}

func jsonEq(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// TestVerifyExportFailures: what an export check refuses, each named.
func TestVerifyExportFailures(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(nil)
	_, other, _ := ed25519.GenerateKey(nil)
	lines := []string{"{\"quest\":\"q1\",\"id\":\"n1\"}\n"}
	sealed := func(key ed25519.PrivateKey, edit func(s *engine.ExportSeal)) string {
		s := engine.ExportSeal{Quest: "q1", Upto: 1, Lines: 1, LinesSHA256: hexSHA(lines[0]), HeadSeq: 4, Head: "ab"}
		s.HeadSig = ed25519.Sign(key, ledger.HeadMessage(4, "ab"))
		s.PublicKey = key.Public().(ed25519.PublicKey)
		if edit != nil {
			edit(&s)
		}
		s.Sig = ed25519.Sign(key, ledger.ExportMessage(s.Quest, s.From, s.Upto, s.Lines, s.LinesSHA256, s.HeadSeq, s.Head))
		raw, _ := json.Marshal(ExportSealLine{Seal: ExportSealView(s)})
		return string(raw) + "\n"
	}
	if _, err := VerifyExport(strings.NewReader(lines[0]+sealed(priv, nil)), ledger.Fingerprint(pub)); err != nil {
		t.Fatalf("a good export: %v", err)
	}
	for _, c := range []struct {
		name, file, want string
	}{
		{"empty", "", "holds no signed export batch"},
		{"unsigned", lines[0] + func() string {
			raw, _ := json.Marshal(ExportSealLine{Seal: ExportSealView(engine.ExportSeal{Quest: "q1", Upto: 1, Lines: 1, LinesSHA256: hexSHA(lines[0]), Unsigned: "this box does not sign its ledger's head: why"})})
			return string(raw) + "\n"
		}(), "the batch is unsigned: this box does not sign its ledger's head: why"},
		{"head signed by another key", lines[0] + sealed(priv, func(s *engine.ExportSeal) { s.HeadSig = ed25519.Sign(other, ledger.HeadMessage(4, "ab")) }), "the ledger head's signature (record 4) is not the same key's"},
		{"no head signature", lines[0] + sealed(priv, func(s *engine.ExportSeal) { s.HeadSig = nil }), "carries no signature of the ledger's head"},
		{"two keys", lines[0] + sealed(priv, nil) + lines[0] + sealed(other, nil), "the batches before it by key"},
		{"not base64", lines[0] + strings.Replace(sealed(priv, nil), `"signature":"`, `"signature":"!`, 1), "is not base64"},
		{"not JSON", lines[0] + "{\"export_seal\":{\n", "does not decode"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := VerifyExport(strings.NewReader(c.file), "")
			if !errors.Is(err, ErrExportUnverified) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("VerifyExport: %v; want %q", err, c.want)
			}
		})
	}
}

func hexSHA(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestExportSealView pins the signature line's JSON (a golden file).
func TestExportSealView(t *testing.T) {
	seed := bytes.Repeat([]byte{7}, ed25519.SeedSize)
	priv := ed25519.NewKeyFromSeed(seed)
	s := engine.ExportSeal{Quest: "q1", From: 2, Upto: 5, Lines: 3, LinesSHA256: hexSHA("lines"), HeadSeq: 9, Head: hexSHA("head"),
		HeadSig: ed25519.Sign(priv, ledger.HeadMessage(9, hexSHA("head"))), PublicKey: priv.Public().(ed25519.PublicKey)}
	s.Sig = ed25519.Sign(priv, ledger.ExportMessage(s.Quest, s.From, s.Upto, s.Lines, s.LinesSHA256, s.HeadSeq, s.Head))
	golden(t, "export_seal", ExportSealLine{Seal: ExportSealView(s)})
}
