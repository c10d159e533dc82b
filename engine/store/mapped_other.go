//go:build !linux

package store

import bolt "go.etcd.io/bbolt"

// ReleaseMapped does nothing here: see mapped_linux.go. The daemon runs on
// Linux; elsewhere the store's mapped pages stay as bbolt left them.
func (s *DB) ReleaseMapped() error { return nil }

// KeepMapped does nothing here: there is no release (mapped_linux.go).
func (s *DB) KeepMapped(tx *bolt.Tx) (done func()) { return func() {} }

// ForgetMapped does nothing here: nothing is kept.
func (s *DB) ForgetMapped() error { return nil }

// keptPages is mapped_linux.go's; nothing is kept here.
type keptPages struct{}
