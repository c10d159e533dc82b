package ledger

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"

	"github.com/questbox/questbox/engine/store"
)

// An export carries the device key's word on each batch (docs/ledger.md,
// "Checking an export"): the key signs the batch — its quest, its range of
// lock sequences, the SHA-256 of its lines — together with the ledger's
// head as the batch was read, and the export carries the head's own
// stored signature and the public key beside it. A third party checks it
// offline with `questbox verify-export` (ui/api.VerifyExport), or with any
// ed25519 library from the messages ExportMessage and HeadMessage spell
// out. The box signs a batch only while it signs its ledger's heads
// (Box.Signs): a store whose ledger it cannot vouch for exports
// unsigned batches, which the check refuses.

// Head is the ledger's head as an export batch's transaction read it,
// with its stored signature.
type Head struct {
	Seq  uint64
	Hash string
	Seal HeadSeal
	OK   bool // the head has a stored signature that decodes
}

// ReadHead reads the ledger's head in tx, with its stored signature.
func ReadHead(tx *store.Tx) Head {
	h := Head{Seq: LastSeq(tx), Hash: string(tx.Meta().Get(store.KeyLedgerHead))}
	seal, ok, err := ReadSeal(tx)
	h.Seal, h.OK = seal, ok && err == nil
	return h
}

// ExportSeal is the signature of one export batch (ExportMessage) by the
// device key, and the ledger head's stored signature (HeadMessage).
type ExportSeal struct {
	Quest string
	// From and Upto are the batch's range of lock sequences, (From, Upto].
	From, Upto uint64
	// Lines is the number of the batch's lines, LinesSHA256 the hex
	// SHA-256 of their bytes, in order, each with its "\n".
	Lines       int
	LinesSHA256 string
	// HeadSeq and Head are the ledger's head when the batch was read;
	// HeadSig its stored signature.
	HeadSeq uint64
	Head    string
	HeadSig []byte
	// PublicKey is the device key's public half, Sig its signature of
	// ExportMessage.
	PublicKey ed25519.PublicKey
	Sig       []byte
	// Unsigned says why the box did not sign the batch ("" when it did).
	Unsigned string
}

// ExportMessage is what the device key signs of an export batch. Its first
// line keeps it from ever being taken for another message of the key's.
func ExportMessage(quest string, from, upto uint64, lines int, linesSHA256 string, headSeq uint64, head string) []byte {
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	return []byte("questbox export v1\n" +
		"quest " + quest + "\n" +
		"batch " + u(from) + " " + u(upto) + "\n" +
		"lines " + strconv.Itoa(lines) + " " + linesSHA256 + "\n" +
		"ledger " + u(headSeq) + " " + head + "\n")
}

func (s ExportSeal) message() []byte {
	return ExportMessage(s.Quest, s.From, s.Upto, s.Lines, s.LinesSHA256, s.HeadSeq, s.Head)
}

// Check checks both signatures of s by its public key: the batch's and,
// if the export carries one, the ledger head's. It does not say whose
// key that is: compare Fingerprint(s.PublicKey) with the box's.
func (s ExportSeal) Check() error {
	switch {
	case s.Unsigned != "":
		return fmt.Errorf("the batch is unsigned: %s", s.Unsigned)
	case len(s.PublicKey) != ed25519.PublicKeySize:
		return fmt.Errorf("its public key has %d bytes, not %d", len(s.PublicKey), ed25519.PublicKeySize)
	case !ed25519.Verify(s.PublicKey, s.message(), s.Sig):
		return errors.New("its signature does not match the batch (its lines, range, quest or ledger head were changed)")
	case len(s.HeadSig) == 0:
		return errors.New("it carries no signature of the ledger's head")
	case !ed25519.Verify(s.PublicKey, HeadMessage(s.HeadSeq, s.Head), s.HeadSig):
		return fmt.Errorf("the ledger head's signature (record %d) is not the same key's", s.HeadSeq)
	}
	return nil
}

// SealBatch signs the export batch of quest's lock sequences (from, upto],
// read with the ledger's head, whose lines (each ending in "\n") the
// export writes, with the device key. A box that has no key, or does not
// sign its ledger's heads (see engine/commit/seal.go), returns the seal unsigned,
// saying why.
func (box *Box) SealBatch(quest string, from, upto uint64, head Head, lines []string) ExportSeal {
	sum := sha256.New()
	for _, l := range lines {
		sum.Write([]byte(l))
	}
	s := ExportSeal{Quest: quest, From: from, Upto: upto, Lines: len(lines), LinesSHA256: hex.EncodeToString(sum.Sum(nil)),
		HeadSeq: head.Seq, Head: head.Hash}
	if head.OK {
		s.HeadSig = []byte(head.Seal.Sig)
	}
	switch {
	case box == nil || box.Key == nil:
		s.Unsigned = "this box has no device key yet (its daemon makes it at its first start)"
		return s
	case !box.Signs:
		s.Unsigned = "this box does not sign its ledger's head: " + box.Why
		return s
	}
	pub := box.Key.Public()
	if h := head.Seal; !head.OK || h.Seq != head.Seq || h.Head != head.Hash || h.Key != string(pub) {
		// The head moved without its signature: never on a store that
		// signs (every commit that moves it signs it).
		s.Unsigned = fmt.Sprintf("the ledger's head (record %d) does not carry this box's signature", head.Seq)
		return s
	}
	s.PublicKey = pub
	s.Sig = ed25519.Sign(box.Key.priv, s.message())
	return s
}
