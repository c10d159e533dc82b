package engine

import (
	"encoding/json"
	"fmt"

	"github.com/questbox/questbox/engine/store"
)

// The running entry's compact form (schema 8) is the store's
// (store.AppendRunning, engine/store/running.go); a run's JSON is the form
// of schemas 6 and 7, which every reader takes too (decodeRunning,
// scanRunEntry). A run that ends or leaves running moves to the runs
// bucket as its JSON record (leaveRunning, endRun): the runs bucket keeps
// one form, which its readers (runs, logs, export, salvage's probes)
// read.

// errRunningEntry is returned when a running entry is neither form, or its
// compact form does not decode.
var errRunningEntry = store.ErrRunningEntry

// isCompactRunning reports whether v is a compact running entry (by its
// first byte; decodeRunning checks the rest).
func isCompactRunning(v []byte) bool { return store.IsCompactRunning(v) }

// runningEntry is r as its compact running entry keeps it.
func runningEntry(r *Run) store.RunningEntry {
	return store.RunningEntry{ID: r.ID, Name: r.Name, Quest: r.Quest, Node: r.Node, Role: r.Role, Provider: r.Provider,
		Attempt: r.Attempt, Started: r.Started, Ended: r.Ended, Outcome: r.Outcome, Exit: r.Exit,
		ExitCode: r.ExitCode, Tokens: r.Tokens, BytesIn: r.BytesIn, BytesOut: r.BytesOut, Error: r.Error,
		Redacted: r.Redacted, CostUSD: r.CostUSD, Reserved: r.Reserved}
}

// runOfEntry is the run the compact running entry e keeps.
func runOfEntry(e *store.RunningEntry) Run {
	return Run{ID: e.ID, Name: e.Name, Quest: e.Quest, Node: e.Node, Role: e.Role, Provider: e.Provider,
		Attempt: e.Attempt, Started: e.Started, Ended: e.Ended, Outcome: e.Outcome, Exit: e.Exit,
		ExitCode: e.ExitCode, Tokens: e.Tokens, BytesIn: e.BytesIn, BytesOut: e.BytesOut, Error: e.Error,
		Redacted: e.Redacted, CostUSD: e.CostUSD, Reserved: e.Reserved}
}

// appendRunning appends the compact running entry of r, kept under the
// running index's key of quest and node.
func appendRunning(b []byte, quest, node string, r *Run) []byte {
	return appendRunningSeq(b, quest, node, r, 0)
}

// appendRunningSeq is appendRunning for r whose id is runID(seq), or, with
// seq 0, one not known to be of that form: a dispatch knows its run's
// number (newRun), which appendRunning would parse back from the id.
func appendRunningSeq(b []byte, quest, node string, r *Run, seq uint64) []byte {
	e := runningEntry(r)
	return store.AppendRunning(b, quest, node, &e, seq)
}

// decodeRunning decodes the running entry v kept under key k (quest id
// '/' node id) into r, in either form: compact (appendRunning) or the
// JSON of the run (schemas 6 and 7, appendRun).
func decodeRunning(k, v []byte, r *Run) error {
	if !isCompactRunning(v) {
		*r = Run{}
		if err := json.Unmarshal(v, r); err != nil {
			return fmt.Errorf("%w: %w", errRunningEntry, err)
		}
		return nil
	}
	quest, node, _ := store.SplitRunningKey(k)
	return decodeCompactRunning(v, quest, node, r)
}

// decodeCompactRunning decodes the compact entry v into r; quest and node
// are those its key names.
func decodeCompactRunning(v []byte, quest, node string, r *Run) error {
	var e store.RunningEntry
	if err := store.DecodeRunning(v, quest, node, &e); err != nil {
		return err
	}
	*r = runOfEntry(&e)
	return nil
}

// scanCompactRunning reads what runEntry needs of a compact entry: its
// run's id, role, provider and reservation.
func scanCompactRunning(v []byte) (runEntry, bool) {
	var e store.RunningEntry
	if err := store.DecodeRunning(v, "", "", &e); err != nil {
		return runEntry{}, false
	}
	return runEntry{ID: e.ID, Role: e.Role, Provider: e.Provider, Reserved: e.Reserved}, true
}
