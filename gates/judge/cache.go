package judge

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
)

// Fingerprint identifies a judge: provider, model and prompt template hash.
// Changing any of them changes every cache key: a different judge has not
// judged anything yet.
type Fingerprint struct {
	Provider string `json:"provider"`
	Model    string `json:"model"`
	Template string `json:"template"` // Template.Hash()
}

// String returns "provider/model@template[:12]".
func (f Fingerprint) String() string {
	t := f.Template
	if len(t) > 12 {
		t = t[:12]
	}
	return f.Provider + "/" + f.Model + "@" + t
}

// Hash returns the hex SHA-256 of text: the evidence hash of a cache key.
func Hash(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// CacheKey is the key of a judgement: claim hash, evidence hash and judge
// fingerprint, each length-prefixed so that no two tuples share a key.
func CacheKey(claimHash, evidenceHash string, fp Fingerprint) string {
	h := sha256.New()
	for _, s := range []string{claimHash, evidenceHash, fp.Provider, fp.Model, fp.Template} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ErrUndecided is returned by a Cache asked to store an undecided result.
var ErrUndecided = errors.New("judge: undecided results are never cached")

// Cache stores decided judgements by [CacheKey]. It holds verdicts only:
// there is no timestamp and no "touch", so recomputing a hash (or reading an
// entry) never makes a judgement fresher; only a new judgement, stored with
// Put under its own key, does. Implementations must be safe for concurrent
// use and must refuse undecided results ([ErrUndecided]). The engine keeps
// one in bbolt; the tests keep one in memory.
type Cache interface {
	Get(key string) (Result, bool, error)
	Put(key string, r Result) error
}
