package engine

import (
	"fmt"

	"github.com/questbox/questbox/engine/ledger"
	"github.com/questbox/questbox/engine/store"
	"github.com/questbox/questbox/engine/verify"
	"github.com/questbox/questbox/gates"
)

// Ledger appends a verdict for n (in its current status) to the chain. A
// terminal n must have been saved in this transaction already (move does):
// the record binds the hash of exactly what is stored.
func (t *txn) Ledger(n *Node, outcome string, facts []gates.Fact) error {
	r := LedgerRecord{Time: t.now, Quest: n.Quest, Node: n.ID,
		Outcome: outcome, Status: n.Status, ClaimHash: n.ClaimHash, Facts: facts}
	if n.Status.Terminal() {
		raw := t.tx.Nodes().Get(u64(n.Order))
		if raw == nil {
			return fmt.Errorf("BUG: locked node %s was not saved before its ledger record", n.ID)
		}
		r.NodeHash = ledger.NodeHash(raw)
	}
	return ledger.Append(t.tx, r)
}

// VerifyReport is what Verify found (verify.Report).
type VerifyReport = verify.Report

// Verify checks the store's pages and the whole verdict ledger against
// the nodes, the indexes and the counts (verify.Check says what and how).
// It is correct while the engine writes.
//
// Errors: ErrCorrupt for page-level damage and for indexes out of step
// with the records; ErrLedgerBroken for ledger problems in a store whose
// indexes agree with its records. The report's Problems lists them all
// either way.
func (e *Engine) Verify() (VerifyReport, error) { return e.store.Verify() }

// Verify is Engine.Verify on the store alone.
func (s *Store) Verify() (VerifyReport, error) { return verify.Check(s.db, s.box, ledgerRules{}) }

// ledgerRules is what the store's check asks of the engine's rules
// (verify.Rules).
type ledgerRules struct{}

var _ verify.Rules = ledgerRules{}

func (ledgerRules) OverlayDispatch(c *store.Cursor, q *Quest) { overlayDispatch(c, q) }
func (ledgerRules) ShownEvidence(n *Node) bool                { return shownEvidence(n) }

// checkLedger checks the ledger and the locked nodes in tx under the rules
// of schema (verify.CheckLedger).
func checkLedger(tx *store.Tx, schema uint64) verify.LedgerCheck {
	return verify.CheckLedger(tx, schema, ledgerRules{})
}

// sealLedger is the migration to schema 2 (verify.SealLedger).
func sealLedger(tx *store.Tx) error { return verify.SealLedger(tx, ledgerRules{}) }
