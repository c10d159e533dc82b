package engine

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/questbox/questbox/engine/records"
	"github.com/questbox/questbox/engine/store"
)

// A store of schema 3 (quest records in JSON) migrates to the binary form
// at the next writing open, and reads as it is in a read-only open.
func TestQuestRecordsMigrate(t *testing.T) {
	h := newHarness(t, Options{})
	q := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal; s.Checkpoints = []string{RoleScout} })
	want := h.questNow(q.ID)
	want.Rev = 0 // a record of schema 3 has no revision (and JSON keeps none)
	// Back to schema 3: the quest as JSON.
	err := h.store.db.Update(func(tx *store.Tx) error {
		raw, err := json.Marshal(want)
		if err != nil {
			return err
		}
		if err := tx.Quests().Put([]byte(q.ID), raw); err != nil {
			return err
		}
		return tx.Meta().Put(kSchema, u64(3))
	})
	if err != nil {
		t.Fatal(err)
	}
	h.close()

	ro, err := OpenStore(h.dir, StoreOptions{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open of schema 3: %v", err)
	}
	e, err := New(ro, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := e.Quest(q.ID); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("schema 3 read as it is: %v\n%#v\nwant\n%#v", err, got, want)
	}
	ro.Close()

	h.open()
	var raw []byte
	_ = h.store.view(func(tx *store.Tx) error { raw = append(raw, tx.Quests().Get([]byte(q.ID))...); return nil })
	if len(raw) == 0 || raw[0] != records.QuestRecordV2 {
		t.Errorf("after the upgrade the quest record starts with %q, want the binary form", raw[:1])
	}
	if got := h.questNow(q.ID); !reflect.DeepEqual(got, want) {
		t.Errorf("after the upgrade:\n%#v\nwant\n%#v", got, want)
	}
}
