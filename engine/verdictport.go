package engine

import (
	"github.com/questbox/questbox/engine/verdict"
)

// What package verdict's rules ask of the transaction besides the
// exported methods the other concerns share (verdict.Txn).
var _ verdict.Txn = (*txn)(nil)

// MaxTries is how many FAILs a node of role may take in q, by the
// transaction's options.
func (t *txn) MaxTries(q *Quest, role string) int { return maxTriesIn(t.opt, q, role) }

// OwnStallMaps gives q stall maps that it alone holds, to change
// (ownStallMaps).
func (t *txn) OwnStallMaps(q *Quest) { t.ownStallMaps(q) }
