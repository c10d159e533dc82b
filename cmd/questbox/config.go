package main

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/questbox/questbox/internal/config"
	"github.com/questbox/questbox/internal/daemon"
)

// resolve loads the configuration and the data directory. Precedence:
// flag > environment (QUESTBOX_CONFIG, QUESTBOX_DATA) > config file >
// built-in default. Without --config or QUESTBOX_CONFIG, a missing
// config.DefaultPath means the built-in defaults; a file named explicitly
// must exist.
func (e *env) resolve() error {
	cfg, err := e.loadConfig()
	if err != nil {
		return err
	}
	e.cfg, e.data = cfg, cfg.Daemon.Data
	e.redact = config.NewRedactor(cfg, e.getenv, os.ReadFile)
	if e.log == nil {
		e.log = daemon.NewLogger(e.stderr, e.getenv, e.redact, &slog.HandlerOptions{Level: slog.LevelWarn})
	}
	return nil
}

// loadConfig loads the configuration as resolve describes, with
// Daemon.Data resolved. The daemon calls it again on SIGHUP
// (internal/daemon's reload.go).
func (e *env) loadConfig() (*config.Config, error) {
	path, explicit := e.configFlag, true
	if path == "" {
		path = e.getenv("QUESTBOX_CONFIG")
	}
	if path == "" {
		path, explicit = config.DefaultPath, false
	}
	if explicit && !filepath.IsAbs(path) {
		path = filepath.Join(e.cwd, path)
	}
	cfg, err := config.Load(path)
	switch {
	case err == nil:
	case !explicit && errors.Is(err, fs.ErrNotExist):
		cfg = config.Default()
	default:
		return nil, err
	}
	data, from := e.dataFlag, "--data"
	if data == "" {
		data, from = e.getenv("QUESTBOX_DATA"), "QUESTBOX_DATA"
	}
	if data == "" {
		data, from = cfg.Daemon.Data, "the config file "+cfg.Path
		if cfg.Path == "" {
			from = ""
		}
	}
	e.dataFrom = from
	if !filepath.IsAbs(data) {
		data = filepath.Join(e.cwd, data)
	}
	cfg.Daemon.Data = data
	return cfg, nil
}
