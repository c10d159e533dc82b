package update

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Slot is one binary the box can run.
type Slot struct {
	// Version is the release's version.
	Version string `json:"version"`
	// File is the binary's name in bin/; "" is the packaged binary.
	File string `json:"file,omitempty"`
}

func (s Slot) String() string {
	if s.File == "" {
		return s.Version + " (packaged)"
	}
	return s.Version
}

// Trial is a release that runs until it commits or fails.
type Trial struct {
	Slot
	// Starts is how many times it was started without committing.
	Starts int `json:"starts"`
	// Ready is the last start that became READY (Dir.Ready); a start
	// that did not is not given another one.
	Ready int `json:"ready,omitempty"`
	// Snapshot is the store copy taken before its first start (a file
	// name in bin/); "" until then, or when there was no store yet.
	Snapshot string `json:"snapshot,omitempty"`
}

// State is bin/state.json.
type State struct {
	// Package is the packaged binary's version when the state was
	// written; a state of another package version is void.
	Package string `json:"package"`
	// Current is the committed binary.
	Current Slot `json:"current"`
	// Previous is the binary Current replaced, kept for a rollback;
	// nil when there is none.
	Previous *Slot `json:"previous,omitempty"`
	// Trial is a release on trial, nil when none.
	Trial *Trial `json:"trial,omitempty"`
	// Last says what the last update did: committed, rolled back and why.
	Last string `json:"last,omitempty"`
}

const stateFile = "state.json"

func (d *Dir) readState() (State, error) {
	b, err := os.ReadFile(filepath.Join(d.bin, stateFile))
	if errors.Is(err, fs.ErrNotExist) {
		return d.fresh(), nil
	}
	if err != nil {
		return State{}, fmt.Errorf("update state: %w", err)
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return State{}, fmt.Errorf("update state %s: %w", filepath.Join(d.bin, stateFile), err)
	}
	if s.Package != d.pkg {
		// The package was upgraded (or downgraded) since: it wins.
		f := d.fresh()
		f.Last = fmt.Sprintf("the packaged questbox changed from %s to %s; it runs, and releases installed by questbox update before are not used", s.Package, d.pkg)
		return f, nil
	}
	return s, nil
}

func (d *Dir) fresh() State {
	return State{Package: d.pkg, Current: Slot{Version: d.pkg}}
}

func (d *Dir) writeState(s State) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(d.bin, stateFile), append(b, '\n'), 0o640)
}

// writeAtomic writes b to path through a synced temporary file and a
// rename, then syncs the directory.
func writeAtomic(path string, b []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
