package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
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
// Parse reports every problem of the file at once, in file order: unknown
// keys (file:line, the full dotted key and a suggestion), values of the
// wrong type or format (file:line:col), and every problem [Config.Validate]
// finds in the rest of the file, including the required keys an optional
// table leaves out, each with the line of its key, or of the table the key
// belongs in. A key with a problem of its own is validated no further.
// Only a TOML syntax error (file:line:col) stops it early: without a
// tree there is nothing more to check.
func Parse(data []byte, name string) (*Config, error) {
	f := &file{name: name, data: data}
	if _, err := toml.Decode(string(data), &f.tree); err != nil {
		return nil, syntaxError(name, data, err)
	}
	secrets := fileSecrets(f.tree)
	cfg := Default()
	cfg.Path = name
	md, err := toml.Decode(string(data), cfg)
	f.md = md
	errs, bad := f.check(err)
	if err != nil {
		// The decoder stopped at a bad value: the rest of the file is
		// decoded again without the values it refused (when it said
		// which; else nothing it decoded is trusted).
		if len(bad) == 0 {
			return nil, errors.Join(redactAll(secrets, errs)...)
		}
		if cfg, err = f.decodeWithout(bad); err != nil {
			return nil, errors.Join(redactAll(secrets, errs)...)
		}
	}

	for pname, p := range cfg.Providers {
		def := defaultProvider()
		if !f.md.IsDefined("providers", pname, "timeout") {
			p.Timeout = def.Timeout
		}
		if !f.md.IsDefined("providers", pname, "output_cap") {
			p.OutputCap = def.OutputCap
		}
		if !f.md.IsDefined("providers", pname, "env") {
			if pre, ok := presetOf(p.Type); ok {
				p.Env = pre.env
			} else if p.Type == TypeCommand {
				p.Env = defaultEnv()
			}
		}
		cfg.Providers[pname] = p
	}

	verrs := f.place(cfg.validate(f.isSet))
	if len(errs) == 0 {
		if len(verrs) > 0 {
			return nil, errors.Join(redactAll(secrets, verrs)...)
		}
		return cfg, nil
	}
	// Both kinds: the rest join them in file order.
	for _, err := range verrs {
		if !said(err, bad) {
			errs = append(errs, err)
		}
	}
	slices.SortStableFunc(errs, func(a, b error) int {
		la, lb := lineOf(a), lineOf(b)
		if (la == 0) != (lb == 0) {
			return cmp.Compare(lb, la) // the ones without a line last
		}
		return cmp.Compare(la, lb)
	})
	return nil, errors.Join(redactAll(secrets, errs)...)
}

// said reports whether the validation error err only repeats a problem
// of bad: it is about a key that has a problem of its own (a value removed
// for its type reads as missing), about the table holding a value of the
// wrong type (a rule without its params), or says that the key an unknown
// key's suggestion names is missing.
func said(err error, bad []problem) bool {
	var e *Error
	if !errors.As(err, &e) || e.Key == "" {
		return false
	}
	p, ok := parseKey(e.Key)
	if !ok {
		return false
	}
	for _, b := range bad {
		switch {
		case p.within(b.at):
			return true
		case !b.unknown && b.at.within(p):
			return true
		case b.unknown && e.Msg == e.Key+": missing" || b.unknown && strings.HasPrefix(e.Msg, e.Key+": missing;"):
			if b.suggest == e.Key || knownKeys().suggest(b.at) == e.Key {
				return true
			}
		}
	}
	return false
}

// lineOf is the line an error of Parse points at; 0 when none.
func lineOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Line
	}
	return 0
}

// decodeWithout decodes the file over the defaults without the values at
// bad (unknown keys, values of the wrong type), and makes what it decoded
// the file's tree and metadata for the validation that follows. An
// element of an array of tables becomes an empty table, so that the
// elements after it keep their index.
func (f *file) decodeWithout(bad []problem) (*Config, error) {
	tree := copyTree(f.tree)
	for _, b := range bad {
		prune(tree, b.at)
	}
	text, err := toml.Marshal(tree)
	if err != nil {
		return nil, err
	}
	cfg := Default()
	cfg.Path = f.name
	md, err := toml.Decode(string(text), cfg)
	if err != nil {
		return nil, err
	}
	f.tree, f.md = tree, md
	return cfg, nil
}

// copyTree is a deep copy of the tables of a generic decode.
func copyTree(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		switch v := v.(type) {
		case map[string]any:
			out[k] = copyTree(v)
		case []map[string]any:
			ts := make([]map[string]any, len(v))
			for i, t := range v {
				ts[i] = copyTree(t)
			}
			out[k] = ts
		default:
			if ts, ok := tables(v); ok {
				cp := make([]map[string]any, len(ts))
				for i, t := range ts {
					cp[i] = copyTree(t)
				}
				out[k] = cp
				continue
			}
			out[k] = v
		}
	}
	return out
}

// prune removes the value at p from tree.
func prune(tree map[string]any, p path) {
	m := tree
	for i, s := range p {
		last := i == len(p)-1
		v, ok := m[s.name]
		if !ok {
			return
		}
		if s.elem < 0 {
			if last {
				delete(m, s.name)
				return
			}
			if m, ok = v.(map[string]any); !ok {
				return
			}
			continue
		}
		ts, ok := v.([]map[string]any)
		if !ok || s.elem >= len(ts) {
			return
		}
		if last {
			ts[s.elem] = map[string]any{}
			return
		}
		m = ts[s.elem]
	}
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
