package store

import "encoding/binary"

// The varint fields of the binary records (the quest codec here; the
// engine's outbox groups and running entries): each reader takes its
// field from the front of *b and moves *b past it, or reports false and
// leaves *b as it was.

// Uvarint reads an unsigned varint.
func Uvarint(b *[]byte) (uint64, bool) {
	v, n := binary.Uvarint(*b)
	if n <= 0 {
		return 0, false
	}
	*b = (*b)[n:]
	return v, true
}

// Varint reads a signed (zig-zag) varint.
func Varint(b *[]byte) (int64, bool) {
	v, n := binary.Varint(*b)
	if n <= 0 {
		return 0, false
	}
	*b = (*b)[n:]
	return v, true
}

// Prefixed reads a length-prefixed run of bytes (a uvarint length, then
// that many bytes); the result shares b's array.
func Prefixed(b *[]byte) ([]byte, bool) {
	rest := *b
	n, ok := Uvarint(&rest)
	if !ok || n > uint64(len(rest)) {
		return nil, false
	}
	*b = rest[n:]
	return rest[:n], true
}
