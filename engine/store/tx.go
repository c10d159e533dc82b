package store

import (
	bolt "go.etcd.io/bbolt"
)

// Tx is one transaction of the store, read-only (View) or writable
// (Update): the handle the domain reads and writes its records through.
// It lives as long as its transaction, and so do the handles it gives
// (Bucket, Cursor) and the bytes they return: a value read from a bucket
// is the memory-mapped file itself, valid until the transaction ends and
// only until the transaction writes the same bucket. Copy what must
// outlive it.
//
// Tx, Bucket and Cursor are bbolt's own transaction, bucket and cursor
// under the store's names, not wrappers around them: a conversion costs
// nothing, and every method is a call the compiler inlines, so the
// domain's tuned reads (a cursor kept for a transaction, keys carved from
// a block) cost what they cost on bbolt itself.
type Tx bolt.Tx

// Bucket is a bucket of a transaction (Tx): the records of one kind, or a
// nested per-quest index. A nil *Bucket is a bucket that does not exist.
type Bucket bolt.Bucket

// Cursor walks a bucket in key order; it is valid for its transaction
// only. A cursor stays valid across the transaction's writes when each
// use starts with a Seek (which starts from the bucket's root); a Next
// after a write of its bucket may step past what the write moved.
type Cursor bolt.Cursor

func (t *Tx) bolt() *bolt.Tx { return (*bolt.Tx)(t) }

// txOf is the store's handle of a bbolt transaction.
func txOf(tx *bolt.Tx) *Tx { return (*Tx)(tx) }

// Bucket is the top-level bucket name, nil when it does not exist (a
// store of an older schema lacks the buckets of later ones: AddedIn).
// The domain names its buckets with the accessors below.
func (t *Tx) Bucket(name []byte) *Bucket { return (*Bucket)(t.bolt().Bucket(name)) }

// The top-level buckets (layout.go). Each is nil only in a store of a
// schema older than the bucket (AddedIn).
func (t *Tx) Meta() *Bucket     { return t.Bucket(Meta) }
func (t *Tx) Quests() *Bucket   { return t.Bucket(Quests) }
func (t *Tx) Active() *Bucket   { return t.Bucket(Active) }
func (t *Tx) Nodes() *Bucket    { return t.Bucket(Nodes) }
func (t *Tx) Pending() *Bucket  { return t.Bucket(Pending) }
func (t *Tx) Proposed() *Bucket { return t.Bucket(Proposed) }
func (t *Tx) Deferred() *Bucket { return t.Bucket(Deferred) }
func (t *Tx) QNodes() *Bucket   { return t.Bucket(QNodes) }
func (t *Tx) Hyps() *Bucket     { return t.Bucket(Hyps) }
func (t *Tx) Locked() *Bucket   { return t.Bucket(Locked) }
func (t *Tx) Evidence() *Bucket { return t.Bucket(Evidence) }
func (t *Tx) Edges() *Bucket    { return t.Bucket(Edges) }
func (t *Tx) Runs() *Bucket     { return t.Bucket(Runs) }
func (t *Tx) Running() *Bucket  { return t.Bucket(Running) }
func (t *Tx) Consent() *Bucket  { return t.Bucket(Consent) }
func (t *Tx) Events() *Bucket   { return t.Bucket(Events) }
func (t *Tx) Cursors() *Bucket  { return t.Bucket(Cursors) }
func (t *Tx) Ledger() *Bucket   { return t.Bucket(Ledger) }
func (t *Tx) Exports() *Bucket  { return t.Bucket(Exports) }
func (t *Tx) Judge() *Bucket    { return t.Bucket(Judge) }
func (t *Tx) Attempts() *Bucket { return t.Bucket(Attempts) }

// CreateBucketIfNotExists is the top-level bucket name, created when the
// store lacks it (migrations, repair).
func (t *Tx) CreateBucketIfNotExists(name []byte) (*Bucket, error) {
	b, err := t.bolt().CreateBucketIfNotExists(name)
	return (*Bucket)(b), err
}

// DeleteBucket deletes the top-level bucket name and everything in it.
func (t *Tx) DeleteBucket(name []byte) error { return t.bolt().DeleteBucket(name) }

// ForEach calls fn for each top-level bucket, in name order.
func (t *Tx) ForEach(fn func(name []byte, b *Bucket) error) error {
	return t.bolt().ForEach(func(name []byte, b *bolt.Bucket) error { return fn(name, (*Bucket)(b)) })
}

// ID is the transaction's id: a write transaction's is one past the
// latest committed one's, so ids order the commits of one open store.
func (t *Tx) ID() int { return t.bolt().ID() }

// Writable says whether the transaction may write (Update).
func (t *Tx) Writable() bool { return t.bolt().Writable() }

// Size is the size of the store's file as the transaction sees it.
func (t *Tx) Size() int64 { return t.bolt().Size() }

// OnCommit calls fn once the transaction committed.
func (t *Tx) OnCommit(fn func()) { t.bolt().OnCommit(fn) }

func (b *Bucket) bolt() *bolt.Bucket { return (*bolt.Bucket)(b) }

// Get is key's value, nil when it is missing or a nested bucket. The
// value is the mapped file's memory: valid until the transaction ends or
// writes this bucket.
func (b *Bucket) Get(key []byte) []byte { return b.bolt().Get(key) }

// Put sets key to value. bbolt keeps both slices until the commit: the
// caller must not change them meanwhile.
func (b *Bucket) Put(key, value []byte) error { return b.bolt().Put(key, value) }

// Delete removes key; a missing key is no error.
func (b *Bucket) Delete(key []byte) error { return b.bolt().Delete(key) }

// Cursor is a new cursor over the bucket.
func (b *Bucket) Cursor() *Cursor { return (*Cursor)(b.bolt().Cursor()) }

// Bucket is the nested bucket name, nil when it does not exist.
func (b *Bucket) Bucket(name []byte) *Bucket { return (*Bucket)(b.bolt().Bucket(name)) }

// CreateBucketIfNotExists is the nested bucket name, created when missing.
func (b *Bucket) CreateBucketIfNotExists(name []byte) (*Bucket, error) {
	nb, err := b.bolt().CreateBucketIfNotExists(name)
	return (*Bucket)(nb), err
}

// DeleteBucket deletes the nested bucket name and everything in it.
func (b *Bucket) DeleteBucket(name []byte) error { return b.bolt().DeleteBucket(name) }

// NextSequence increments the bucket's sequence and returns it.
func (b *Bucket) NextSequence() (uint64, error) { return b.bolt().NextSequence() }

// Sequence is the bucket's sequence (NextSequence's latest).
func (b *Bucket) Sequence() uint64 { return b.bolt().Sequence() }

// SetSequence sets the bucket's sequence.
func (b *Bucket) SetSequence(v uint64) error { return b.bolt().SetSequence(v) }

// ForEach calls fn for each key of the bucket in order; v is nil for a
// nested bucket. fn must not write the bucket.
func (b *Bucket) ForEach(fn func(k, v []byte) error) error { return b.bolt().ForEach(fn) }

// ForEachBucket calls fn for each nested bucket's name, in order.
func (b *Bucket) ForEachBucket(fn func(k []byte) error) error { return b.bolt().ForEachBucket(fn) }

// KeyN is the number of keys of the bucket (its statistics: it reads
// every page of it).
func (b *Bucket) KeyN() int { return b.bolt().Stats().KeyN }

// Writable says whether the bucket's transaction may write.
func (b *Bucket) Writable() bool { return b.bolt().Writable() }

// First, Last, Next, Prev and Seek move the cursor and return the key and
// value there, nil at either end; v is nil for a nested bucket.
func (c *Cursor) First() (k, v []byte)           { return (*bolt.Cursor)(c).First() }
func (c *Cursor) Last() (k, v []byte)            { return (*bolt.Cursor)(c).Last() }
func (c *Cursor) Next() (k, v []byte)            { return (*bolt.Cursor)(c).Next() }
func (c *Cursor) Prev() (k, v []byte)            { return (*bolt.Cursor)(c).Prev() }
func (c *Cursor) Seek(seek []byte) (k, v []byte) { return (*bolt.Cursor)(c).Seek(seek) }

// Delete removes the key the cursor is at.
func (c *Cursor) Delete() error { return (*bolt.Cursor)(c).Delete() }

// Bucket is the bucket the cursor walks.
func (c *Cursor) Bucket() *Bucket { return (*Bucket)((*bolt.Cursor)(c).Bucket()) }

// CreateBucket creates the top-level bucket name; it is an error when it
// exists.
func (t *Tx) CreateBucket(name []byte) (*Bucket, error) {
	b, err := t.bolt().CreateBucket(name)
	return (*Bucket)(b), err
}

// Path is the store file t is a transaction of.
func (t *Tx) Path() string { return t.bolt().DB().Path() }

// CreateBucket creates the nested bucket name; it is an error when it
// exists.
func (b *Bucket) CreateBucket(name []byte) (*Bucket, error) {
	nb, err := b.bolt().CreateBucket(name)
	return (*Bucket)(nb), err
}
