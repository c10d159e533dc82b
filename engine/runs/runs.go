package runs

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/runlog"
	"github.com/questbox/questbox/engine/store"
)

// Log writes the log of run (an id r<N> or a name quest:Q:N:K) in logs
// to w; with follow, while the run is in flight, until it ends or ctx
// does. A nil logs keeps none.
func Log(ctx context.Context, logs *runlog.Dir, w io.Writer, run string, follow bool) error {
	if logs == nil {
		return fmt.Errorf("run %s: %w", run, domain.ErrNotFound)
	}
	var err error
	if follow {
		err = logs.Follow(ctx, w, run)
	} else {
		err = logs.Copy(w, run)
	}
	if errors.Is(err, runlog.ErrNotFound) {
		return fmt.Errorf("run %s has no log (none was kept, or it was dropped to keep the logs under logs.total): %w", run, domain.ErrNotFound)
	}
	return err
}

// OfQuest returns the runs in tx of quest's nodes (only node's, when it
// is not ""), in the order they started. An empty quest lists every
// quest's.
func OfQuest(tx *store.Tx, quest, node string) ([]domain.Run, error) {
	out, err := collect(tx, quest, node)
	slices.SortStableFunc(out, func(a, b domain.Run) int { return cmp.Compare(records.RunNumber(a.ID), records.RunNumber(b.ID)) })
	Name(out)
	return out, err
}

// collect reads the runs OfQuest returns, in no set order; on an error,
// those read before it.
func collect(tx *store.Tx, quest, node string) (out []domain.Run, err error) {
	var nodes []*domain.Node
	switch {
	case node != "":
		n, err := records.ReadNode(tx, node)
		if err != nil {
			return out, err
		}
		if quest != "" && n.Quest != quest {
			return out, fmt.Errorf("node %s is not in quest %s: %w", node, quest, domain.ErrNotFound)
		}
		nodes = []*domain.Node{n}
	case quest != "":
		if tx.Quests().Get([]byte(quest)) == nil {
			return out, fmt.Errorf("quest %s: %w", quest, domain.ErrNotFound)
		}
	}
	if node == "" {
		// Every run record, in sequence: the runs in flight from the
		// running index, then the runs bucket (it holds runs only).
		running, err := records.RunningRuns(tx, quest)
		if err != nil {
			return out, err
		}
		out = append(out, running...)
		err = tx.Runs().ForEach(func(k, v []byte) error {
			if v == nil {
				return nil
			}
			var r domain.Run
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("decode run %s: %w", k, err)
			}
			if quest == "" || r.Quest == quest {
				out = append(out, r)
			}
			return nil
		})
		return out, err
	}
	for _, n := range nodes {
		for _, id := range n.Runs {
			r, _, err := records.GetRun(tx, id, n.Quest, n.ID)
			if err != nil {
				return out, err
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// Name names runs, which are every run of their nodes in the order
// they started: a node's k-th run is quest:<quest>:<node>:<k>.
func Name(runs []domain.Run) {
	k := map[string]int{}
	for i := range runs {
		k[runs[i].Node]++
		runs[i].Name = domain.RunName(runs[i].Quest, runs[i].Node, k[runs[i].Node])
	}
}

// Find returns the run in tx named by ref: a run id (r12), a run name
// (quest:q1:n3:2), or a node id (its latest run).
func Find(tx *store.Tx, ref string) (domain.Run, error) {
	var r domain.Run
	id := ref
	switch {
	case strings.HasPrefix(ref, "quest:"):
		parts := strings.Split(ref, ":")
		k, err := strconv.Atoi(parts[len(parts)-1])
		if len(parts) != 4 || err != nil || k < 1 {
			return r, fmt.Errorf("run %q: a run name is quest:QUEST:NODE:K: %w", ref, domain.ErrInvalid)
		}
		n, err := records.ReadNode(tx, parts[2])
		if err != nil {
			return r, err
		}
		if n.Quest != parts[1] || k > len(n.Runs) {
			return r, fmt.Errorf("run %s: %w", ref, domain.ErrNotFound)
		}
		id = n.Runs[k-1]
	case strings.HasPrefix(ref, "n"):
		n, err := records.ReadNode(tx, ref)
		if err != nil {
			return r, err
		}
		if len(n.Runs) == 0 {
			return r, fmt.Errorf("node %s has not run yet: %w", ref, domain.ErrNotFound)
		}
		id = n.Runs[len(n.Runs)-1]
	}
	var ok bool
	var err error
	r, ok, err = records.GetRun(tx, id, "", "")
	if err == nil && !ok {
		err = fmt.Errorf("run %s: %w", ref, domain.ErrNotFound)
	}
	if err != nil {
		return r, err
	}
	if n, err := records.ReadNode(tx, r.Node); err == nil {
		if k := slices.Index(n.Runs, r.ID); k >= 0 {
			r.Name = domain.RunName(r.Quest, r.Node, k+1)
		}
	}
	return r, nil
}
