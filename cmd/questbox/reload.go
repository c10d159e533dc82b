package main

// SIGHUP (`systemctl reload questbox`): the daemon reads its config file
// again, validates it, and says which keys changed. It applies none of
// them. Every key is read once, when the daemon starts: the tick period
// and the providers are built into the engine, the pins are claimed, the
// socket and the dashboard are listening, the MQTT session is up, and the
// gate profiles of running quests must not change under a verdict. Swapping
// any of these in a running daemon would be new code with new failure
// modes, for a box whose restart takes a second and loses nothing (runs in
// flight get the grace period, their nodes go back to pending). So a
// reload is a check: the log names each changed key and says it takes
// effect at the next restart, and an invalid file is reported while the
// daemon keeps running on the config it started with (a restart would
// fail, which is what the check is for).

import (
	"context"
	"encoding"
	"fmt"
	"os"
	"os/signal"
	"reflect"
	"slices"
	"strings"
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
			}
		}
	})
	return func() {
		signal.Stop(hup)
		cancel()
		wg.Wait()
	}
}

// reload reads and validates the config file again and logs what changed
// since start-up; it returns the changed keys. It changes nothing.
func (d *daemon) reload() ([]string, error) {
	cfg, err := d.e.loadConfig()
	if err != nil {
		d.log.Error("reload: the config file does not load; still running on the config read at start-up, and a restart would fail until it is fixed", "err", err)
		d.notify("STATUS=config reload failed: the file is invalid (see the journal)")
		return nil, err
	}
	changed := changedKeys(d.fileKeys, configKeys(cfg))
	src := cfg.Path
	if src == "" {
		src = "built-in defaults (no config file)"
	}
	if len(changed) == 0 {
		d.log.Info("reload: config read again; nothing changed", "file", src)
		d.notify("STATUS=config reloaded: unchanged")
		return nil, nil
	}
	for _, k := range changed {
		d.log.Warn("reload: config key changed; it takes effect at the next restart (systemctl restart questbox)", "key", k)
	}
	d.log.Warn("reload: config read again and valid; nothing applied, restart to apply", "file", src, "changed", len(changed))
	d.notify(fmt.Sprintf("STATUS=config changed (%d keys); restart to apply", len(changed)))
	return changed, nil
}

// configKeys flattens cfg to its TOML keys ("daemon.tick",
// "providers.claude.argv") and a printed value each, for comparing two
// configurations. Values are only compared, never logged: some are
// secrets (mqtt.password).
func configKeys(cfg *config.Config) map[string]string {
	out := map[string]string{}
	flattenKeys(out, "", reflect.ValueOf(cfg).Elem())
	return out
}

var textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()

func flattenKeys(out map[string]string, prefix string, v reflect.Value) {
	key := func(name string) string {
		if prefix == "" {
			return name
		}
		return prefix + "." + name
	}
	switch {
	case v.Type().Implements(textMarshaler):
		b, _ := v.Interface().(encoding.TextMarshaler).MarshalText()
		out[prefix] = string(b)
	case v.Kind() == reflect.Pointer:
		if v.IsNil() {
			out[prefix] = "(none)"
			return
		}
		flattenKeys(out, prefix, v.Elem())
	case v.Kind() == reflect.Struct:
		t := v.Type()
		tagged := false
		for i := range t.NumField() {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("toml"), ",")
			if name == "" || name == "-" || !t.Field(i).IsExported() {
				continue
			}
			tagged = true
			flattenKeys(out, key(name), v.Field(i))
		}
		if !tagged {
			out[prefix] = fmt.Sprintf("%+v", v.Interface())
		}
	case v.Kind() == reflect.Map && v.Type().Key().Kind() == reflect.String:
		if v.Len() == 0 {
			out[prefix] = "(none)"
		}
		for _, k := range v.MapKeys() {
			flattenKeys(out, key(k.String()), v.MapIndex(k))
		}
	default:
		// fmt prints maps sorted by key: the text is stable.
		out[prefix] = fmt.Sprintf("%+v", v.Interface())
	}
}

// changedKeys lists the keys whose values differ, or that only one side
// has, sorted.
func changedKeys(old, new map[string]string) []string {
	var out []string
	for k, v := range new {
		if ov, ok := old[k]; !ok || ov != v {
			out = append(out, k)
		}
	}
	for k := range old {
		if _, ok := new[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
