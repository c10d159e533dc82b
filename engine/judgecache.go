package engine

import (
	"github.com/questbox/questbox/engine/store"
	"github.com/questbox/questbox/gates/judge"
)

// JudgeCache returns the store's L2 judge cache (docs/design.md, "Judge
// discipline"): decided verdicts keyed by claim hash, evidence hash and judge
// fingerprint. It holds verdicts only, with no timestamps: nothing but a new
// judgement, stored under its own key, ever makes an entry "fresher".
// Undecided results are refused.
func (s *Store) JudgeCache() judge.Cache { return s.judged }

// judgeStore is the store as its judge cache uses it (judgecache.Store).
type judgeStore struct{ s *Store }

func (j judgeStore) View(fn func(tx *store.Tx) error) error { return j.s.view(fn) }
func (j judgeStore) ReadOnly() bool                         { return j.s.ReadOnly() }
func (j judgeStore) ReadOnlyWrite() error                   { return j.s.readOnlyWrite() }

// BatchAsync queues fn in the group commit, with no run's ticket.
func (j judgeStore) BatchAsync(fn func(tx *store.Tx) error, then func(error)) {
	j.s.batchAsync(fn, nil, then)
}
