package main

// SIGHUP (`systemctl reload questbox`): the daemon reads its config file
// again, validates it, and says which keys changed. It applies one of
// them, daemon.memory_limit (memlimit.go: a runtime setting that nothing
// else depends on), and none of the others (config.Changed says why): for
// them a reload is a check. The log names each changed key and says it
// takes effect at the next restart, and an invalid file is reported while
// the daemon keeps running on the config it started with (a restart would
// fail, which is what the check is for).

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"

	"github.com/questbox/questbox/config"
)

// watchReload handles SIGHUP until ctx ends or stop is called. It is
// registered before anything else, so that a SIGHUP during start-up does
// not kill the daemon (Go's default for SIGHUP is to exit).
func (d *daemon) watchReload(ctx context.Context) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				d.reload()
				if d.restart != nil {
					d.restartForUpdate()
				}
			}
		}
	})
	return func() {
		signal.Stop(hup)
		cancel()
		wg.Wait()
	}
}

// reload reads and validates the config file again, applies a changed
// daemon.memory_limit, and logs what else changed since start-up; it
// returns those other keys, which it does not apply.
func (d *daemon) reload() ([]string, error) {
	cfg, err := d.e.loadConfig()
	if err != nil {
		d.log.Error("reload: the config file does not load; still running on the config read at start-up, and a restart would fail until it is fixed", "err", err)
		d.notify("STATUS=config reload failed: the file is invalid (see the journal)")
		return nil, err
	}
	keys, err := cfg.Keys()
	if err != nil {
		d.log.Error("reload: the config file loads but cannot be compared with the one read at start-up", "err", err)
		return nil, err
	}
	// Compared with the limit in force, not the file read at start-up: a
	// value changed back by a later reload is applied too.
	applied := d.mem.reload(cfg.Daemon.MemoryLimit)
	changed := slices.DeleteFunc(config.Changed(d.fileKeys, keys), func(k string) bool { return k == memoryLimitKey })
	src := cfg.Path
	if src == "" {
		src = "built-in defaults (no config file)"
	}
	switch {
	case len(changed) == 0 && applied:
		d.log.Info("reload: config read again and valid; "+memoryLimitKey+" applied, nothing else changed", "file", src)
		d.notify("STATUS=config reloaded: " + memoryLimitKey + " applied")
		return nil, nil
	case len(changed) == 0:
		d.log.Info("reload: config read again; nothing changed", "file", src)
		d.notify("STATUS=config reloaded: unchanged")
		return nil, nil
	}
	for _, k := range changed {
		d.log.Warn("reload: config key changed; it takes effect at the next restart (systemctl restart questbox)", "key", k)
	}
	msg := "reload: config read again and valid; nothing applied, restart to apply"
	if applied {
		msg = "reload: config read again and valid; " + memoryLimitKey + " applied, the other keys need a restart"
	}
	d.log.Warn(msg, "file", src, "changed", len(changed))
	d.notify(fmt.Sprintf("STATUS=config changed (%d keys); restart to apply", len(changed)))
	return changed, nil
}

// memoryLimitKey is the one key a reload applies.
const memoryLimitKey = "daemon.memory_limit"
