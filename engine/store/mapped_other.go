//go:build !linux

package store

// ReleaseMapped does nothing here: see mapped_linux.go. The daemon runs on
// Linux; elsewhere the store's mapped pages stay as bbolt left them.
func (s *DB) ReleaseMapped() error { return nil }
