package api

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/engine/ledger"
)

// ExportSealLine is the line an export writes after each batch of node
// lines: the batch's signature. Its one key, "export_seal", tells it
// from a node line (which has "id" and "quest").
type ExportSealLine struct {
	Seal ExportSeal `json:"export_seal"`
}

// ExportSeal is the device key's signature of one export batch, and the
// ledger head's signature as the box held it (docs/ledger.md, "Checking
// an export"). Keys and signatures are standard base64 (ed25519: a 32-byte
// public key, 64-byte signatures).
type ExportSeal struct {
	Quest string `json:"quest"`
	// From and Upto are the batch's range of lock sequences, (from, upto].
	From uint64 `json:"from"`
	Upto uint64 `json:"upto"`
	// Lines is how many lines the batch has, just before this one;
	// LinesSHA256 the hex SHA-256 of their bytes, each with its "\n".
	Lines       int    `json:"lines"`
	LinesSHA256 string `json:"lines_sha256"`
	// Ledger is the ledger's head when the batch was read and the head's
	// signature.
	Ledger ExportLedger `json:"ledger"`
	// Key is the fingerprint of PublicKey ("SHA256:…", as `questbox
	// verify` prints the box's); Signature signs the batch
	// (ledger.ExportMessage).
	Key       string `json:"key,omitempty"`
	PublicKey string `json:"public_key,omitempty"`
	Signature string `json:"signature,omitempty"`
	// Unsigned says why the box did not sign the batch.
	Unsigned string `json:"unsigned,omitempty"`
}

// ExportLedger is the ledger's head an export batch names: its record
// and hash, and the device key's signature of them (ledger.HeadMessage).
type ExportLedger struct {
	Seq       uint64 `json:"seq"`
	Head      string `json:"head"`
	Signature string `json:"signature,omitempty"`
}

// ExportSealView is the view of an export batch's seal.
func ExportSealView(s engine.ExportSeal) ExportSeal {
	v := ExportSeal{Quest: s.Quest, From: s.From, Upto: s.Upto, Lines: s.Lines, LinesSHA256: s.LinesSHA256,
		Ledger:   ExportLedger{Seq: s.HeadSeq, Head: s.Head, Signature: b64(s.HeadSig)},
		Unsigned: s.Unsigned}
	if len(s.PublicKey) > 0 {
		v.Key, v.PublicKey, v.Signature = ledger.Fingerprint(s.PublicKey), b64(s.PublicKey), b64(s.Sig)
	}
	return v
}

func b64(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return base64.StdEncoding.EncodeToString(b)
}

// seal is the engine's form of v, to check; an error names the field
// that is not base64.
func (v ExportSeal) seal() (engine.ExportSeal, error) {
	s := engine.ExportSeal{Quest: v.Quest, From: v.From, Upto: v.Upto, Lines: v.Lines, LinesSHA256: v.LinesSHA256,
		HeadSeq: v.Ledger.Seq, Head: v.Ledger.Head, Unsigned: v.Unsigned}
	for _, f := range []struct {
		name string
		in   string
		out  *[]byte
	}{{"ledger.signature", v.Ledger.Signature, &s.HeadSig}, {"public_key", v.PublicKey, (*[]byte)(&s.PublicKey)}, {"signature", v.Signature, &s.Sig}} {
		b, err := base64.StdEncoding.DecodeString(f.in)
		if err != nil {
			return s, fmt.Errorf("its %s is not base64: %v", f.name, err)
		}
		*f.out = b
	}
	return s, nil
}

// ExportCheck is what VerifyExport found in an export file.
type ExportCheck struct {
	// Batches and Nodes count the signed batches and their node lines.
	Batches int `json:"batches"`
	Nodes   int `json:"nodes"`
	// Quests are the quests exported, in the order first seen.
	Quests []string `json:"quests"`
	// Key is the fingerprint of the key that signed every batch.
	Key string `json:"key"`
	// Heads are the ledger heads (record seqs) the batches name, in order.
	Heads []uint64 `json:"heads"`
}

// ErrExportUnverified is the cause of every VerifyExport failure.
var ErrExportUnverified = errors.New("export does not verify")

// VerifyExport checks an export file (what `questbox export` writes: node
// lines, each batch followed by its ExportSealLine) offline, with no store:
// every batch is signed, its lines are exactly those it signed, each
// batch's ledger head carries a signature of the same key, and every
// batch is signed by one key — the one fingerprint key names, if not "".
// Lines after the last seal (a batch cut short, or lines added) fail it.
// An error wraps ErrExportUnverified and names the line and what failed.
func VerifyExport(r io.Reader, key string) (ExportCheck, error) {
	c := ExportCheck{Quests: []string{}, Heads: []uint64{}}
	fail := func(format string, args ...any) (ExportCheck, error) {
		return c, fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrExportUnverified)
	}
	br := bufio.NewReader(r)
	sum := sha256.New()
	lines, first, n := 0, 0, 0
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] != '\n' {
			return fail("line %d does not end in a newline: the export was cut short", n+1)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return fail("read: %v", err)
		}
		n++
		if !bytes.HasPrefix(line, []byte(`{"export_seal":`)) {
			if lines == 0 {
				first = n
			}
			sum.Write(line)
			lines++
			continue
		}
		var sl ExportSealLine
		if err := json.Unmarshal(line, &sl); err != nil {
			return fail("line %d: the batch's signature line does not decode: %v", n, err)
		}
		v := sl.Seal
		batch := fmt.Sprintf("line %d: the signature of the batch of quest %s (lock sequences %d-%d)", n, v.Quest, v.From+1, v.Upto)
		s, err := v.seal()
		if err != nil {
			return fail("%s: %v", batch, err)
		}
		got := hex.EncodeToString(sum.Sum(nil))
		switch {
		case lines != v.Lines:
			return fail("%s covers %d lines, but %d lines precede it since the last signature", batch, v.Lines, lines)
		case got != v.LinesSHA256:
			return fail("%s does not match lines %d-%d: they were changed", batch, first, n-1)
		}
		if err := s.Check(); err != nil {
			return fail("%s: %v", batch, err)
		}
		fp := ledger.Fingerprint(ed25519.PublicKey(s.PublicKey))
		switch {
		case v.Key != "" && v.Key != fp:
			return fail("%s names key %s but carries key %s", batch, v.Key, fp)
		case c.Key != "" && fp != c.Key:
			return fail("%s is by key %s, the batches before it by key %s", batch, fp, c.Key)
		case key != "" && fp != key:
			return fail("%s is by key %s, not by the key you named, %s", batch, fp, key)
		}
		c.Key = fp
		c.Batches++
		c.Nodes += lines
		if !slices.Contains(c.Quests, v.Quest) {
			c.Quests = append(c.Quests, v.Quest)
		}
		c.Heads = append(c.Heads, v.Ledger.Seq)
		sum.Reset()
		lines = 0
	}
	switch {
	case lines > 0:
		return fail("lines %d-%d are not covered by a signature: a batch cut short, or lines added", first, n)
	case c.Batches == 0:
		return fail("the file holds no signed export batch")
	}
	return c, nil
}
