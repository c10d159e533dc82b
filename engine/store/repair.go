package store

import (
	"fmt"
	"slices"
)

// The store's part of the repair after a salvage (the domain's rebuild,
// Records.Rebuild, derives its indexes again on top of it): buckets that
// were lost are created again, records that do not decode or that are
// not where they belong are dropped, and a bucket's sequence is raised
// past its keys. Each says what it did, one line each, for the salvage
// report.

// RecreateBuckets creates every bucket that was lost, empty, and says
// which.
func RecreateBuckets(tx *Tx, out *[]string) error {
	for _, b := range Buckets {
		if tx.Bucket(b) == nil {
			*out = append(*out, fmt.Sprintf("bucket %s was lost: created empty", b))
		}
	}
	return CreateBuckets(tx)
}

// DropKey deletes k from b, a record or, where damage left a nested
// bucket among the records (ForEach gives it a nil value, which does not
// decode), that bucket: bbolt's Delete refuses a bucket with
// ErrIncompatibleValue, which made a whole salvage fail.
func (b *Bucket) DropKey(k []byte) error {
	if b.Bucket(k) != nil {
		return b.DeleteBucket(k)
	}
	return b.Delete(k)
}

// RaiseSequence makes b's sequence at least atLeast: a bucket header lost
// with a damaged page would otherwise hand out ids already taken.
func RaiseSequence(b *Bucket, atLeast uint64, out *[]string) error {
	if b.Sequence() >= atLeast {
		return nil
	}
	*out = append(*out, fmt.Sprintf("a bucket sequence was behind its keys (%d < %d): raised", b.Sequence(), atLeast))
	return b.SetSequence(atLeast)
}

// Decodes says whether record v of the record bucket name (a nested
// bucket's name is its parent's, "/", its own) decodes: the domain's say
// over its records, the store's over its binary forms.
type Decodes func(name string, v []byte) bool

// ForInvalid calls fn with every record of the record buckets
// (RecordBuckets, nested buckets included) that does not decode: a value
// damaged inside a sound page.
func ForInvalid(tx *Tx, decodes Decodes, fn func(b *Bucket, name string, k []byte) error) error {
	var walk func(b *Bucket, name string) error
	walk = func(b *Bucket, name string) error {
		return b.ForEach(func(k, v []byte) error {
			if v == nil {
				if nb := b.Bucket(k); nb != nil {
					return walk(nb, name+"/"+string(k))
				}
				return nil
			}
			if !decodes(name, v) {
				return fn(b, name, k)
			}
			return nil
		})
	}
	for _, name := range RecordBuckets {
		if b := tx.Bucket(name); b != nil {
			if err := walk(b, string(name)); err != nil {
				return err
			}
		}
	}
	return nil
}

// InvalidRecords names every record of the record buckets that does not
// decode.
func InvalidRecords(tx *Tx, decodes Decodes) []string {
	var out []string
	_ = ForInvalid(tx, decodes, func(_ *Bucket, name string, k []byte) error {
		out = append(out, fmt.Sprintf("bucket %s: record %s is damaged (it does not decode)", name, ShowKey(k)))
		return nil
	})
	return out
}

// DropInvalid deletes the records InvalidRecords names: no read of the
// domain can use them, and the damaged file keeps them.
func DropInvalid(tx *Tx, decodes Decodes, out *[]string) error {
	type rec struct {
		b    *Bucket
		name string
		k    []byte
	}
	var bad []rec
	err := ForInvalid(tx, decodes, func(b *Bucket, name string, k []byte) error {
		bad = append(bad, rec{b, name, slices.Clone(k)})
		return nil
	})
	if err != nil {
		return err
	}
	for _, r := range bad {
		if err := r.b.Delete(r.k); err != nil {
			return err
		}
		*out = append(*out, fmt.Sprintf("bucket %s: record %s was damaged (it does not decode): dropped", r.name, ShowKey(r.k)))
	}
	return nil
}

// GroupMisplaced reports whether v, a record of the events bucket under
// key k, is a group whose checksum holds but whose key is not its first
// seq: a copy from elsewhere (a stale page). A group that does not decode
// is not misplaced but invalid (ForInvalid).
func GroupMisplaced(k, v []byte) bool {
	first, ok := GroupKey(v)
	return ok && (len(k) != 8 || first != SeqOf(k))
}
