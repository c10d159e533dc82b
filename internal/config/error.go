package config

import (
	"errors"
	"strconv"
	"strings"
)

// Every error value the package returns to its callers is declared here:
// ui/api's error table has a row for each (its test reads this file).
var (
	// ErrInvalid is returned (wrapped) by [Load], [Parse] and
	// [Config.Validate] when the configuration cannot be used: the file is
	// missing or unreadable, is not valid TOML, has unknown keys, or has a
	// value that is wrong. Check it with errors.Is; the wrapped [*Error]
	// values say where and what.
	ErrInvalid = errors.New("invalid config")
	// ErrUnknownGate is returned (wrapped) by [Config.Catalog] for a
	// profile name that is neither built in nor configured, for example the
	// profile of a quest created before its [gates.NAME] table was removed.
	ErrUnknownGate = errors.New("unknown gate profile")
)

// Error is one problem with a configuration. It wraps [ErrInvalid]. [Load],
// [Parse] and [Config.Validate] return all the problems they found joined with
// errors.Join, one per line, in file order (validation: in the order of the
// file's sections); use errors.As to reach the first, or unwrap the join to
// reach them all.
type Error struct {
	File string // file name; "" for a Config not loaded from a file
	// Line is the 1-based line of the problem: of the key, or for a key the
	// file leaves out, of the table it belongs in; 0 when unknown (always,
	// for a Config that was not parsed from a file).
	Line int
	// Col is the 1-based column (in characters): where a syntax error
	// starts, or where toml places a bad value (the value of a "key =
	// value" line, the key inside an inline table). 0 for problems with a
	// key itself (unknown, missing) and for tables.
	Col int
	Key string // full dotted key, e.g. "providers.llm.type" or "gates.g.rules[1].level"; "" when none applies
	Msg string // what is wrong, already naming the key and the value
}

// Error formats the problem as "file:line:col: msg", leaving out what is unknown.
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			b.WriteString(":" + strconv.Itoa(e.Line))
			if e.Col > 0 {
				b.WriteString(":" + strconv.Itoa(e.Col))
			}
		}
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns [ErrInvalid].
func (e *Error) Unwrap() error { return ErrInvalid }
