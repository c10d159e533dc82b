package records

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/engine/store"
)

// Quest records are stored in a compact binary form (schema 4). The tick
// reads every active quest and writes every quest it dispatches for, so
// their encoding is the tick's hottest code: the binary form decodes
// several times faster than JSON and is a third of its size (fewer pages
// for a tick and for the hourly wall-clock save to write). Quest records
// are not bound by the verdict ledger (node records are, byte for byte,
// and stay JSON), so changing their form needs no reseal.
//
// QuestCodec's table is the whole form (store.Codec says how each kind of
// field is written). A new field of Quest is one entry at the end of the
// table: records carry their number of fields, so the ones written before
// read as they were, the new field zero, with no migration.
// TestEveryQuestFieldRoundTrips fails until the new field has its entry.
// Records written before schema 5 are the first form (QuestRecordV1: the
// first 30 fields, no count), and before schema 4 JSON, which starts with
// '{': DecodeQuest reads all three, so a salvaged or read-only older
// store reads as it is.

// QuestRecordV1 is the first byte of a binary quest record of schema 4:
// the first QuestFieldsV1 fields of the table and no count.
const (
	QuestRecordV1 = 0x01
	QuestFieldsV1 = 30
)

// QuestRecordV2 is the first byte of a binary quest record from schema 5:
// its number of fields, then the fields.
const QuestRecordV2 = 0x02

var QuestCodec = store.NewCodec(QuestRecordV2,
	store.Text("ID", func(q *domain.Quest) *string { return &q.ID }),
	store.Text("Name", func(q *domain.Quest) *string { return &q.Name }),
	store.Text("Direction", func(q *domain.Quest) *string { return &q.Direction }),
	store.Text("Status", func(q *domain.Quest) *domain.QuestStatus { return &q.Status }),
	store.Text("Reason", func(q *domain.Quest) *string { return &q.Reason }),
	store.Text("Mode", func(q *domain.Quest) *string { return &q.Mode }),
	store.Texts("Roles", func(q *domain.Quest) *[]string { return &q.Roles }, false),
	store.Text("Provider", func(q *domain.Quest) *string { return &q.Provider }),
	store.Text("Gate", func(q *domain.Quest) *string { return &q.Gate }),
	store.Texts("Checkpoints", func(q *domain.Quest) *[]string { return &q.Checkpoints }, true),
	store.Int("Limits.MaxTries", func(q *domain.Quest) *int { return &q.Limits.MaxTries }),
	store.Int("Limits.MaxAgentRuns", func(q *domain.Quest) *int { return &q.Limits.MaxAgentRuns }),
	store.Int("Limits.WallClock", func(q *domain.Quest) *time.Duration { return &q.Limits.WallClock }),
	store.Int("Limits.TokenBudget", func(q *domain.Quest) *int { return &q.Limits.TokenBudget }),
	store.Int("Limits.MaxStalled", func(q *domain.Quest) *int { return &q.Limits.MaxStalled }),
	store.Int("Limits.OwnerEvery", func(q *domain.Quest) *int { return &q.Limits.OwnerEvery }),
	store.Int("Counters.AgentRuns", func(q *domain.Quest) *int { return &q.Counters.AgentRuns }),
	store.Int("Counters.Tokens", func(q *domain.Quest) *int { return &q.Counters.Tokens }),
	store.Int("Counters.WallUsed", func(q *domain.Quest) *time.Duration { return &q.Counters.WallUsed }),
	store.Tallied("Counts", func(q *domain.Quest) store.Tally { return &q.Counts }),
	store.Text("Running", func(q *domain.Quest) *string { return &q.Running }),
	store.TextMap("Queued", func(q *domain.Quest) *map[string]string { return &q.Queued }),
	store.Text("StallSig", func(q *domain.Quest) *string { return &q.StallSig }),
	store.Int("StallCount", func(q *domain.Quest) *int { return &q.StallCount }),
	store.Uint("WallSession", func(q *domain.Quest) *uint64 { return &q.WallSession }),
	store.Time("WallMark", func(q *domain.Quest) *time.Time { return &q.WallMark }),
	store.Uint("DispatchSeq", func(q *domain.Quest) *uint64 { return &q.DispatchSeq }),
	store.Texts("Replays", func(q *domain.Quest) *[]string { return &q.Replays }, true),
	store.Time("Created", func(q *domain.Quest) *time.Time { return &q.Created }),
	store.Time("Updated", func(q *domain.Quest) *time.Time { return &q.Updated }),
	store.TextMap("RoleProviders", func(q *domain.Quest) *map[string]string { return &q.RoleProviders }),
	store.Texts("Egress", func(q *domain.Quest) *[]string { return &q.Egress }, true),
	store.Texts("CouncilReviewers", func(q *domain.Quest) *[]string { return &q.CouncilReviewers }, true),
	store.Texts("CouncilJudges", func(q *domain.Quest) *[]string { return &q.CouncilJudges }, true),
	store.Texts("PhaseGates", func(q *domain.Quest) *[]string { return &q.PhaseGates }, true),
	store.Bool("Teams", func(q *domain.Quest) *bool { return &q.Teams }),
	store.Int("MaxRevisions", func(q *domain.Quest) *int { return &q.MaxRevisions }),
	store.Text("AcceptMode", func(q *domain.Quest) *string { return &q.AcceptMode }),
	store.TextMap("TeamAccept", func(q *domain.Quest) *map[string]string { return &q.TeamAccept }),
	store.Text("Project", func(q *domain.Quest) *string { return &q.Project }),
	store.TextMap("StallSigs", func(q *domain.Quest) *map[string]string { return &q.StallSigs }),
	store.Counts("StallCounts", func(q *domain.Quest) *map[string]int { return &q.StallCounts }, func(s string) string { return s }),
	store.Uint("Rev", func(q *domain.Quest) *uint64 { return &q.Rev }),
	store.Text("EgressConsent", func(q *domain.Quest) *string { return &q.EgressConsent }),
).WithLegacy(QuestRecordV1, QuestFieldsV1)

// EncodeQuest returns q's record.
func EncodeQuest(q *domain.Quest) []byte { return AppendQuest(make([]byte, 0, 256), q) }

// AppendQuest appends q's record to b.
func AppendQuest(b []byte, q *domain.Quest) []byte { return QuestCodec.Append(b, q) }

// DecodeQuest reads a quest record, binary or (written before schema 4)
// JSON, into q.
func DecodeQuest(raw []byte, q *domain.Quest) error {
	if len(raw) > 0 && raw[0] == '{' {
		return json.Unmarshal(raw, q)
	}
	return QuestCodec.Decode(raw, q)
}

// GetQuestRecord reads quest id from the quests bucket b as stored; ok is
// false when it does not exist.
func GetQuestRecord(b *store.Bucket, id string) (q *domain.Quest, ok bool, err error) {
	raw := b.Get([]byte(id))
	if raw == nil {
		return nil, false, nil
	}
	q = new(domain.Quest)
	if err := DecodeQuest(raw, q); err != nil {
		return nil, false, fmt.Errorf("decode quest %s: %w", id, err)
	}
	return q, true, nil
}

// PutQuest stores q in the quests bucket b.
func PutQuest(b *store.Bucket, q *domain.Quest) error {
	return b.Put([]byte(q.ID), EncodeQuest(q))
}

// EncodeQuests is the migration to schema 4 (every quest record, JSON
// until then, is rewritten in the binary form) and to schema 5 (the binary
// form carries its number of fields): it rewrites every quest record in
// the current form.
func EncodeQuests(tx *store.Tx) error {
	b := tx.Quests()
	var qs []*domain.Quest
	err := b.ForEach(func(k, v []byte) error {
		q := new(domain.Quest)
		if err := DecodeQuest(v, q); err != nil {
			// Leave a record that does not decode as it is: verify and
			// salvage name it.
			return nil
		}
		if q.ID != string(k) {
			return nil
		}
		qs = append(qs, q)
		return nil
	})
	if err != nil {
		return err
	}
	for _, q := range qs {
		if err := PutQuest(b, q); err != nil {
			return err
		}
	}
	return nil
}
