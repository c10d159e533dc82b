package main

import (
	"context"
	"io"
	"time"

	"github.com/questbox/questbox/engine"
)

// Restoring a backup in a running daemon, without a restart: the API
// handler stages the backup (copied into the data directory and verified
// while the daemon works on: a refused file changes nothing), hands it to
// the session, which stops its work as at shutdown — no more dispatches,
// runs in flight get the grace period, unfinished nodes back to pending,
// MQTT offline, the store closed — then swap replaces the file and the
// daemon starts a new session on the restored store. The control socket
// and the LEDs stay up throughout; commands meanwhile are told the daemon
// is restoring.

// restoreReq is one restore handed to the session.
type restoreReq struct {
	name   string
	staged *engine.StagedRestore
	done   chan restoreResult // buffered: the session never blocks on it
}

type restoreResult struct {
	rep engine.RestoreReport
	err error
}

// Restore implements api.Restorer for daemonEngines. A daemon that serves
// its store stops its work for the swap; one waiting for a refused store
// (hold.go: corrupt, or a newer questbox's) has it closed, so the swap is
// done at once under the store's lock and the hold opens the restored
// store at its next look. A daemon starting or stopping refuses.
func (d *daemon) Restore(ctx context.Context, backup io.Reader, name string) (engine.RestoreReport, error) {
	if d.holding.Load() {
		rep, err := engine.Restore(d.e.data, backup, name, time.Now())
		if err == nil {
			d.log.Info("restored a backup over the refused store; opening it", "backup", name, "kept", rep.Kept)
		}
		return rep, err
	}
	if _, err := d.engines.Engine(ctx, true); err != nil {
		return engine.RestoreReport{}, err
	}
	staged, err := engine.StageRestore(d.e.data, backup, name)
	if err != nil {
		return engine.RestoreReport{}, err
	}
	req := &restoreReq{name: name, staged: staged, done: make(chan restoreResult, 1)}
	select {
	case d.restores <- req:
	case <-ctx.Done():
		staged.Discard()
		return engine.RestoreReport{}, ctx.Err()
	}
	// The session answers every request it took, after the swap and the
	// new session's open.
	res := <-req.done
	return res.rep, res.err
}

// swap replaces the closed store by the staged backup; the next session
// opens whichever store is then in place and answers the request once it
// is ready (or could not open).
func (d *daemon) swap(req *restoreReq) {
	rep, err := req.staged.Swap(time.Now())
	req.staged.Discard()
	if err != nil {
		d.log.Error("restore failed; the store is as it was", "backup", req.name, "err", err)
	} else {
		d.log.Info("restored a backup", "backup", req.name, "kept", rep.Kept, "schema", rep.Schema, "migrated", rep.Migrated)
	}
	d.engines.afterRestore(func() { req.done <- restoreResult{rep: rep, err: err} })
}

// scheduleBackups makes a backup every backup.every into backup.dir,
// keeping backup.keep, until ctx ends; the returned func waits for the
// one under way. A backup that fails is logged and tried again at the next
// period: the daemon's work never depends on it.
func (d *daemon) scheduleBackups(ctx context.Context) (wait func()) {
	every := d.cfg.Backup.Every.Duration
	if every <= 0 {
		return func() {}
	}
	dir, keep, eng := d.cfg.BackupDir(), d.cfg.Backup.Keep, d.eng
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				path, err := eng.ScheduledBackup(dir, keep, now)
				if err != nil {
					d.log.Error("scheduled backup failed; the next is in backup.every", "dir", dir, "every", every, "err", err)
					continue
				}
				d.log.Info("scheduled backup written and verified", "file", path, "keep", keep)
			}
		}
	}()
	return func() { <-done }
}
