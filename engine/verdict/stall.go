package verdict

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/questbox/questbox/engine/domain"
	"github.com/questbox/questbox/gates"
)

// The no_progress signals besides the answer's (docs/design.md,
// "Loop control"), as StallSignal names them.
const (
	// StallFacts: the same fired rules with the same facts.
	StallFacts = "facts"
	// StallEvidence: the answer's evidence unchanged after
	// normalisation (gates.NormalizeText).
	StallEvidence = "evidence"
	// StallTeamReject is the signal a Team's pipeline feeds: a Team
	// rejected for the same reason.
	StallTeamReject = "team-reject"
)

// stall implements no_progress (docs/design.md, "Loop control", "Councils and
// Teams"): the same signature (quest, role, fired rule ids, output hash)
// max_stalled times in a row stops the quest, and so does each further signal
// of a verdict: the same fired rules with the same facts (only when rules
// fired: passing answers share an empty set), and the same evidence after
// normalisation (only when the answer has evidence).
func stall(t Txn, q *domain.Quest, n *domain.Node, res *Judged) error {
	if q.Limits.MaxStalled <= 0 {
		return nil
	}
	var ids []string
	for _, f := range res.Facts {
		ids = append(ids, f.Rule)
	}
	slices.Sort(ids)
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00", q.ID, n.Role, strings.Join(slices.Compact(ids), ","))
	h.Write(res.Raw)
	sig := hex.EncodeToString(h.Sum(nil))[:32]
	if sig == q.StallSig {
		q.StallCount++
	} else {
		q.StallSig, q.StallCount = sig, 1
	}
	t.Track(q)
	if q.StallCount >= q.Limits.MaxStalled && q.Status == domain.QuestActive {
		return t.SetQuestStatus(q, domain.QuestStopped, fmt.Sprintf("no progress: the same answer and the same rules %d times in a row; needs attention (`questbox quest resume %s` after a look)", q.StallCount, q.ID))
	}
	facts := ""
	if len(res.Facts) > 0 {
		fs := make([]string, len(res.Facts))
		for i, f := range res.Facts {
			fs[i] = strings.Join([]string{f.Rule, string(f.Level), f.Where, f.Expected, f.Actual}, "\x1f")
		}
		slices.Sort(fs)
		facts = n.Role + "\x00" + strings.Join(fs, "\x1e")
	}
	if err := StallSignal(t, q, StallFacts, facts, "the same rules fired with the same facts"); err != nil {
		return err
	}
	evidence := ""
	if ev := gates.NormalizeText(answerEvidence(n, res)); ev != "" {
		evidence = n.Role + "\x00" + ev
	}
	return StallSignal(t, q, StallEvidence, evidence, "the same evidence")
}

// answerEvidence is the evidence of the answer res judged: the parsed
// answer's, or, for an answer that failed a rule after it parsed, read
// from the raw answer again; "" when it has none.
func answerEvidence(n *domain.Node, res *Judged) string {
	switch {
	case res.Answer != nil:
		return res.Answer.Evidence
	case res.Owner != nil:
		return res.Owner.Evidence
	case len(res.Raw) == 0:
		return ""
	case n.Role == domain.RoleOwner:
		o, _ := gates.ParseOwnerAnswer(res.Raw)
		return o.Evidence
	}
	a, _ := gates.ParseAnswer(res.Raw)
	return a.Evidence
}

// StallSignal counts one observation of the no_progress signal named
// signal (StallFacts, StallEvidence, StallTeamReject, ...): extra is what
// was observed, compared with the signal's previous observation on this
// quest. The same extra max_stalled times in a row stops the quest with
// what (a phrase: "the same evidence") in its reason; a different extra
// starts the count again at 1, and "" means "nothing to compare" and
// resets the signal. Each signal counts on its own, in the quest record
// (StallSigs, StallCounts), so it survives restarts.
//
// A Team's pipeline calls it with StallTeamReject and the Team's id and
// the normalised reason of each rejection: a Team rejected max_stalled
// times in a row for the same reason stops the quest. The caller passes
// whatever should make two observations equal; extra is hashed, so it
// may be long.
func StallSignal(t Txn, q *domain.Quest, signal, extra, what string) error {
	if q.Limits.MaxStalled <= 0 {
		return nil
	}
	if extra == "" {
		if q.StallSigs[signal] == "" && q.StallCounts[signal] == 0 {
			return nil
		}
		t.OwnStallMaps(q)
		delete(q.StallSigs, signal)
		delete(q.StallCounts, signal)
		t.Track(q)
		return nil
	}
	sum := sha256.Sum256([]byte(extra))
	sig := hex.EncodeToString(sum[:16])
	t.OwnStallMaps(q)
	if q.StallSigs[signal] == sig {
		q.StallCounts[signal]++
	} else {
		q.StallSigs[signal], q.StallCounts[signal] = sig, 1
	}
	t.Track(q)
	if c := q.StallCounts[signal]; c >= q.Limits.MaxStalled && q.Status == domain.QuestActive {
		return t.SetQuestStatus(q, domain.QuestStopped, fmt.Sprintf("no progress: %s %d times in a row; needs attention (`questbox quest resume %s` after a look)", what, c, q.ID))
	}
	return nil
}
