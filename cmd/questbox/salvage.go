package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/questbox/questbox/engine"
)

// salvageCmd is `salvage --data DIR`: copy every readable bucket and key of
// a corrupt store into a fresh questbox.db, move the corrupt file aside as
// questbox.db.corrupt-<UTC time>, and say what was lost. It works on bbolt
// directly, reading each bucket under recover() (with faults turned into
// panics) so one bad page loses only what lies behind it.
type salvageCmd struct{}

func (c *salvageCmd) flags(*flag.FlagSet) {}

// salvageReport says what salvage copied and what it could not read.
type salvageReport struct {
	Store   string   `json:"store"`
	Moved   string   `json:"corrupt_file"`
	Buckets int      `json:"buckets"`
	Keys    int      `json:"keys"`
	Lost    []string `json:"lost"`
	Verify  string   `json:"verify"`
}

func (c *salvageCmd) run(ctx context.Context, e *env, args []string) error {
	if err := wantArgs("salvage", args); err != nil {
		return err
	}
	path := filepath.Join(e.data, engine.StoreFile)
	if _, err := os.Stat(path); err != nil {
		return usagef("salvage: %v", err)
	}
	st, err := openChecked(e.data)
	if err == nil {
		st.Close()
		fmt.Fprintf(e.stdout, "store %s is not corrupt: nothing to salvage (`questbox verify` also checks the verdict ledger)\n", path)
		return nil
	}
	if !errors.Is(err, engine.ErrCorrupt) {
		return err // in use, newer schema, permissions: salvage would not help
	}
	fmt.Fprintf(e.stderr, "salvaging %s: %v\n", path, err)

	rep := salvageReport{Store: path, Lost: []string{}}
	tmp := path + ".salvage"
	if err := os.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := copyReadable(path, tmp, &rep); err != nil {
		os.Remove(tmp)
		return err
	}
	rep.Moved = fmt.Sprintf("%s.corrupt-%s", path, time.Now().UTC().Format("20060102T150405Z"))
	if err := os.Rename(path, rep.Moved); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("salvage: move the corrupt store aside: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("salvage: install the salvaged store (the corrupt one is %s, the copy %s): %w", rep.Moved, tmp, err)
	}
	if d, err := os.Open(e.data); err == nil {
		d.Sync()
		d.Close()
	}

	// Open the result as the daemon would: integrity check, migrations
	// (which recreate buckets that were lost), then the ledger.
	st, err = openChecked(e.data)
	if err != nil {
		return fmt.Errorf("salvage: the salvaged store does not open: %w", err)
	}
	eng, err := engine.New(st, engine.Options{Log: e.log})
	if err == nil {
		_, err = eng.Verify()
	}
	st.Close()
	rep.Verify = "ok"
	if err != nil {
		rep.Verify = err.Error()
	}
	if e.json {
		return printJSON(e.stdout, rep)
	}
	w := e.stdout
	fmt.Fprintf(w, "salvaged %d buckets, %d keys into %s\n", rep.Buckets, rep.Keys, path)
	fmt.Fprintf(w, "the corrupt store is kept as %s\n", rep.Moved)
	if len(rep.Lost) == 0 {
		fmt.Fprintln(w, "lost: nothing that could be found")
	} else {
		fmt.Fprintln(w, "lost:")
		for _, l := range rep.Lost {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	if rep.Verify == "ok" {
		fmt.Fprintln(w, "verify: ok")
	} else {
		fmt.Fprintf(w, "verify: %s\n(the salvaged store opens, but records were lost; what the ledger covered can no longer be proven)\n", rep.Verify)
	}
	return nil
}

// copyReadable copies every readable bucket of the bbolt file at from into
// a new file at to.
func copyReadable(from, to string, rep *salvageReport) error {
	src, err := openReadOnly(from)
	if errors.Is(err, berrors.ErrTimeout) {
		return fmt.Errorf("salvage: questbox store %s is in use by another process: %w", filepath.Dir(from), engine.ErrInUse)
	}
	dst, derr := bolt.Open(to, 0o600, &bolt.Options{Timeout: 3 * time.Second})
	if derr != nil {
		if src != nil {
			src.Close()
		}
		return fmt.Errorf("salvage: create %s: %w", to, derr)
	}
	defer dst.Close()
	if err != nil {
		rep.Lost = append(rep.Lost, fmt.Sprintf("everything: the file does not open (%v)", err))
		return dst.Sync()
	}
	defer src.Close()

	var names [][]byte
	salvaged(func() {
		src.View(func(tx *bolt.Tx) error {
			c := tx.Cursor()
			for k, _ := c.First(); k != nil; k, _ = c.Next() {
				names = append(names, append([]byte(nil), k...))
			}
			return nil
		})
	}, func(p any) {
		rep.Lost = append(rep.Lost, fmt.Sprintf("top-level buckets after %d: the root page is unreadable (%v)", len(names), p))
	})
	for _, name := range names {
		err := dst.Update(func(dtx *bolt.Tx) error {
			db, err := dtx.CreateBucketIfNotExists(name)
			if err != nil {
				return err
			}
			return src.View(func(stx *bolt.Tx) error {
				var sb *bolt.Bucket
				salvaged(func() { sb = stx.Bucket(name) }, func(p any) {
					rep.Lost = append(rep.Lost, fmt.Sprintf("bucket %s: unreadable (%v)", name, p))
				})
				if sb != nil {
					return copyBucket(sb, db, string(name), rep)
				}
				return nil
			})
		})
		if err != nil {
			return fmt.Errorf("salvage: write bucket %s: %w", name, err)
		}
	}
	if err := dropSchema(dst); err != nil {
		return err
	}
	return dst.Sync()
}

// dropSchema removes the schema version from the salvaged store so that
// engine.OpenStore runs its migrations again, which recreate (empty) any
// bucket that was lost. That is safe while every migration is idempotent,
// which holds for schema v1 (create buckets if missing); for a later schema
// the engine should recreate missing buckets itself.
func dropSchema(db *bolt.DB) error {
	if engine.SchemaVersion != 1 {
		return nil
	}
	return db.Update(func(tx *bolt.Tx) error {
		if m := tx.Bucket([]byte("meta")); m != nil {
			return m.Delete([]byte("schema"))
		}
		return nil
	})
}

// salvaged runs fn, turning a panic (or a memory fault on a bad page) into
// a call of lost.
func salvaged(fn func(), lost func(p any)) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			lost(p)
		}
	}()
	fn()
}

// copyBucket copies src into dst, nested buckets included; a panic while
// reading loses the rest of that bucket only.
func copyBucket(src, dst *bolt.Bucket, name string, rep *salvageReport) error {
	var werr error
	n := 0
	salvaged(func() {
		if err := dst.SetSequence(src.Sequence()); err != nil {
			werr = err
			return
		}
		c := src.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if v == nil {
				var sb *bolt.Bucket
				salvaged(func() { sb = src.Bucket(k) }, func(p any) {
					rep.Lost = append(rep.Lost, fmt.Sprintf("bucket %s/%s: unreadable (%v)", name, k, p))
				})
				if sb == nil {
					continue
				}
				db, err := dst.CreateBucketIfNotExists(k)
				if err != nil {
					werr = err
					return
				}
				if err := copyBucket(sb, db, name+"/"+string(k), rep); err != nil {
					werr = err
					return
				}
				continue
			}
			if err := dst.Put(append([]byte(nil), k...), append([]byte(nil), v...)); err != nil {
				werr = err
				return
			}
			n++
		}
	}, func(p any) {
		rep.Lost = append(rep.Lost, fmt.Sprintf("bucket %s: the rest after %d keys is unreadable (%v)", name, n, p))
	})
	rep.Keys += n
	rep.Buckets++
	return werr
}
