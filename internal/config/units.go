package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Duration is a time.Duration written in TOML as a Go duration string: "90s",
// "5m", "24h", "1h30m", "50ms". Its zero value is 0.
type Duration struct{ time.Duration }

// durationHint ends every duration error, so the user sees the accepted form.
const durationHint = "(use 90s, 5m, 24h)"

// UnmarshalText parses a Go duration string. The error quotes the value.
func (d *Duration) UnmarshalText(text []byte) error {
	v, err := time.ParseDuration(strings.TrimSpace(string(text)))
	if err != nil {
		return fmt.Errorf("%q is not a duration %s", text, durationHint)
	}
	d.Duration = v
	return nil
}

// UnmarshalTOML takes a duration string. Any other TOML value is refused
// with a message that says how to write it ("write it as a string, e.g.
// "30s"" for the integer 30); the toml decoder prefers this method to
// UnmarshalText, which would see 30 only as the text "30".
func (d *Duration) UnmarshalTOML(v any) error {
	switch v := v.(type) {
	case string:
		return d.UnmarshalText([]byte(v))
	case int64:
		return fmt.Errorf("%d is not a duration %s; write it as a string, e.g. \"%ds\"", v, durationHint, v)
	}
	return fmt.Errorf("%s is not a duration %s", literal(v), durationHint)
}

// MarshalText writes the shortest exact form of d: "60s" is "1m", "86400s" is
// "24h", "1m30s" stays "1m30s". It round-trips through UnmarshalText.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// String is the same compact form as MarshalText.
func (d Duration) String() string {
	v := d.Duration
	switch {
	case v == 0:
		return "0s"
	case v%time.Hour == 0:
		return strconv.FormatInt(int64(v/time.Hour), 10) + "h"
	case v%time.Minute == 0:
		return strconv.FormatInt(int64(v/time.Minute), 10) + "m"
	case v%time.Second == 0 && v.Abs() < time.Minute:
		return strconv.FormatInt(int64(v/time.Second), 10) + "s"
	case v%time.Millisecond == 0 && v.Abs() < time.Second:
		return strconv.FormatInt(int64(v/time.Millisecond), 10) + "ms"
	}
	return v.String()
}

// Size is a number of bytes, written in TOML as an integer (bytes) or a string
// with a unit: "512KiB", "1MiB", "2GiB" (powers of 1024), "50kB", "50MB",
// "1GB" (powers of 1000), "100B" or "100". Units are case-insensitive and may
// be separated from the number by a space. Sizes are never negative.
type Size int64

// Byte multiples understood by Size.
const (
	KiB Size = 1 << 10
	MiB Size = 1 << 20
	GiB Size = 1 << 30
	KB  Size = 1000
	MB  Size = 1000 * KB
	GB  Size = 1000 * MB
)

// sizeUnits is ordered for String: the first unit that divides wins.
var sizeUnits = []struct {
	name string
	mult Size
}{
	{"GiB", GiB}, {"MiB", MiB}, {"KiB", KiB},
	{"GB", GB}, {"MB", MB}, {"kB", KB},
}

// sizeHint ends every size error.
const sizeHint = "(use 1MiB, 512KiB, 50MB or a number of bytes)"

// UnmarshalText parses a size. The error quotes the value.
func (s *Size) UnmarshalText(text []byte) error {
	v, ok := parseSize(string(text))
	if !ok {
		return fmt.Errorf("%q is not a size %s", text, sizeHint)
	}
	*s = v
	return nil
}

func parseSize(text string) (Size, bool) {
	t := strings.TrimSpace(text)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, false
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return 0, false
	}
	unit := strings.TrimSpace(t[i:])
	mult := Size(1)
	switch {
	case unit == "" || strings.EqualFold(unit, "B"):
	default:
		found := false
		for _, u := range sizeUnits {
			if strings.EqualFold(unit, u.name) {
				mult, found = u.mult, true
				break
			}
		}
		if !found {
			return 0, false
		}
	}
	if n > math.MaxInt64/int64(mult) {
		return 0, false
	}
	return Size(n) * mult, true
}

// UnmarshalTOML takes a string (see UnmarshalText) or a number of bytes.
func (s *Size) UnmarshalTOML(v any) error {
	switch v := v.(type) {
	case string:
		return s.UnmarshalText([]byte(v))
	case int64:
		if v < 0 {
			return fmt.Errorf("%d is negative", v)
		}
		*s = Size(v)
		return nil
	}
	return fmt.Errorf("%s is not a size %s", literal(v), sizeHint)
}

// MarshalText writes s with the largest unit that divides it exactly
// ("1MiB", "50MB"), else as bytes ("1000001"). It round-trips.
func (s Size) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// String is the same form as MarshalText.
func (s Size) String() string {
	if s > 0 {
		for _, u := range sizeUnits {
			if s%u.mult == 0 {
				return strconv.FormatInt(int64(s/u.mult), 10) + u.name
			}
		}
	}
	return strconv.FormatInt(int64(s), 10)
}

// MemoryLimit is the Go runtime's soft memory limit for the daemon
// (daemon.memory_limit): a size as [Size] writes it ("24MiB"), or "off"
// for none, which is 0. The integer 0 is also off.
type MemoryLimit Size

// memoryLimitHint ends every memory limit error.
const memoryLimitHint = `(use 24MiB, 64MiB, or "off" for none)`

// MemoryLimitOff is the value of "off": the runtime has no soft limit.
const MemoryLimitOff MemoryLimit = 0

// UnmarshalText parses "off" or a size. The error quotes the value.
func (m *MemoryLimit) UnmarshalText(text []byte) error {
	if strings.EqualFold(strings.TrimSpace(string(text)), "off") {
		*m = MemoryLimitOff
		return nil
	}
	v, ok := parseSize(string(text))
	if !ok {
		return fmt.Errorf("%q is not a memory limit %s", text, memoryLimitHint)
	}
	*m = MemoryLimit(v)
	return nil
}

// UnmarshalTOML takes a string (see UnmarshalText) or a number of bytes.
func (m *MemoryLimit) UnmarshalTOML(v any) error {
	switch v := v.(type) {
	case string:
		return m.UnmarshalText([]byte(v))
	case int64:
		if v < 0 {
			return fmt.Errorf("%d is negative %s", v, memoryLimitHint)
		}
		*m = MemoryLimit(v)
		return nil
	}
	return fmt.Errorf("%s is not a memory limit %s", literal(v), memoryLimitHint)
}

// MarshalText writes "off" or the size as [Size] does. It round-trips.
func (m MemoryLimit) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// String is the same form as MarshalText.
func (m MemoryLimit) String() string {
	if m == MemoryLimitOff {
		return "off"
	}
	return Size(m).String()
}
