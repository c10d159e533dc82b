package engine

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"
)

// exportState is a quest's export cursor. Pending journals a file export
// in progress: the file's size before it and the lock seq it covers up to.
type exportState struct {
	Cursor  uint64         `json:"cursor"`
	Pending *exportPending `json:"pending,omitempty"`
}

type exportPending struct {
	File   string `json:"file"`
	Offset int64  `json:"offset"`
	Upto   uint64 `json:"upto"`
}

// ExportRecord is one line of `questbox export`.
type ExportRecord struct {
	Quest string `json:"quest"`
	*Node
	Edges []Edge `json:"edges,omitempty"`
}

func (e *Engine) exportState(quest string) (exportState, error) {
	var st exportState
	err := e.store.view(func(tx *bolt.Tx) error {
		if tx.Bucket(bQuests).Get([]byte(quest)) == nil {
			return fmt.Errorf("quest %s: %w", quest, ErrNotFound)
		}
		_, err := getJSON(tx.Bucket(bExports), []byte(quest), &st)
		return err
	})
	return st, err
}

func (e *Engine) putExportState(quest string, st exportState) error {
	if err := e.writable(); err != nil {
		return err
	}
	return e.store.update(func(tx *bolt.Tx) error { return putJSON(tx.Bucket(bExports), []byte(quest), st) })
}

// exportBatch returns the terminal nodes locked after cursor, in lock order.
func (e *Engine) exportBatch(quest string, cursor uint64) ([]ExportRecord, uint64, error) {
	var out []ExportRecord
	upto := cursor
	err := e.store.view(func(tx *bolt.Tx) error {
		b := subRO(tx, bLocked, quest)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		for k, v := c.Seek(u64(cursor + 1)); k != nil; k, v = c.Next() {
			n, err := readNode(tx, string(v))
			if err != nil {
				return err
			}
			n.Claim = nil
			out = append(out, ExportRecord{Quest: quest, Node: n})
			upto = seqOf(k)
		}
		return nil
	})
	return out, upto, err
}

func writeJSONL(w io.Writer, recs []ExportRecord) error {
	enc := json.NewEncoder(w)
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}

// Export writes every terminal node of the quest not exported before as
// JSONL to w, then advances the quest's export cursor. If the process dies
// between the write and the cursor, those lines are written again by the
// next export; use ExportFile for exactly-once.
func (e *Engine) Export(quest string, w io.Writer) (int, error) {
	if err := e.writable(); err != nil {
		return 0, err // it moves the cursor: refuse before writing a line
	}
	st, err := e.exportState(quest)
	if err != nil {
		return 0, err
	}
	recs, upto, err := e.exportBatch(quest, st.Cursor)
	if err != nil || len(recs) == 0 {
		return 0, err
	}
	if err := writeJSONL(w, recs); err != nil {
		return 0, fmt.Errorf("export %s: %w", quest, err)
	}
	st.Cursor = upto
	return len(recs), e.putExportState(quest, st)
}

// ExportFile appends the quest's not-yet-exported terminal nodes to path,
// exactly once across runs and crashes: before writing it journals the
// file's size in the store; after fsyncing the lines it advances the
// cursor. An export that died in between is rolled back (the file is
// truncated to the journaled size) and redone by the next call.
func (e *Engine) ExportFile(quest, path string) (int, error) {
	if err := e.writable(); err != nil {
		return 0, err
	}
	st, err := e.exportState(quest)
	if err != nil {
		return 0, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return 0, fmt.Errorf("export %s: %w", quest, err)
	}
	defer f.Close()
	if p := st.Pending; p != nil {
		if p.File != path {
			return 0, fmt.Errorf("export %s: an interrupted export to %s must be finished first (run export --out %s)", quest, p.File, p.File)
		}
		if err := f.Truncate(p.Offset); err != nil {
			return 0, fmt.Errorf("export %s: roll back interrupted export: %w", quest, err)
		}
		st.Pending = nil
	}
	recs, upto, err := e.exportBatch(quest, st.Cursor)
	if err != nil || len(recs) == 0 {
		if err == nil && st.Pending == nil {
			err = e.putExportState(quest, st)
		}
		return 0, err
	}
	off, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return 0, fmt.Errorf("export %s: %w", quest, err)
	}
	st.Pending = &exportPending{File: path, Offset: off, Upto: upto}
	if err := e.putExportState(quest, st); err != nil {
		return 0, err
	}
	if err := writeJSONL(f, recs); err != nil {
		return 0, fmt.Errorf("export %s: write %s: %w", quest, path, err)
	}
	if err := f.Sync(); err != nil {
		return 0, fmt.Errorf("export %s: sync %s: %w", quest, path, err)
	}
	// A file created by this export must survive a power cut too: sync its
	// directory entry before the cursor moves past these lines.
	if err := syncDir(filepath.Dir(path)); err != nil {
		return 0, fmt.Errorf("export %s: sync directory of %s: %w", quest, path, err)
	}
	if e.exportHook != nil {
		e.exportHook()
	}
	st.Cursor, st.Pending = upto, nil
	return len(recs), e.putExportState(quest, st)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
