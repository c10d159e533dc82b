package engine

import (
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/questbox/questbox/gates"
)

// Hand-written encoders for the records a dispatch writes most — its run
// and its events — producing exactly the bytes json.Marshal produces for
// them (jsonfast_test.go pins byte equality on random records), without
// reflection and with one allocation. Readers are unchanged: they decode
// with encoding/json.

// appendRun appends the JSON of r.
func appendRun(b []byte, r *Run) []byte {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, r.ID)
	b = appendOptString(b, `,"name":`, r.Name)
	b = append(b, `,"quest":`...)
	b = appendJSONString(b, r.Quest)
	b = append(b, `,"node":`...)
	b = appendJSONString(b, r.Node)
	b = appendOptString(b, `,"role":`, r.Role)
	b = append(b, `,"provider":`...)
	b = appendJSONString(b, r.Provider)
	b = append(b, `,"attempt":`...)
	b = strconv.AppendInt(b, int64(r.Attempt), 10)
	b = append(b, `,"started":`...)
	b = appendJSONTime(b, r.Started)
	if !r.Ended.IsZero() {
		b = append(b, `,"ended":`...)
		b = appendJSONTime(b, r.Ended)
	}
	b = appendOptString(b, `,"outcome":`, r.Outcome)
	b = appendOptString(b, `,"exit":`, r.Exit)
	b = appendOptInt(b, `,"exit_code":`, int64(r.ExitCode))
	b = appendOptInt(b, `,"tokens":`, int64(r.Tokens))
	b = appendOptInt(b, `,"bytes_in":`, r.BytesIn)
	b = appendOptInt(b, `,"bytes_out":`, r.BytesOut)
	b = appendOptString(b, `,"error":`, r.Error)
	if r.Redacted {
		b = append(b, `,"redacted":true`...)
	}
	return append(b, '}')
}

// appendOptInt appends key and v unless v is 0 (omitempty).
func appendOptInt(b []byte, key string, v int64) []byte {
	if v == 0 {
		return b
	}
	return strconv.AppendInt(append(b, key...), v, 10)
}

// appendEvent appends the JSON of ev; an error is a fact whose level does
// not encode, as json.Marshal would refuse it.
func appendEvent(b []byte, ev *Event) ([]byte, error) {
	b = append(b, `{"seq":`...)
	b = strconv.AppendUint(b, ev.Seq, 10)
	b = append(b, `,"time":`...)
	b = appendJSONTime(b, ev.Time)
	b = append(b, `,"kind":`...)
	b = appendJSONString(b, ev.Kind)
	b = appendOptString(b, `,"quest":`, ev.Quest)
	b = appendOptString(b, `,"node":`, ev.Node)
	b = appendOptString(b, `,"role":`, ev.Role)
	b = appendOptString(b, `,"from":`, ev.From)
	b = appendOptString(b, `,"to":`, ev.To)
	b = appendOptString(b, `,"outcome":`, ev.Outcome)
	if len(ev.Facts) > 0 {
		b = append(b, `,"facts":`...)
		var err error
		if b, err = appendFacts(b, ev.Facts); err != nil {
			return nil, err
		}
	}
	b = appendOptString(b, `,"feedback":`, ev.Feedback)
	b = appendOptString(b, `,"root_cause":`, ev.RootCause)
	b = appendOptString(b, `,"claim_hash":`, ev.ClaimHash)
	b = appendOptString(b, `,"reason":`, ev.Reason)
	if c := ev.Counters; c != nil {
		b = append(b, `,"counters":{"agent_runs":`...)
		b = strconv.AppendInt(b, int64(c.AgentRuns), 10)
		b = append(b, `,"tokens":`...)
		b = strconv.AppendInt(b, int64(c.Tokens), 10)
		b = append(b, `,"wall_used":`...)
		b = strconv.AppendInt(b, int64(c.WallUsed), 10)
		b = append(b, '}')
	}
	b = appendOptString(b, `,"detail":`, ev.Detail)
	if d := ev.Device; d != nil {
		b = append(b, `,"device":{"what":`...)
		b = appendJSONString(b, d.What)
		b = appendOptString(b, `,"press":`, d.Press)
		b = appendOptString(b, `,"result":`, d.Result)
		b = appendOptString(b, `,"target":`, d.Target)
		b = appendOptString(b, `,"broker":`, d.Broker)
		b = appendOptString(b, `,"error":`, d.Error)
		if d.Fault {
			b = append(b, `,"fault":true`...)
		}
		b = append(b, '}')
	}
	return append(b, '}'), nil
}

func appendFacts(b []byte, facts []gates.Fact) ([]byte, error) {
	b = append(b, '[')
	for i, f := range facts {
		if i > 0 {
			b = append(b, ',')
		}
		lvl, err := f.Level.MarshalText()
		if err != nil {
			return nil, err
		}
		b = append(b, `{"rule":`...)
		b = appendJSONString(b, f.Rule)
		b = append(b, `,"level":`...)
		b = appendJSONString(b, string(lvl))
		b = append(b, `,"where":`...)
		b = appendJSONString(b, f.Where)
		b = append(b, `,"expected":`...)
		b = appendJSONString(b, f.Expected)
		b = append(b, `,"actual":`...)
		b = appendJSONString(b, f.Actual)
		b = append(b, '}')
	}
	return append(b, ']'), nil
}

// appendOptString appends key and s unless s is empty (omitempty).
func appendOptString(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	b = append(b, key...)
	return appendJSONString(b, s)
}

// appendJSONTime appends t as time.Time's MarshalJSON does (RFC 3339 with
// nanoseconds, quoted). The engine's times are within the years it
// accepts.
func appendJSONTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s quoted as encoding/json quotes it, HTML
// escaping included: '<', '>' and '&' as \u003c, \u003e, \u0026; other
// control characters as \u00XX, but for \b \f \n \r \t; invalid UTF-8
// as \ufffd; U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
