package judgecache

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/questbox/questbox/engine/store"
	"github.com/questbox/questbox/gates/judge"
)

// Cache is the store's L2 judge cache: decided verdicts keyed by claim
// hash, evidence hash and judge fingerprint. It holds verdicts only, with
// no timestamps: nothing but a new judgement, stored under its own key,
// ever makes an entry "fresher". Undecided results are refused. It is
// safe for concurrent use.
type Cache struct {
	s Store
	// held is what Put queued and has not committed yet.
	held pending
}

var _ judge.Cache = (*Cache)(nil)

// Store is what the cache asks of the engine's store: a read
// transaction, a write queued in the group commit whose outcome then
// reports, and whether the store is open read-only (with the error a
// write then is).
type Store interface {
	View(fn func(tx *store.Tx) error) error
	BatchAsync(fn func(tx *store.Tx) error, then func(error))
	ReadOnly() bool
	ReadOnlyWrite() error
}

// New returns the judge cache of the store s.
func New(s Store) *Cache { return &Cache{s: s} }

// Held is the number of judgements queued and not committed yet.
func (c *Cache) Held() int {
	c.held.mu.Lock()
	defer c.held.mu.Unlock()
	return len(c.held.m)
}

// pending holds the judgements Put queued and whose commit has not
// yet returned, so that a Get meanwhile finds them (a miss would cost a
// model call): each leaves once its commit is decided, whatever it was.
type pending struct {
	mu sync.Mutex
	m  map[string]judge.Result
}

func (c *Cache) Get(key string) (judge.Result, bool, error) {
	p := &c.held
	p.mu.Lock()
	r, ok := p.m[key]
	p.mu.Unlock()
	if ok {
		return r, true, nil
	}
	found := false
	err := c.s.View(func(tx *store.Tx) error {
		raw := tx.Judge().Get([]byte(key))
		if raw == nil {
			return nil
		}
		found = true
		return json.Unmarshal(raw, &r)
	})
	if err != nil {
		return judge.Result{}, false, fmt.Errorf("judge cache: %w", err)
	}
	return r, found, nil
}

// Put queues the judgement in the group commit (engine/commit) as data and
// returns without waiting for its commit: a judgement is asked for while
// a run's answer is judged, just before its result is queued, so the two
// share a commit, instead of the judgement costing a commit (two
// fdatasyncs) of its own for every claim judged. Until that commit, Get
// finds it in memory. A judgement whose commit fails, or that a crash
// loses, costs a model call when the claim is judged again: the cache
// holds nothing that must survive (judge.Judge ignores Put's error).
func (c *Cache) Put(key string, r judge.Result) error {
	if !r.Decided {
		return judge.ErrUndecided
	}
	if c.s.ReadOnly() {
		return c.s.ReadOnlyWrite()
	}
	raw, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("judge cache: %w", err)
	}
	p := &c.held
	p.mu.Lock()
	if p.m == nil {
		p.m = map[string]judge.Result{}
	}
	p.m[key] = r
	p.mu.Unlock()
	c.s.BatchAsync(func(tx *store.Tx) error { return tx.Judge().Put([]byte(key), raw) }, func(error) {
		p.mu.Lock()
		if p.m[key] == r { // not replaced by a later Put of the key
			delete(p.m, key)
		}
		p.mu.Unlock()
	})
	return nil
}
