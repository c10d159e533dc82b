package engine

import "github.com/questbox/questbox/engine/store"

// SnapshotStore copies the store file src to dst as one read transaction
// (a consistent copy, whatever else reads it), synced and renamed into
// place. It is for a store no daemon has open: `questbox run` takes a
// snapshot before a release on trial may migrate the store (package
// update), and puts it back if that release fails. It waits up to 30s for
// a process that holds the store's lock; it changes nothing in src.
func SnapshotStore(src, dst string) error { return store.CopyFile(src, dst) }
