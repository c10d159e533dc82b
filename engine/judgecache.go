package engine

import (
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/questbox/questbox/gates/judge"
)

// JudgeCache returns the store's L2 judge cache (SPEC §4.6): decided
// verdicts keyed by claim hash, evidence hash and judge fingerprint. It
// holds verdicts only, with no timestamps: nothing but a new judgement,
// stored under its own key, ever makes an entry "fresher". Undecided
// results are refused.
func (s *Store) JudgeCache() judge.Cache { return judgeCache{s} }

type judgeCache struct{ s *Store }

func (c judgeCache) Get(key string) (judge.Result, bool, error) {
	var r judge.Result
	found := false
	err := c.s.view(func(tx *bolt.Tx) error {
		raw := tx.Bucket(bJudge).Get([]byte(key))
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

func (c judgeCache) Put(key string, r judge.Result) error {
	if !r.Decided {
		return judge.ErrUndecided
	}
	return c.s.update(func(tx *bolt.Tx) error { return putJSON(tx.Bucket(bJudge), []byte(key), r) })
}
