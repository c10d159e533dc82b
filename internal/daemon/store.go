package daemon

// The operations on a store that the command line runs without a daemon
// (or beside one): each opens the store, or the backup, itself.

import (
	"io"
	"path/filepath"
	"time"

	"github.com/questbox/questbox/engine"
)

// StorePath is the store file of the data directory data.
func StorePath(data string) string { return filepath.Join(data, engine.StoreFile) }

// StoreHeld reports whether another process holds the store in data for
// writing (a daemon starting or stopping, or a writing command).
func StoreHeld(data string) bool { return engine.StoreHeld(data) }

// Salvage copies every readable record of the corrupt store in data into
// a fresh one and keeps the corrupt file beside it (engine.Salvage).
func Salvage(data string, now time.Time) (engine.SalvageReport, error) {
	return engine.Salvage(data, now)
}

// BackupName is the default file name of a backup made at now.
func BackupName(now time.Time) string { return engine.BackupName(now) }

// WriteBackup writes the backup that stream writes to path, verified
// before it takes the name (engine.WriteBackup).
func WriteBackup(path string, stream func(io.Writer) error) (engine.VerifyReport, error) {
	return engine.WriteBackup(path, stream)
}
