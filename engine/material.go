package engine

import (
	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
)

// withoutEvidence reports, without decoding the node, that the locked node
// id shows no evidence: most locked nodes of a long quest are dead ends
// with none, passed over so on a store without the evidence index.
func withoutEvidence(tx *store.Tx, id string) bool {
	key, err := records.NodeKey(id)
	if err != nil {
		return false
	}
	role, has, ok := records.ScanEvidence(tx.Nodes().Get(key))
	return ok && (!has || domain.IsMember(role))
}

// shownEvidence reports whether n's evidence is shown in its quest's
// owner's prompt (and its council members'), and so has an entry in the
// evidence index: a locked node with evidence, not a council member's (a
// member's evidence is its vote, merged into its owner's).
func shownEvidence(n *Node) bool {
	return n.Status.Terminal() && n.Evidence != "" && !domain.IsMember(n.Role)
}

// indexEvidence keeps n's entry in the evidence index (schema 7) in step
// with its record, which is being saved: a locked node whose evidence
// the owner's prompt shows is under its lock sequence, as in the locked
// index. Every node write goes through saveNode, which calls it for the
// locked ones; a locked record never changes after its transaction (the
// ledger holds its hash), so this is the entry's only writer but
// migration and salvage, which derive the same from the records.
func (t *txn) indexEvidence(n *Node) error {
	if !n.Status.Terminal() || n.LockSeq == 0 {
		return nil
	}
	key := u64(n.LockSeq)
	has := subRO(t.tx, bEvidence, n.Quest)
	switch {
	case !shownEvidence(n):
		if has != nil && has.Get(key) != nil {
			return has.Delete(key)
		}
		return nil
	case has != nil && string(has.Get(key)) == n.ID:
		return nil // saved again after it locked, in the same transaction
	}
	b, err := sub(t.tx, bEvidence, n.Quest)
	if err != nil {
		return err
	}
	return b.Put(key, []byte(n.ID))
}

// buildEvidenceIndex is the migration to schema 7: it derives the
// evidence index from every quest's locked index and the locked nodes'
// records. A node the locked index names that is missing or does not
// decode is left out: Verify names it (store damage, which salvage
// repairs, rebuilding this index too), and the upgrade does not hide it.
func buildEvidenceIndex(tx *store.Tx) error {
	if _, err := tx.CreateBucketIfNotExists(bEvidence); err != nil {
		return err
	}
	locked := tx.Locked()
	return locked.ForEachBucket(func(q []byte) error {
		return locked.Bucket(q).ForEach(func(_, id []byte) error {
			n, err := records.ReadNodeRecord(tx, string(id))
			if err != nil || !shownEvidence(n) || n.LockSeq == 0 {
				return nil
			}
			b, err := sub(tx, bEvidence, string(q))
			if err != nil {
				return err
			}
			return b.Put(u64(n.LockSeq), id)
		})
	})
}
