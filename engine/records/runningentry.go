package records

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/store"
)

// The running entry's compact form (schema 8) is the store's
// (store.AppendRunning, engine/store/running.go); a run's JSON is the form
// of schemas 6 and 7, which every reader takes too (DecodeRunning,
// ScanRunEntry). A run that ends or leaves running moves to the runs
// bucket as its JSON record (leaveRunning, endRun): the runs bucket keeps
// one form, which its readers (runs, logs, export, salvage's probes)
// read.

// ErrRunningEntry is returned when a running entry is neither form, or its
// compact form does not decode.
var ErrRunningEntry = store.ErrRunningEntry

// IsCompactRunning reports whether v is a compact running entry (by its
// first byte; DecodeRunning checks the rest).
func IsCompactRunning(v []byte) bool { return store.IsCompactRunning(v) }

// runningEntry is r as its compact running entry keeps it.
func runningEntry(r *domain.Run) store.RunningEntry {
	return store.RunningEntry{ID: r.ID, Name: r.Name, Quest: r.Quest, Node: r.Node, Role: r.Role, Provider: r.Provider,
		Attempt: r.Attempt, Started: r.Started, Ended: r.Ended, Outcome: r.Outcome, Exit: r.Exit,
		ExitCode: r.ExitCode, Tokens: r.Tokens, BytesIn: r.BytesIn, BytesOut: r.BytesOut, Error: r.Error,
		Redacted: r.Redacted, CostUSD: r.CostUSD, Reserved: r.Reserved}
}

// runOfEntry is the run the compact running entry e keeps.
func runOfEntry(e *store.RunningEntry) domain.Run {
	return domain.Run{ID: e.ID, Name: e.Name, Quest: e.Quest, Node: e.Node, Role: e.Role, Provider: e.Provider,
		Attempt: e.Attempt, Started: e.Started, Ended: e.Ended, Outcome: e.Outcome, Exit: e.Exit,
		ExitCode: e.ExitCode, Tokens: e.Tokens, BytesIn: e.BytesIn, BytesOut: e.BytesOut, Error: e.Error,
		Redacted: e.Redacted, CostUSD: e.CostUSD, Reserved: e.Reserved}
}

// AppendRunning appends the compact running entry of r, kept under the
// running index's key of quest and node.
func AppendRunning(b []byte, quest, node string, r *domain.Run) []byte {
	return AppendRunningSeq(b, quest, node, r, 0)
}

// AppendRunningSeq is AppendRunning for r whose id is runID(seq), or, with
// seq 0, one not known to be of that form: a dispatch knows its run's
// number (newRun), which AppendRunning would parse back from the id.
func AppendRunningSeq(b []byte, quest, node string, r *domain.Run, seq uint64) []byte {
	e := runningEntry(r)
	return store.AppendRunning(b, quest, node, &e, seq)
}

// DecodeRunning decodes the running entry v kept under key k (quest id
// '/' node id) into r, in either form: compact (AppendRunning) or the
// JSON of the run (schemas 6 and 7, AppendRun).
func DecodeRunning(k, v []byte, r *domain.Run) error {
	if !IsCompactRunning(v) {
		*r = domain.Run{}
		if err := json.Unmarshal(v, r); err != nil {
			return fmt.Errorf("%w: %w", ErrRunningEntry, err)
		}
		return nil
	}
	quest, node, _ := store.SplitRunningKey(k)
	return DecodeCompactRunning(v, quest, node, r)
}

// DecodeCompactRunning decodes the compact entry v into r; quest and node
// are those its key names.
func DecodeCompactRunning(v []byte, quest, node string, r *domain.Run) error {
	var e store.RunningEntry
	if err := store.DecodeRunning(v, quest, node, &e); err != nil {
		return err
	}
	*r = runOfEntry(&e)
	return nil
}

// scanCompactRunning reads what RunEntry needs of a compact entry: its
// run's id, role, provider and reservation.
func scanCompactRunning(v []byte) (RunEntry, bool) {
	var e store.RunningEntry
	if err := store.DecodeRunning(v, "", "", &e); err != nil {
		return RunEntry{}, false
	}
	return RunEntry{ID: e.ID, Role: e.Role, Provider: e.Provider, Reserved: e.Reserved}, true
}

// RunEntry is what a running entry says of its run: enough to overlay the
// quest and the node without decoding the whole record.
type RunEntry struct {
	ID, Role, Provider string
	// Reserved is the tokens the run reserved (Run.Reserved).
	Reserved int
}

// seq is the run's sequence number (its id's), 0 if unreadable.
func (r RunEntry) Seq() uint64 { return RunNumber(r.ID) }

// ScanRunEntry reads a running entry's value, in either form: compact
// (AppendRunning) or the JSON of its run (AppendRun, schemas 6 and 7).
func ScanRunEntry(v []byte) (RunEntry, bool) {
	if IsCompactRunning(v) {
		return scanCompactRunning(v)
	}
	var r RunEntry
	ok := store.ScanObject(v, func(key []byte, s *store.Scanner) bool {
		switch string(key) {
		case "id":
			return s.Str(&r.ID)
		case "role":
			return s.Str(&r.Role)
		case "provider":
			return s.Str(&r.Provider)
		case "reserved":
			return s.Int(&r.Reserved)
		}
		return s.Skip()
	})
	return r, ok
}

func RunNumber(id string) uint64 {
	n, _ := strconv.ParseUint(strings.TrimPrefix(id, "r"), 10, 64)
	return n
}

// RunRecord is the runs bucket's record of the run in running entry v
// (under key k): its JSON. A JSON entry is that already and is kept byte
// for byte; a compact one is decoded and written as AppendRun. v is one
// that ScanRunEntry read, so a compact v decodes.
func RunRecord(k, v []byte) []byte {
	if !IsCompactRunning(v) {
		return bytes.Clone(v)
	}
	var r domain.Run
	if err := DecodeRunning(k, v, &r); err != nil {
		panic("BUG: a running entry ScanRunEntry read does not decode: " + err.Error())
	}
	return AppendRun(make([]byte, 0, 256), &r)
}
