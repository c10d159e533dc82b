package records

import (
	"encoding/json"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/store"
)

// RecordDecodes says whether record v of the record bucket name decodes
// (store.ForInvalid): JSON, quests in their codec, ledger records as
// ledgerDecodes reads them (ledger.Decodes: the ledger's records are the
// ledger's to read, and this layer does not import it), event groups and
// attempt records in their binary forms.
func RecordDecodes(name string, v []byte, ledgerDecodes func(v []byte) bool) bool {
	switch {
	case name == string(store.Quests):
		return DecodeQuest(v, new(domain.Quest)) == nil
	case name == string(store.Ledger):
		return ledgerDecodes(v)
	case name == string(store.Events) && IsGroup(v):
		first, ok := GroupKey(v)
		return ok && CheckGroup(store.U64(first), v) == nil
	case name == string(store.Attempts):
		_, err := DecodeAttemptRecord(v)
		return err == nil
	}
	return json.Valid(v)
}
