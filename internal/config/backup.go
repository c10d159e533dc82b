package config

import (
	"path/filepath"
	"time"
)

// BackupDirName is the directory of scheduled backups in the data
// directory when backup.dir is "".
const BackupDirName = "backups"

// Backup configures scheduled backups (`questbox backup` on a timer), for
// a box nobody looks at. Each is a verified copy of the store written
// atomically as questbox-YYYYmmdd-HHMMSS.db, made while the daemon works.
type Backup struct {
	// Every is the period of scheduled backups; "0s", the default, makes
	// none. Otherwise at least 1m. The first is made one period after the
	// daemon starts.
	Every Duration `toml:"every"`
	// Keep is how many scheduled backups are kept: the oldest beyond it
	// are removed after each new one. Default 7; at least 1.
	Keep int `toml:"keep"`
	// Dir is where they are written; "" is <daemon.data>/backups, on the
	// data partition. An absolute path.
	Dir string `toml:"dir"`
}

// defaultBackup is the [backup] of [Default].
func defaultBackup() Backup { return Backup{Keep: 7} }

// BackupDir is Backup.Dir, or <Daemon.Data>/backups when that is "".
func (c *Config) BackupDir() string {
	if c.Backup.Dir != "" {
		return c.Backup.Dir
	}
	return filepath.Join(c.Daemon.Data, BackupDirName)
}

func (b *Backup) validate(p *problems) {
	if b.Every.Duration != 0 {
		p.durationAtLeast("backup.every", b.Every, time.Minute)
	}
	p.atLeast("backup.keep", b.Keep, 1)
	if b.Dir != "" && !filepath.IsAbs(b.Dir) {
		p.add("backup.dir", "%q must be an absolute path", b.Dir)
	}
}
