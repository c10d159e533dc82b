package records

import (
	"math"
	"strconv"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/store"
	"github.com/questbox/questbox/gates"
)

// Hand-written encoders for the records a dispatch writes most — its run
// and its events — producing exactly the bytes json.Marshal produces for
// them (jsonfast_test.go pins byte equality on random records), without
// reflection and with one allocation (the JSON writers are store's,
// engine/store/jsonwrite.go). Readers are unchanged: they decode with encoding/json.
// TestEveryRunAndEventFieldIsWritten fails until a new field of Run or
// Event is written here too.

// AppendRun appends the JSON of r.
func AppendRun(b []byte, r *domain.Run) []byte {
	b = append(b, `{"id":`...)
	b = store.AppendJSONString(b, r.ID)
	b = store.AppendOptString(b, `,"name":`, r.Name)
	b = append(b, `,"quest":`...)
	b = store.AppendJSONString(b, r.Quest)
	b = append(b, `,"node":`...)
	b = store.AppendJSONString(b, r.Node)
	b = store.AppendOptString(b, `,"role":`, r.Role)
	b = append(b, `,"provider":`...)
	b = store.AppendJSONString(b, r.Provider)
	b = append(b, `,"attempt":`...)
	b = strconv.AppendInt(b, int64(r.Attempt), 10)
	b = append(b, `,"started":`...)
	b = store.AppendJSONTime(b, r.Started)
	if !r.Ended.IsZero() {
		b = append(b, `,"ended":`...)
		b = store.AppendJSONTime(b, r.Ended)
	}
	b = store.AppendOptString(b, `,"outcome":`, r.Outcome)
	b = store.AppendOptString(b, `,"exit":`, r.Exit)
	b = appendOptInt(b, `,"exit_code":`, int64(r.ExitCode))
	b = appendOptInt(b, `,"tokens":`, int64(r.Tokens))
	b = appendOptInt(b, `,"reserved":`, int64(r.Reserved))
	if r.CostUSD != 0 {
		b = appendJSONFloat(append(b, `,"cost_usd":`...), r.CostUSD)
	}
	b = appendOptInt(b, `,"bytes_in":`, r.BytesIn)
	b = appendOptInt(b, `,"bytes_out":`, r.BytesOut)
	b = store.AppendOptString(b, `,"error":`, r.Error)
	if r.Redacted {
		b = append(b, `,"redacted":true`...)
	}
	return append(b, '}')
}

// appendJSONFloat appends f as encoding/json writes a float64: the
// shortest decimal, in exponent form below 1e-6 and from 1e21, with the
// exponent's leading zero dropped.
func appendJSONFloat(b []byte, f float64) []byte {
	abs, format := math.Abs(f), byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-07 -> e-7, as encoding/json does.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendOptInt appends key and v unless v is 0 (omitempty).
func appendOptInt(b []byte, key string, v int64) []byte {
	if v == 0 {
		return b
	}
	return strconv.AppendInt(append(b, key...), v, 10)
}

// AppendEvent appends the JSON of ev; an error is a fact whose level does
// not encode, as json.Marshal would refuse it.
func AppendEvent(b []byte, ev *domain.Event) ([]byte, error) {
	b = append(b, `{"seq":`...)
	b = strconv.AppendUint(b, ev.Seq, 10)
	b = append(b, `,"time":`...)
	b = store.AppendJSONTime(b, ev.Time)
	b = append(b, `,"kind":`...)
	b = store.AppendJSONString(b, ev.Kind)
	b = store.AppendOptString(b, `,"quest":`, ev.Quest)
	b = store.AppendOptString(b, `,"node":`, ev.Node)
	b = store.AppendOptString(b, `,"role":`, ev.Role)
	b = store.AppendOptString(b, `,"team":`, ev.Team)
	b = store.AppendOptString(b, `,"stage":`, ev.Stage)
	b = store.AppendOptString(b, `,"phase":`, ev.Phase)
	b = store.AppendOptString(b, `,"from":`, ev.From)
	b = store.AppendOptString(b, `,"to":`, ev.To)
	b = store.AppendOptString(b, `,"outcome":`, ev.Outcome)
	if len(ev.Facts) > 0 {
		b = append(b, `,"facts":`...)
		var err error
		if b, err = AppendFacts(b, ev.Facts); err != nil {
			return nil, err
		}
	}
	b = store.AppendOptString(b, `,"feedback":`, ev.Feedback)
	b = store.AppendOptString(b, `,"root_cause":`, ev.RootCause)
	b = store.AppendOptString(b, `,"claim_hash":`, ev.ClaimHash)
	b = store.AppendOptString(b, `,"reason":`, ev.Reason)
	if c := ev.Counters; c != nil {
		b = append(b, `,"counters":{"agent_runs":`...)
		b = strconv.AppendInt(b, int64(c.AgentRuns), 10)
		b = append(b, `,"tokens":`...)
		b = strconv.AppendInt(b, int64(c.Tokens), 10)
		b = append(b, `,"wall_used":`...)
		b = strconv.AppendInt(b, int64(c.WallUsed), 10)
		b = append(b, '}')
	}
	b = store.AppendOptString(b, `,"detail":`, ev.Detail)
	if d := ev.Device; d != nil {
		b = PutDevice(append(b, `,"device":`...), d)
	}
	return append(b, '}'), nil
}

func AppendFacts(b []byte, facts []gates.Fact) ([]byte, error) {
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
		b = store.AppendJSONString(b, f.Rule)
		b = append(b, `,"level":`...)
		b = store.AppendJSONString(b, string(lvl))
		b = append(b, `,"where":`...)
		b = store.AppendJSONString(b, f.Where)
		b = append(b, `,"expected":`...)
		b = store.AppendJSONString(b, f.Expected)
		b = append(b, `,"actual":`...)
		b = store.AppendJSONString(b, f.Actual)
		b = append(b, '}')
	}
	return append(b, ']'), nil
}
