package daemon

import (
	"context"
	"io"
	"log/slog"
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
	// Verifying (and migrating) the backup holds more live heap than
	// a tick.
	defer d.mem.lift()()
	if d.holding.Load() {
		rep, err := engine.Restore(d.e.Data, backup, name, time.Now())
		if err == nil {
			d.log.Info("restored a backup over the refused store; opening it", "backup", name, "kept", rep.Kept)
		}
		return rep, err
	}
	if _, err := d.engines.Engine(ctx, true); err != nil {
		return engine.RestoreReport{}, err
	}
	staged, err := engine.StageRestore(d.e.Data, backup, name)
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
// one under way.
func (d *daemon) scheduleBackups(ctx context.Context) (wait func()) {
	every := d.cfg.Backup.Every.Duration
	if every <= 0 {
		return func() {}
	}
	t := time.NewTicker(every)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer t.Stop()
		backups{eng: d.eng, dir: d.cfg.BackupDir(), keep: d.cfg.Backup.Keep, log: d.log, lift: d.mem.lift}.run(ctx, t.C)
	}()
	return func() { <-done }
}

// backups is the scheduled backups of one engine.
type backups struct {
	eng  *engine.Engine
	dir  string
	keep int
	log  *slog.Logger
	// lift lifts the memory limit while a backup is written and
	// verified (memlimit.go); nil leaves it.
	lift func() (restore func())
}

// run makes one backup (engine.ScheduledBackup) at each time ticks
// delivers, until ctx ends. A backup that fails is logged and tried again
// at the next tick: the daemon's work never depends on it.
func (b backups) run(ctx context.Context, ticks <-chan time.Time) {
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-ticks:
			path, err := b.scheduled(now)
			if err != nil {
				b.log.Error("scheduled backup failed; the next is due in backup.every", "dir", b.dir, "err", err)
				continue
			}
			b.log.Info("scheduled backup written and verified", "file", path, "keep", b.keep)
		}
	}
}

// scheduled is one engine.ScheduledBackup, with the memory limit lifted.
func (b backups) scheduled(now time.Time) (string, error) {
	if b.lift != nil {
		defer b.lift()()
	}
	return b.eng.ScheduledBackup(b.dir, b.keep, now)
}
