package ledger

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/store"
)

// The ledger's signature (docs/ledger.md; docs/design.md, "The signed
// ledger"). The hash chain proves that no locked verdict changed after
// the record that follows it was written; it has no key, so whoever can
// write the file can rebuild the chain with valid hashes. The box's device
// key, an ed25519 key kept in the data directory (DeviceKeyFile), signs
// the chain's head: every commit that moves the head stores the head's
// signature (one per commit, not per record) in the meta bucket
// (kLedgerSeal), and Verify checks it. A ledger rebuilt without the key
// no longer matches its signature.
//
// The store signs a new head only on top of one it trusts: at open, the
// head must carry this box's valid signature (Box.Signs). A head signed
// by another key, unsigned where it should not be, or not matching its
// signature stays as it is, and every later head stays unsigned, so the
// daemon never launders a rewrite by signing on top of it. Two moments
// take a head that carries no signature of this box's key on trust:
//
//   - the open that creates the device key (or the store itself) signs an
//     unsigned head: the first start of a questbox that signs, on a store
//     from before (schema 9 and older), as the upgrade to schema 2 sealed
//     the locked nodes. A store copied here later from before signing, or
//     one whose signature was removed, is not signed: the key existed, so
//     an attacker who strips the signature (and sets the schema back)
//     does not get the forged head signed at the next start;
//   - restore and salvage, which the owner runs, sign the store they put
//     in place, and say what its signature was before.

// SigningSchema is the first schema whose stores sign their ledger's
// head: an unsigned head of an older store is signed at the daemon's next
// start.
const SigningSchema = 10

// DeviceKeyFile is the name of the device key in the data directory: an
// ed25519 private key in PKCS #8 PEM ("PRIVATE KEY", as `openssl genpkey
// -algorithm ed25519` writes), mode 0600.
const DeviceKeyFile = "device.key"

// DeviceKey is the box's ledger signing key.
type DeviceKey struct {
	priv ed25519.PrivateKey
}

// Public is the key's public half.
func (k *DeviceKey) Public() ed25519.PublicKey { return k.priv.Public().(ed25519.PublicKey) }

// Fingerprint names the key: see Fingerprint.
func (k *DeviceKey) Fingerprint() string { return Fingerprint(k.Public()) }

// Fingerprint names a public key as OpenSSH does: "SHA256:" and the
// unpadded base64 of the SHA-256 of its 32 bytes.
func Fingerprint(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return "SHA256:" + base64.RawStdEncoding.EncodeToString(sum[:])
}

// LoadDeviceKey reads the device key in the data directory dir. A missing
// key is an error wrapping fs.ErrNotExist; one that cannot be read, that
// others may read, or that is not an ed25519 key in PKCS #8 PEM is
// ErrDeviceKey naming the file and why. A key is never replaced: heads
// signed with it would read "signed by another key".
func LoadDeviceKey(dir string) (*DeviceKey, error) {
	path := filepath.Join(dir, DeviceKeyFile)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("device key %s: %w", path, err)
	}
	if err != nil {
		return nil, keyError(path, err.Error())
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, keyError(path, err.Error())
	}
	if fi.Mode()&0o077 != 0 {
		return nil, keyError(path, fmt.Sprintf("its mode is %#o: others may read it; `chmod 600 %s`", fi.Mode().Perm(), path))
	}
	raw := make([]byte, 4096)
	n, err := f.Read(raw)
	if err != nil && n == 0 {
		return nil, keyError(path, "it is empty or cannot be read: "+err.Error())
	}
	block, _ := pem.Decode(raw[:n])
	if block == nil || block.Type != "PRIVATE KEY" {
		return nil, keyError(path, `it is not a PEM "PRIVATE KEY" block`)
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, keyError(path, "it is not a PKCS #8 key: "+err.Error())
	}
	priv, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, keyError(path, fmt.Sprintf("it is a %T, not an ed25519 key", k))
	}
	return &DeviceKey{priv: priv}, nil
}

func keyError(path, why string) error {
	return fmt.Errorf("device key %s is unusable: %s (questbox never replaces it: put the original back, or move it aside to have a new key made at the next start, after which this box's earlier ledger heads read \"signed by another key\"; see docs/ledger.md): %w", path, why, domain.ErrDeviceKey)
}

// LoadOrCreateDeviceKey loads dir's device key, making one if there is
// none (created says so). A new key is written to a temporary file,
// synced and linked into place, so a crash never leaves a partial key,
// and a key another process made meanwhile is the one used.
func LoadOrCreateDeviceKey(dir string) (k *DeviceKey, created bool, err error) {
	k, err = LoadDeviceKey(dir)
	if !errors.Is(err, fs.ErrNotExist) {
		return k, false, err
	}
	path := filepath.Join(dir, DeviceKeyFile)
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, false, keyError(path, "making it: "+err.Error())
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, false, keyError(path, "encoding it: "+err.Error())
	}
	tmp, err := os.CreateTemp(dir, DeviceKeyFile+".new-*")
	if err != nil {
		return nil, false, keyError(path, "making it: "+err.Error())
	}
	defer os.Remove(tmp.Name())
	err = tmp.Chmod(0o600)
	if err == nil && os.Geteuid() == 0 {
		// Root writing to the daemon's store without a daemon: the key
		// belongs to the data directory's owner (the daemon's user), or
		// the daemon could not read it at its next start.
		if fi, serr := os.Stat(dir); serr == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				err = tmp.Chown(int(st.Uid), int(st.Gid))
			}
		}
	}
	if err == nil {
		err = pem.Encode(tmp, &pem.Block{Type: "PRIVATE KEY", Bytes: der})
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Link(tmp.Name(), path)
	}
	if errors.Is(err, fs.ErrExist) {
		k, err = LoadDeviceKey(dir)
		return k, false, err
	}
	if err == nil {
		err = store.SyncDir(dir)
	}
	if err != nil {
		return nil, false, keyError(path, "making it: "+err.Error())
	}
	return &DeviceKey{priv: priv}, true, nil
}

// kLedgerSeal holds the signature of the ledger's head (schema 10): a
// HeadSeal in sealCodec's form.
var kLedgerSeal = store.KeyLedgerSeal

// HeadSeal is the stored signature of the ledger's head: the device key's
// signature of HeadMessage(Seq, Head), and that key's public half.
type HeadSeal struct {
	Seq  uint64 // the ledger record the head is
	Head string // its hash (hex), as the meta bucket's ledger head holds it
	Key  string // the public key (32 bytes)
	Sig  string // the signature (64 bytes)
}

// sealRecordV1 is the first byte of a stored head signature.
const sealRecordV1 = 0x01

var sealCodec = store.NewCodec(sealRecordV1,
	store.Uint("Seq", func(h *HeadSeal) *uint64 { return &h.Seq }),
	store.Text("Head", func(h *HeadSeal) *string { return &h.Head }),
	store.Text("Key", func(h *HeadSeal) *string { return &h.Key }),
	store.Text("Sig", func(h *HeadSeal) *string { return &h.Sig }),
)

// HeadMessage is what the device key signs of the ledger's head: record
// seq whose hash is head. Its first line keeps a head's signature from
// ever being taken for another message of the key's.
func HeadMessage(seq uint64, head string) []byte {
	return []byte("questbox ledger head v1\n" + strconv.FormatUint(seq, 10) + " " + head + "\n")
}

// Valid reports whether h's signature is its key's over its message.
func (h HeadSeal) Valid() bool {
	return len(h.Key) == ed25519.PublicKeySize && len(h.Sig) == ed25519.SignatureSize &&
		ed25519.Verify(ed25519.PublicKey(h.Key), HeadMessage(h.Seq, h.Head), []byte(h.Sig))
}

// ReadSeal reads the stored head signature; ok is false when there is
// none, err set when it does not decode.
func ReadSeal(tx *store.Tx) (h HeadSeal, ok bool, err error) {
	meta := tx.Meta()
	if meta == nil {
		return h, false, nil // a salvage that lost it
	}
	raw := meta.Get(kLedgerSeal)
	if raw == nil {
		return h, false, nil
	}
	return h, true, sealCodec.Decode(raw, &h)
}

// LastSeq is the seq of the ledger's last record (the head), 0 when
// it is empty.
func LastSeq(tx *store.Tx) uint64 {
	b := tx.Ledger()
	if b == nil {
		return 0 // a salvage that lost it
	}
	k, _ := b.Cursor().Last()
	return store.SeqOf(k)
}

// PutSeal signs the ledger's head in tx with k.
func PutSeal(tx *store.Tx, k *DeviceKey) error {
	meta := tx.Meta()
	h := HeadSeal{Seq: LastSeq(tx), Head: string(meta.Get(store.KeyLedgerHead)), Key: string(k.Public())}
	h.Sig = string(ed25519.Sign(k.priv, HeadMessage(h.Seq, h.Head)))
	return meta.Put(kLedgerSeal, sealCodec.Append(nil, &h))
}

// SealHead signs the ledger's head in tx with k if tx moved it: it runs
// last in every write transaction of a store that signs. A commit that
// appends no ledger record costs two reads of the meta bucket.
func SealHead(tx *store.Tx, k *DeviceKey) error {
	meta := tx.Meta()
	var cur HeadSeal
	if raw := meta.Get(kLedgerSeal); raw != nil && sealCodec.Decode(raw, &cur) == nil && cur.Head == string(meta.Get(store.KeyLedgerHead)) {
		return nil
	}
	return PutSeal(tx, k)
}

// Box is what a store opened in its data directory knows of the box's
// device key.
type Box struct {
	// Key is the device key; nil when the data directory has none yet
	// (a read-only open before the first start that signs).
	Key *DeviceKey
	// Signs says that the head at open carried Key's valid signature (or
	// was signed then): each commit that moves the head signs it.
	Signs bool
	// Why is the head's signature as the open found it, when it does
	// not sign.
	Why string
}

// SealState is what a ledger head's signature is.
type SealState string

const (
	// SealSigned: the head carries a valid signature, by this box's key
	// (or, for a file checked on its own, by the key named).
	SealSigned SealState = "signed"
	// SealUnsigned: the head carries no signature.
	SealUnsigned SealState = "unsigned"
	// SealOtherKey: the head's valid signature is another key's than
	// this box's.
	SealOtherKey SealState = "signed by another key"
	// SealMismatch: the signature does not match the head: it is not
	// valid, or it signs a record the ledger no longer holds as it was
	// signed (rewritten, removed), or records follow it unsigned.
	SealMismatch SealState = "signature does not match the head"
)

// Signature is what Verify found of the ledger head's signature.
type Signature struct {
	State SealState `json:"state"`
	// Key is the fingerprint of the key that signed; BoxKey this box's
	// ("" for a file checked on its own, or a box with no key yet).
	Key    string `json:"key,omitempty"`
	BoxKey string `json:"box_key,omitempty"`
	// Seq is the ledger record the signature covers, Head the ledger's
	// last record.
	Seq  uint64 `json:"seq,omitempty"`
	Head uint64 `json:"head"`
	// Rewritten says that the record the signature covers is in the
	// ledger with another hash: the ledger was rewritten without the key.
	Rewritten bool `json:"rewritten,omitempty"`
	// Detail says it in a sentence.
	Detail string `json:"detail"`
}

// CheckSeal checks the head's signature in tx, of a store of schema read
// with what box knows of the device key: nil for a file checked on its
// own (a backup), whose signer is only named; a box without a key yet
// (a read-only open before the first start that signs) is read as such a
// file. problem is set when the finding fails Verify.
func CheckSeal(tx *store.Tx, schema uint64, box *Box) (sig Signature, problem string) {
	sig.Head = LastSeq(tx)
	known := box != nil && box.Key != nil
	var boxPub ed25519.PublicKey
	if known {
		boxPub = box.Key.Public()
		sig.BoxKey = Fingerprint(boxPub)
	}
	h, ok, err := ReadSeal(tx)
	switch {
	case !ok:
		sig.State = SealUnsigned
	case err != nil:
		sig.State, sig.Detail = SealMismatch, fmt.Sprintf("the ledger's signature does not decode (%v)", err)
	case !h.Valid():
		sig.State, sig.Detail = SealMismatch, fmt.Sprintf("the ledger's signature is not a valid signature of record %d with hash %s by the key it names", h.Seq, short(h.Head))
	}
	if ok && err == nil && len(h.Key) == ed25519.PublicKeySize {
		sig.Key, sig.Seq = Fingerprint(ed25519.PublicKey(h.Key)), h.Seq
	}
	if sig.State == "" {
		sig.State, sig.Detail, sig.Rewritten = sealCovers(tx, h, sig.Head)
	}
	switch {
	case sig.State == SealSigned && known && h.Key != string(boxPub):
		sig.State = SealOtherKey
		sig.Detail = fmt.Sprintf("the ledger's head (record %d) is signed by key %s, not by this box's key %s: a store copied from another box, or this box's key was replaced", sig.Seq, sig.Key, sig.BoxKey)
	case sig.State == SealSigned && known:
		sig.Detail = fmt.Sprintf("the ledger's head (record %d) is signed by this box's key %s", sig.Seq, sig.Key)
		return sig, ""
	case sig.State == SealSigned:
		sig.Detail = fmt.Sprintf("the ledger's head (record %d) is signed by key %s", sig.Seq, sig.Key)
		if box != nil {
			sig.Detail += fmt.Sprintf(" (this data directory has no device key, %s, to compare it with)", DeviceKeyFile)
		}
		return sig, ""
	case sig.State == SealUnsigned && !known:
		sig.Detail = fmt.Sprintf("the ledger's head (record %d) is unsigned", sig.Head)
		if box != nil && schema < SigningSchema {
			sig.Detail += fmt.Sprintf(": the store is from before ledger signing (schema v%d); the daemon signs it at its next start", schema)
		} else {
			sig.Detail += " (a store from before ledger signing, or its signature was removed)"
		}
		return sig, ""
	case sig.State == SealUnsigned:
		sig.Detail = fmt.Sprintf("the ledger's head (record %d) is unsigned, but this box signs every head it writes: its signature was removed, or the store was copied here from before ledger signing (to vouch for a store you trust, `questbox backup` it and `questbox restore` the copy)", sig.Head)
	}
	return sig, "ledger: " + string(sig.State) + ": " + sig.Detail
}

// sealCovers checks that the record a valid signature h signs is the
// ledger's head, as it was signed: the record is there with that hash and
// none follows it.
func sealCovers(tx *store.Tx, h HeadSeal, last uint64) (st SealState, detail string, rewritten bool) {
	var r Record
	found := false
	if lb := tx.Ledger(); h.Seq > 0 && lb != nil {
		var err error
		if found, err = store.GetJSON(lb, store.U64(h.Seq), &r); err != nil {
			return SealMismatch, fmt.Sprintf("the signature covers ledger record %d, which does not decode", h.Seq), false
		}
	}
	head := string(tx.Meta().Get(store.KeyLedgerHead))
	switch {
	case h.Seq > 0 && !found:
		return SealMismatch, fmt.Sprintf("the signature covers ledger record %d (hash %s), which is missing: the ledger ends at record %d (records were removed without the key)", h.Seq, short(h.Head), last), false
	case h.Seq > 0 && r.Hash != h.Head:
		return SealMismatch, fmt.Sprintf("the signature covers ledger record %d with hash %s, but that record's hash is now %s: the ledger was rewritten without the key", h.Seq, short(h.Head), short(r.Hash)), true
	case h.Seq == 0 && h.Head != "":
		return SealMismatch, "the signature names no ledger record but a head hash", false
	case last > h.Seq:
		return SealMismatch, fmt.Sprintf("the signature covers ledger records up to %d, but records %d-%d follow it unsigned: they were appended without the key (or while this box would not sign on top of a head it could not vouch for; see the daemon's log)", h.Seq, h.Seq+1, last), false
	case head != h.Head:
		return SealMismatch, fmt.Sprintf("the ledger's head hash %s is not the signed %s", short(head), short(h.Head)), false
	}
	return SealSigned, "", false
}

// short is the start of a hex hash, enough to tell hashes apart in a
// message.
func short(h string) string {
	if len(h) > 16 {
		return h[:16] + "…"
	}
	if h == "" {
		return `""`
	}
	return h
}

// SignCopy signs the head in tx, of a store restored or salvaged into a
// data directory, with that directory's device key k unless it is signed
// by k already, and says what its signature was before (was, read before
// the copy's ledger was changed). The owner who restores or salvages
// vouches for the copy; a restore refuses a backup whose signature does
// not match its ledger (Verify), and salvage does not sign a ledger its
// signature shows rewritten (SalvageSeal).
func SignCopy(tx *store.Tx, k *DeviceKey, was Signature) (string, error) {
	now, _ := CheckSeal(tx, SigningSchema, &Box{Key: k})
	if now.State == SealSigned {
		return fmt.Sprintf("ledger: the head (record %d) is signed by this box's key %s", now.Seq, k.Fingerprint()), nil
	}
	if err := PutSeal(tx, k); err != nil {
		return "", err
	}
	what := "was unsigned"
	switch was.State {
	case SealSigned:
		what = fmt.Sprintf("was signed by this box's key up to record %d", was.Seq)
	case SealOtherKey:
		what = "was signed by another key, " + was.Key
	case SealMismatch:
		what = "did not match its signature (" + was.Detail + ")"
	}
	return fmt.Sprintf("ledger: the head %s; its head (record %d) is now signed by this box's key %s", what, now.Head, k.Fingerprint()), nil
}

// SalvageSeal signs a salvaged store's head (engine.Salvage): Rebuild reads what
// the damaged store's signature was before it changes the ledger; the
// verification of the salvaged copy signs it. A ledger the signature
// shows rewritten is left unsigned, for verify to name.
type SalvageSeal struct {
	Read bool
	Was  Signature
}

// Sign signs the salvaged store db with the device key k, unless the
// store was healthy or its ledger rewritten; it says what it did.
func (sv *SalvageSeal) Sign(db *store.DB, k *DeviceKey) (string, error) {
	switch {
	case !sv.Read || k == nil:
		return "", nil // a healthy store, left alone
	case sv.Was.Rewritten:
		return "ledger: the salvaged head is not signed: " + sv.Was.Detail, nil
	}
	var note string
	err := db.Update(func(tx *store.Tx) error {
		var err error
		note, err = SignCopy(tx, k, sv.Was)
		return err
	})
	return note, err
}
