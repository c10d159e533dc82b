package commit

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/questbox/questbox/engine/ledger"
	"github.com/questbox/questbox/engine/store"
)

// The ledger's signature is package engine/ledger's (docs/ledger.md;
// docs/design.md, "The signed ledger"); the store signs with the box's
// device key as it opens and commits.

// sealHead signs the ledger's head in tx if tx moved it (ledger.SealHead):
// it runs last in every write transaction of a store that signs
// (Box.Signs).
func (s *Store) sealHead(tx *store.Tx) error {
	if s.box == nil || !s.box.Signs {
		return nil
	}
	return ledger.SealHead(tx, s.box.Key)
}

// openBoxKey loads or (writable) makes the device key of the store s
// opened in dir, and decides whether s signs its new heads; created says
// the open made the store file itself. What it did or found that the
// owner should know is added to s's notes.
func (s *Store) openBoxKey(dir string, created bool) error {
	var (
		k   *ledger.DeviceKey
		err error
		nu  bool
	)
	if s.ReadOnly() {
		k, err = ledger.LoadDeviceKey(dir)
		if errors.Is(err, fs.ErrNotExist) {
			k, err = nil, nil
		}
	} else {
		k, nu, err = ledger.LoadOrCreateDeviceKey(dir)
	}
	if err != nil {
		return err
	}
	s.box = &ledger.Box{Key: k}
	if k == nil {
		return nil
	}
	if nu {
		s.notes = append(s.notes, fmt.Sprintf("ledger: this box's device key was made: %s (%s, mode 0600)", k.Fingerprint(), filepath.Join(dir, ledger.DeviceKeyFile)))
	}
	var sig ledger.Signature
	if err := s.db.View(func(tx *store.Tx) error {
		sig, _ = ledger.CheckSeal(tx, s.db.Schema(), s.box)
		return nil
	}); err != nil {
		return err
	}
	switch {
	case sig.State == ledger.SealSigned:
		s.box.Signs = true
	case sig.State == ledger.SealUnsigned && (nu || created) && !s.ReadOnly():
		if err := s.db.Update(func(tx *store.Tx) error { return ledger.PutSeal(tx, k) }); err != nil {
			return err
		}
		s.box.Signs = true
		if !created {
			s.notes = append(s.notes, fmt.Sprintf("ledger: the head (record %d), from before ledger signing, was signed with this box's new key", sig.Head))
		}
	default:
		s.box.Why = sig.Detail
		if !s.ReadOnly() {
			s.notes = append(s.notes, "ledger: this box does not sign new heads on top of this one: "+sig.Detail)
		}
	}
	return nil
}
