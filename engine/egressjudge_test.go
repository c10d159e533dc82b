package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/gates/judge"
)

// tierJudge is an L2 judge whose light and heavy tiers run on the
// providers it names; it doubts everything and counts its batches.
type tierJudge struct {
	light, heavy string

	mu      sync.Mutex // guards batches
	batches int
}

func (j *tierJudge) Batch(ctx context.Context, items []judge.Item, seed uint64) (judge.Batch, error) {
	j.mu.Lock()
	j.batches++
	j.mu.Unlock()
	var b judge.Batch
	for range items {
		b.Results = append(b.Results, judge.Result{Effect: judge.Doubt, Reason: "not convinced", Decided: true})
	}
	return b, nil
}

func (j *tierJudge) Fingerprints() (light, heavy judge.Fingerprint) {
	return judge.Fingerprint{Provider: j.light, Model: "l"}, judge.Fingerprint{Provider: j.heavy, Model: "h"}
}

func (j *tierJudge) calls() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.batches
}

// noCache is a judge cache that keeps nothing: every pair is judged.
type noCache struct{}

func (noCache) Get(string) (judge.Result, bool, error) { return judge.Result{}, false, nil }
func (noCache) Put(string, judge.Result) error         { return nil }

// secretsOf masks its values as the daemon's configured secrets are.
type secretsOf []string

func (s secretsOf) String(x string) string {
	for _, v := range s {
		x = strings.ReplaceAll(x, v, "xxxxx")
	}
	return x
}

// A quest whose egress does not allow an L2 judge tier's vendor is
// refused at creation, naming the tier, its key, its provider and vendor
// and the quest's egress, as a role provider is; an egress that allows it
// is accepted. The rule binds every kind of quest: spawned and external.
func TestJudgeEgressRefusedAtCreation(t *testing.T) {
	rec := &recorder{answer: workerOrOwner}
	j := &tierJudge{light: "box", heavy: "claude"}
	h := newHarness(t, Options{Providers: map[string]Provider{"box": rec, "claude": rec},
		Vendors: map[string]string{"box": VendorLocal, "claude": "anthropic"}, Judge: j})
	want := `the L2 judge's heavy tier (judge.heavy): provider "claude" is vendor "anthropic", which the quest's egress (local) does not allow (allow it with --egress, declare the provider's vendor in its [providers.NAME] table, or give judge.heavy another provider)`
	for _, prov := range []string{"box", ProviderExternal} {
		s := h.e.NewQuestSpec("q", "d")
		s.Provider = prov
		_, err := h.e.NewQuest(s)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Fatalf("provider %s: got %v, want ErrInvalid saying %q", prov, err, want)
		}
		if strings.Contains(err.Error(), "light tier") {
			t.Errorf("provider %s: the local light tier is named too: %v", prov, err)
		}
	}
	q := h.quest(func(s *QuestSpec) { s.Provider, s.Egress = "box", []string{"local", "anthropic"} })
	if q.Status != QuestActive {
		t.Errorf("a quest whose egress allows the judge is %s", q.Status)
	}
	if qs, _ := h.e.Quests(); len(qs) != 1 {
		t.Errorf("%d quests stored, want only the allowed one", len(qs))
	}
}

// A judge tier whose vendor changed since the quest was created (the
// configuration changed) is never sent anything: a spawned quest stops
// before its agent runs, an external quest's answer is not sent to the
// judge and the quest stops; each names the tier and its vendor.
func TestJudgeEgressCheckedAtDispatchAndJudging(t *testing.T) {
	rec := &recorder{answer: workerOrOwner}
	j := &tierJudge{light: "box", heavy: "big"}
	h := newHarness(t, Options{Providers: map[string]Provider{"box": rec, "big": rec},
		Vendors: map[string]string{"box": VendorLocal, "big": VendorLocal}, Judge: j})
	spawned := h.quest(func(s *QuestSpec) { s.Provider = "box" })
	external := h.quest(func(s *QuestSpec) { s.Provider = ProviderExternal })
	res, err := h.e.Scan(external.ID, []string{"a lead"})
	if err != nil {
		t.Fatal(err)
	}
	h.opt.Vendors = map[string]string{"box": VendorLocal, "big": "hosted"}
	h.restart()
	h.tick()
	want := `the L2 judge's heavy tier (judge.heavy): provider "big" is vendor "hosted", which the quest's egress (local) does not allow`
	if got := rec.roles(); len(got) != 0 {
		t.Errorf("the provider ran %v", got)
	}
	if q := h.questNow(spawned.ID); q.Status != QuestStopped || !strings.Contains(q.Reason, want) {
		t.Errorf("spawned quest %s %q, want stopped saying %q", q.Status, q.Reason, want)
	}
	_, err = h.e.Submit(context.Background(), external.ID, res.Added[0], []byte(citing("doc", "the page")))
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("submit: %v, want an error saying %q", err, want)
	}
	if j.calls() != 0 {
		t.Errorf("the judge was asked %d times", j.calls())
	}
	if q := h.questNow(external.ID); q.Status != QuestStopped || !strings.Contains(q.Reason, want) {
		t.Errorf("external quest %s %q, want stopped saying %q", q.Status, q.Reason, want)
	}
}

// judgeScript is a command judge that appends its stdin to path and
// doubts.
func judgeScript(t *testing.T, name, path string) *agent.Command {
	t.Helper()
	script := fmt.Sprintf(`cat >> %q; printf '{"decision": "doubt", "quote": "", "reason": "not convinced"}'`, path)
	c, err := agent.NewCommand(agent.CommandConfig{Name: name, Argv: []string{"/bin/sh", "-c", script},
		Timeout: time.Minute, OutputCap: 1 << 20, Env: []string{"PATH"}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// [privacy] redact and the configured secrets apply to the L2 judge's
// prompts as to an agent's: a command judge of a hosted vendor never
// reads a pattern's match nor a configured secret, from the answer's
// evidence (the claim) or from the cited source, while a local judge
// reads them as they are.
func TestJudgePromptsRedacted(t *testing.T) {
	const token = "tok-S3CRET-42"
	dir := t.TempDir()
	hostedIn, localIn := filepath.Join(dir, "hosted.in"), filepath.Join(dir, "local.in")
	red := NewRedaction(redactKeys, secretsOf{token})
	cfg := judge.Config{Light: judge.TierConfig{Provider: "box", Model: "l"}, Heavy: judge.TierConfig{Provider: "hosted", Model: "h"},
		Template: "v1", Canaries: 1}
	j, err := judge.New(cfg, JudgeModel(judgeScript(t, "box", localIn), VendorLocal, red),
		JudgeModel(judgeScript(t, "hosted", hostedIn), "hosted", red), noCache{})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Options{Judge: j, Redaction: red, Vendors: map[string]string{"box": VendorLocal, "hosted": "hosted"},
		Sources: map[string]string{"doc": "The audit found the key " + secret + " and the token " + token + " in the page."}})
	q := h.quest(func(s *QuestSpec) { s.Provider, s.Egress = ProviderExternal, []string{"local", "hosted"} })
	res, err := h.e.Scan(q.ID, []string{"who leaked the key"})
	if err != nil {
		t.Fatal(err)
	}
	ans := "```json\n" + fmt.Sprintf(`{"verdict":"conclusion","evidence":"the key %s and the token %s leaked in the audit","citations":[{"source":"doc","quote":"The audit found the key"}],"new_directions":[]}`, secret, token) + "\n```"
	r, err := h.e.Submit(context.Background(), q.ID, res.Added[0], []byte(ans))
	if err != nil || r.Outcome != "REVIEW" {
		t.Fatalf("submit: %+v, %v; want REVIEW (both judges doubt)", r, err)
	}
	hosted, err := os.ReadFile(hostedIn)
	if err != nil {
		t.Fatalf("the hosted judge was not asked: %v", err)
	}
	for _, s := range []string{secret, token, "sk-live"} {
		if strings.Contains(string(hosted), s) {
			t.Errorf("the hosted judge read %q:\n%s", s, hosted)
		}
	}
	if !strings.Contains(string(hosted), "the key "+RedactMask+" and the token xxxxx leaked") ||
		!strings.Contains(string(hosted), "The audit found the key "+RedactMask+" and the token xxxxx in the page.") {
		t.Errorf("the hosted judge's prompt lacks the masked claim and source:\n%s", hosted)
	}
	local, err := os.ReadFile(localIn)
	if err != nil {
		t.Fatalf("the local judge was not asked: %v", err)
	}
	if !strings.Contains(string(local), secret) || !strings.Contains(string(local), token) {
		t.Errorf("the local judge's prompt lost the text:\n%s", local)
	}
}
