package config

import (
	"strings"
	"testing"
	"time"
)

// TestBackupValid pins the defaults (no scheduled backups, keep 7, the
// data directory's backups) and a schedule that is set.
func TestBackupValid(t *testing.T) {
	c := Default()
	if c.Backup.Every.Duration != 0 || c.Backup.Keep != 7 || c.BackupDir() != "/var/lib/questbox/backups" {
		t.Errorf("default backup %+v in %s", c.Backup, c.BackupDir())
	}
	c, err := Parse([]byte("[backup]\nevery = \"24h\"\nkeep = 3\ndir = \"/srv/qb\"\n"), "t.toml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Backup.Every.Duration != 24*time.Hour || c.Backup.Keep != 3 || c.BackupDir() != "/srv/qb" {
		t.Errorf("got %+v in %s", c.Backup, c.BackupDir())
	}
}

// TestBackupInvalid: every bad value is refused naming its key.
func TestBackupInvalid(t *testing.T) {
	for _, tc := range []struct {
		name, text, key, msg string
	}{
		{"too often", `every = "10s"`, "backup.every", "below the minimum 1m"},
		{"negative", `every = "-1h"`, "backup.every", "negative"},
		{"keep none", `keep = 0`, "backup.keep", "below the minimum 1"},
		{"relative dir", `dir = "backups"`, "backup.dir", "must be an absolute path"},
		{"unknown key", `evry = "24h"`, "backup.evry", "every"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte("[backup]\n"+tc.text+"\n"), "t.toml")
			if err == nil {
				t.Fatal("accepted")
			}
			ps := problemsOf(t, err)
			if len(ps) != 1 || ps[0].Key != tc.key || !strings.Contains(ps[0].Msg, tc.msg) {
				t.Errorf("got %v, want one problem with key %s saying %q", err, tc.key, tc.msg)
			}
		})
	}
}
