package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
)

// Load reads the file at path and returns [Default] with the file laid over it,
// validated. A missing or unreadable file is an error too (it wraps both
// [ErrInvalid] and the fs error, so errors.Is(err, fs.ErrNotExist) tells a
// missing file apart); the caller decides whether running on defaults is right.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return Parse(data, path)
}

// Parse is [Load] for data already read; name is used in errors and stored in
// Config.Path. Keys absent from data keep their defaults; a configured
// provider's timeout, output_cap and (command) env get theirs when absent.
//
// Parse reports, all at once and in file order: TOML syntax errors
// (file:line:col), unknown keys (file:line, the full dotted key and a
// suggestion), values of the wrong type or format (file:line:col); then,
// if there were none, every problem [Config.Validate] finds, including the
// required keys an optional table leaves out, each with the line of its
// key, or of the table the key belongs in.
func Parse(data []byte, name string) (*Config, error) {
	f := &file{name: name, data: data}
	if _, err := toml.Decode(string(data), &f.tree); err != nil {
		return nil, syntaxError(name, data, err)
	}
	cfg := Default()
	cfg.Path = name
	md, err := toml.Decode(string(data), cfg)
	f.md = md
	if errs := f.check(err); len(errs) > 0 {
		return nil, errors.Join(redactAll(fileSecrets(f.tree), errs)...)
	}

	for pname, p := range cfg.Providers {
		def := defaultProvider()
		if !md.IsDefined("providers", pname, "timeout") {
			p.Timeout = def.Timeout
		}
		if !md.IsDefined("providers", pname, "output_cap") {
			p.OutputCap = def.OutputCap
		}
		if p.Type == TypeCommand && !md.IsDefined("providers", pname, "env") {
			p.Env = defaultEnv()
		}
		cfg.Providers[pname] = p
	}

	if errs := cfg.validate(f.isSet); len(errs) > 0 {
		return nil, errors.Join(redactAll(fileSecrets(f.tree), f.place(errs))...)
	}
	return cfg, nil
}

// syntaxError turns a TOML parse error into an [*Error] with its position.
func syntaxError(file string, data []byte, err error) error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		msg := pe.Message
		if pe.LastKey != "" {
			msg = pe.LastKey + ": " + msg
		}
		line, col := position(data, pe.Position.Start)
		return &Error{File: file, Line: line, Col: col, Key: pe.LastKey, Msg: msg}
	}
	return &Error{File: file, Msg: err.Error()}
}

// position converts a byte offset into a 1-based line and column (in runes).
// The toml package's own Line/Col can be one line late when the offending
// byte is a newline, so they are recomputed from the offset.
func position(data []byte, off int) (line, col int) {
	off = min(max(off, 0), len(data))
	before := data[:off]
	line = 1 + bytes.Count(before, []byte("\n"))
	col = 1 + utf8.RuneCount(before[bytes.LastIndexByte(before, '\n')+1:])
	return line, col
}
