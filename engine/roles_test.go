package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/questbox/questbox/engine/agent"
	"github.com/questbox/questbox/engine/prompt"
	"github.com/questbox/questbox/engine/store"
)

// recorder is a provider that answers every prompt with answer and keeps
// each request it was given.
type recorder struct {
	mu     sync.Mutex
	reqs   []agent.Request
	answer func(req agent.Request) string
}

func (r *recorder) Run(ctx context.Context, req agent.Request) (agent.Reply, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return reply(r.answer(req)), nil
}

func (r *recorder) roles() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, q := range r.reqs {
		out = append(out, q.Role)
	}
	return out
}

func (r *recorder) last() agent.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reqs[len(r.reqs)-1]
}

// workerOrOwner answers a worker with a promising answer proposing one
// direction, an owner by finishing the quest.
func workerOrOwner(req agent.Request) string {
	if req.Role == RoleOwner {
		return "```json\n{\"evidence\": \"enough was found to settle the direction\", \"actions\": [{\"action\": \"finish\", \"summary\": \"done\"}]}\n```\n"
	}
	return answer("promising", "the worker found something worth noting "+req.Node, "a direction from "+req.Node)
}

// The configured role provider is recorded on the quest at creation and
// runs that role's nodes only; a later configuration does not rewire the
// quest; --role-provider overrides the configured one.
func TestRoleProviders(t *testing.T) {
	workers, owners, other := &recorder{answer: workerOrOwner}, &recorder{answer: workerOrOwner}, &recorder{answer: workerOrOwner}
	provs := map[string]Provider{"w": workers, "o": owners, "x": other}
	local := map[string]string{"w": VendorLocal, "o": VendorLocal, "x": VendorLocal}
	h := newHarness(t, Options{Providers: provs, Vendors: local, Roles: map[string]RoleOptions{RoleOwner: {Provider: "o"}}})
	q := h.quest(func(s *QuestSpec) { s.Provider = "w"; s.Limits.OwnerEvery = 1 })
	if got := q.RoleProviders; len(got) != 1 || got[RoleOwner] != "o" {
		t.Fatalf("role providers %v, want owner=o", got)
	}
	// The configuration changes: the quest keeps its owner's provider.
	h.opt.Roles = map[string]RoleOptions{RoleOwner: {Provider: "x"}}
	h.restart()
	for range 4 {
		h.tick()
	}
	if got := strings.Join(workers.roles(), ","); got != "scout" {
		t.Errorf("provider w ran %q, want the scout only", got)
	}
	if got := strings.Join(owners.roles(), ","); got != "owner" {
		t.Errorf("provider o ran %q, want the owner only", got)
	}
	if got := other.roles(); len(got) != 0 {
		t.Errorf("provider x (configured after the quest was created) ran %v", got)
	}
	if got := h.questNow(q.ID); got.Status != QuestDone {
		t.Errorf("quest %s %q, want done by its owner", got.Status, got.Reason)
	}

	q2 := h.quest(func(s *QuestSpec) {
		s.Provider = "w"
		s.RoleProviders = map[string]string{RoleOwner: "w", RolePOC: "o"}
	})
	if got := q2.RoleProviders; len(got) != 2 || got[RoleOwner] != "w" || got[RolePOC] != "o" {
		t.Errorf("overridden role providers %v, want owner=w poc=o", got)
	}
}

func TestRoleProviderRefused(t *testing.T) {
	h := newHarness(t, Options{Providers: map[string]Provider{"w": &recorder{answer: workerOrOwner}}})
	for _, tc := range []struct {
		name string
		rp   map[string]string
		want string
	}{
		{"unknown provider", map[string]string{RoleOwner: "nope"}, `role-provider owner=nope: provider "nope" is not configured`},
		{"unknown role", map[string]string{"chef": "w"}, `role-provider chef=w: role "chef" is not one of the quest's roles`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := h.e.NewQuestSpec("q", "d")
			s.Provider, s.RoleProviders = "w", tc.rp
			_, err := h.e.NewQuest(s)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want ErrInvalid saying %q", err, tc.want)
			}
		})
	}
	if qs, _ := h.e.Quests(); len(qs) != 0 {
		t.Errorf("refused specs created %d quests", len(qs))
	}
}

// A role's template replaces the default prompt of that role's nodes, and
// sees the default prompt's parts; the other roles keep theirs. The
// role's max_tries replaces the quest's for its nodes.
func TestRoleTemplateAndMaxTries(t *testing.T) {
	tmpl, err := ParsePromptTemplate("scout.tmpl", "SCOUT {{.Node.ID}} of {{.Quest.ID}}: {{.Node.Hypothesis}} (try {{.Node.Try}} of {{.Node.MaxTries}})\n{{.Parts.Contract}}")
	if err != nil {
		t.Fatal(err)
	}
	p := &recorder{answer: func(req agent.Request) string { return "no answer at all" }}
	h := newHarness(t, Options{Providers: map[string]Provider{"p": p},
		Roles: map[string]RoleOptions{RoleScout: {Prompt: tmpl, MaxTries: 2}}})
	q := h.quest(func(s *QuestSpec) {
		s.Provider = "p"
		s.Mode = ModeSolo
		s.Limits.MaxTries = 5
		s.Limits.MaxStalled = 0
	})
	h.tick()
	got := p.last().Prompt
	if want := "SCOUT n1 of " + q.ID + ": find the best thing (try 1 of 2)\n\n" + workerContract; got != want {
		t.Errorf("scout prompt\n%s\nwant\n%s", got, want)
	}
	h.tick()
	if n := h.node("n1"); n.Status != Exhausted || n.Tries != 2 {
		t.Errorf("scout n1 %s after %d tries, want exhausted after 2 (the role's max_tries)", n.Status, n.Tries)
	}
}

func TestParsePromptTemplateRefusesUnknownFields(t *testing.T) {
	for _, text := range []string{"{{.Node.Nope}}", "{{.Quest.ID", "{{range .Locked}}{{.Colour}}{{end}}"} {
		if _, err := ParsePromptTemplate("t", text); err == nil {
			t.Errorf("%q parsed, want an error", text)
		}
	}
}

// The owner's prompt carries the locked nodes' evidence, newest first,
// each cut with a marker, the whole within the evidence cap.
func TestOwnerPromptCarriesLockedEvidence(t *testing.T) {
	long := strings.Repeat("x", 3000)
	p := &recorder{answer: func(req agent.Request) string {
		if req.Role == RoleOwner {
			return workerOrOwner(req)
		}
		return answer("promising", fmt.Sprintf("evidence of %s: %s", req.Node, long), "direction of "+req.Node)
	}}
	const evidenceCap = 2000
	h := newHarness(t, Options{Providers: map[string]Provider{"p": p}, Roles: map[string]RoleOptions{RoleOwner: {EvidenceCap: evidenceCap}}})
	h.quest(func(s *QuestSpec) { s.Provider = "p"; s.Limits.OwnerEvery = 1 })
	for range 2 {
		h.tick()
	}
	req := p.last()
	if req.Role != RoleOwner {
		t.Fatalf("last run was a %s, want the owner", req.Role)
	}
	if !strings.Contains(req.Prompt, "What the quest's locked nodes established") || !strings.Contains(req.Prompt, "evidence: evidence of n1: xxx") {
		t.Fatalf("owner prompt lacks the locked node's evidence:\n%s", req.Prompt)
	}
	if !strings.Contains(req.Prompt, " […cut: ") {
		t.Errorf("owner prompt has no cut marker:\n%s", req.Prompt)
	}
	if len(req.Prompt) > 4000 {
		t.Errorf("owner prompt is %d bytes; the evidence cap is %d", len(req.Prompt), evidenceCap)
	}
}

// The newest locked node comes first in the owner's prompt.
func TestOwnerPromptNewestFirst(t *testing.T) {
	p := &recorder{answer: workerOrOwner}
	h := newHarness(t, Options{Providers: map[string]Provider{"p": p}})
	var d PromptData
	h.quest(func(s *QuestSpec) { s.Provider = "p"; s.Mode = ModeSolo })
	for range 3 {
		h.tick()
	}
	q, _ := h.e.Quests()
	var req agent.Request
	if err := h.e.store.view(func(tx *store.Tx) error {
		m, err := prompt.ReadMaterial(promptRecords(), tx, q[0], DefaultEvidenceCap)
		if err != nil {
			return err
		}
		m.Apply(&req, &d)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, l := range d.Locked {
		ids = append(ids, l.ID)
	}
	if got := strings.Join(ids, ","); got != "n3,n2,n1" {
		t.Errorf("locked nodes in the owner's prompt %s, want n3,n2,n1 (newest first)", got)
	}
}

// A provider whose vendor the quest's egress does not allow is refused at
// creation, naming it and its vendor; the default egress is the quest
// provider's vendor and local.
func TestEgress(t *testing.T) {
	rec := &recorder{answer: workerOrOwner}
	h := newHarness(t, Options{Providers: map[string]Provider{"claude": rec, "gpt": rec, "ollama": rec},
		Vendors: map[string]string{"claude": "anthropic", "gpt": "openai", "ollama": VendorLocal}})
	q := h.quest(func(s *QuestSpec) { s.Provider = "claude"; s.RoleProviders = map[string]string{RoleScout: "ollama"} })
	if got := strings.Join(q.Egress, ","); got != "anthropic,local" {
		t.Errorf("default egress %s, want anthropic,local", got)
	}
	for _, tc := range []struct {
		name string
		spec func(*QuestSpec)
		want string
	}{
		{"role provider", func(s *QuestSpec) { s.Provider = "claude"; s.RoleProviders = map[string]string{RoleOwner: "gpt"} },
			`role owner: provider "gpt" is vendor "openai", which the quest's egress (anthropic,local) does not allow`},
		{"quest provider", func(s *QuestSpec) { s.Provider = "gpt"; s.Egress = []string{"local"} },
			`the quest's provider: provider "gpt" is vendor "openai"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := h.e.NewQuestSpec("q", "d")
			tc.spec(&s)
			_, err := h.e.NewQuest(s)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want ErrInvalid saying %q", err, tc.want)
			}
		})
	}
	q = h.quest(func(s *QuestSpec) {
		s.Provider = "claude"
		s.RoleProviders = map[string]string{RoleOwner: "gpt"}
		s.Egress = []string{"anthropic", "openai"}
	})
	if got := strings.Join(q.Egress, ","); got != "anthropic,openai" {
		t.Errorf("egress %s, want anthropic,openai", got)
	}
	// Council members are providers the quest uses too.
	err := h.e.update(func(tx *txn) error {
		qq := &Quest{Provider: "claude", CouncilJudges: []string{"gpt"}}
		return h.e.settleRoles(qq, &QuestSpec{})
	})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `council judge 1: provider "gpt" is vendor "openai"`) {
		t.Errorf("a council judge of a vendor not allowed: got %v", err)
	}
}

func TestVendorDefaults(t *testing.T) {
	h := newHarness(t, Options{Providers: map[string]Provider{"mine": &recorder{answer: workerOrOwner}}})
	for prov, want := range map[string]string{ProviderDemo: VendorLocal, ProviderExternal: VendorLocal, "mine": "mine"} {
		if got := h.e.Vendor(prov); got != want {
			t.Errorf("vendor of %s: %s, want %s", prov, got, want)
		}
	}
}

const secret = "sk-live-0123456789"

// redactQuest runs the first node of a quest on provider prov, whose
// direction and hypothesis carry a secret, and returns its run.
func redactQuest(t *testing.T, h *harness, prov string) Run {
	t.Helper()
	q := h.quest(func(s *QuestSpec) {
		s.Provider, s.Mode = prov, ModeSolo
		s.Direction = "find who leaked the key " + secret + " last week"
		s.Egress = []string{"hosted", "local"}
	})
	h.tick()
	ns, err := h.e.Nodes(q.ID)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := h.e.QuestRuns("", ns[0].ID)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v, %v; want one", runs, err)
	}
	return runs[0]
}

var redactKeys = []*regexp.Regexp{regexp.MustCompile(`sk-live-[0-9]+`)}

// A redact pattern never reaches a non-local command provider's stdin;
// the run says it was redacted.
func TestRedactCommandProvider(t *testing.T) {
	dir := t.TempDir()
	got := filepath.Join(dir, "stdin")
	script := fmt.Sprintf("cat > %q; printf '%%s' '%s'", got, strings.ReplaceAll(answer("dead", "nothing to find in this direction"), "'", ""))
	cmd, err := agent.NewCommand(agent.CommandConfig{Name: "hosted-cli", Argv: []string{"/bin/sh", "-c", script},
		Timeout: time.Minute, OutputCap: 1 << 20, Env: []string{"PATH"}})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Options{Providers: map[string]Provider{"hosted-cli": cmd}, Vendors: map[string]string{"hosted-cli": "hosted"}, Redaction: NewRedaction(redactKeys, nil)})
	run := redactQuest(t, h, "hosted-cli")
	stdin, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(stdin), "sk-live") || !strings.Contains(string(stdin), "the key "+RedactMask+" last week") {
		t.Errorf("the command's stdin:\n%s\nwant the key masked", stdin)
	}
	if !run.Redacted || run.Outcome != "PASS" {
		t.Errorf("run %+v, want redacted and PASS", run)
	}
}

// A redact pattern never reaches an openai provider's HTTP body.
func TestRedactOpenAIProvider(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		content, _ := json.Marshal(answer("dead", "nothing to find in this direction"))
		fmt.Fprintf(w, `{"choices":[{"message":{"role":"assistant","content":%s}}],"usage":{"total_tokens":7}}`, content)
	}))
	defer srv.Close()
	op, err := agent.NewOpenAI(agent.OpenAIConfig{Name: "hosted-llm", BaseURL: srv.URL + "/v1", Model: "m", Timeout: time.Minute, OutputCap: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Options{Providers: map[string]Provider{"hosted-llm": op}, Vendors: map[string]string{"hosted-llm": "hosted"}, Redaction: NewRedaction(redactKeys, nil)})
	run := redactQuest(t, h, "hosted-llm")
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 1 {
		t.Fatalf("%d requests, want 1", len(bodies))
	}
	if strings.Contains(bodies[0], "sk-live") || !strings.Contains(bodies[0], RedactMask) {
		t.Errorf("the HTTP body:\n%s\nwant the key masked", bodies[0])
	}
	if !run.Redacted {
		t.Errorf("run %+v, want redacted", run)
	}
}

// A local provider gets the prompt as it is.
func TestRedactSparesLocal(t *testing.T) {
	p := &recorder{answer: func(agent.Request) string { return answer("dead", "nothing to find in this direction") }}
	h := newHarness(t, Options{Providers: map[string]Provider{"box": p}, Vendors: map[string]string{"box": VendorLocal}, Redaction: NewRedaction(redactKeys, nil)})
	run := redactQuest(t, h, "box")
	if req := p.last(); !strings.Contains(req.Prompt, secret) || !strings.Contains(req.Direction, secret) {
		t.Errorf("local provider's prompt lost the text:\n%s", req.Prompt)
	}
	if run.Redacted {
		t.Errorf("run %+v says redacted", run)
	}
}

// An external quest with a spawned role provider: the tick runs that
// role's nodes, `next` serves the rest.
func TestExternalQuestWithSpawnedRole(t *testing.T) {
	scouts := &recorder{answer: workerOrOwner}
	h := newHarness(t, Options{Providers: map[string]Provider{"s": scouts}, Vendors: map[string]string{"s": VendorLocal}})
	q := h.quest(func(s *QuestSpec) {
		s.Provider = ProviderExternal
		s.RoleProviders = map[string]string{RoleScout: "s"}
		s.Limits.OwnerEvery = 1
	})
	if _, err := h.e.Scan(q.ID, []string{"the first lead"}); err != nil {
		t.Fatal(err)
	}
	if w, err := h.e.Next(q.ID); err != nil || w != nil {
		t.Fatalf("next: %+v, %v; want nothing (the scout is the box's)", w, err)
	}
	_, err := h.e.Submit(context.Background(), q.ID, "n1", []byte(answer("dead", "an outside answer for the box's scout")))
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `node n1 (scout) runs on provider "s"`) {
		t.Fatalf("an outside answer for the box's node: got %v, want ErrInvalid naming its provider", err)
	}
	h.tick()
	if got := strings.Join(scouts.roles(), ","); got != "scout" {
		t.Fatalf("provider s ran %q, want the scout", got)
	}
	// The scout's proposal makes an owner due: it is external.
	if rep := h.tick(); len(rep.Dispatched) != 0 {
		t.Errorf("the tick dispatched %v, an external node", rep.Dispatched)
	}
	w, err := h.e.Next(q.ID)
	if err != nil || w == nil || w.Role != RoleOwner {
		t.Fatalf("next: %+v, %v; want the owner", w, err)
	}
}

// A provider whose vendor changed since the quest was created, to one its
// egress does not allow, never runs: the quest stops, saying why.
func TestEgressCheckedAtDispatch(t *testing.T) {
	p := &recorder{answer: workerOrOwner}
	h := newHarness(t, Options{Providers: map[string]Provider{"p": p, "o": p}, Vendors: map[string]string{"p": VendorLocal, "o": VendorLocal}})
	q := h.quest(func(s *QuestSpec) { s.Provider = "p"; s.RoleProviders = map[string]string{RoleOwner: "o"} })
	h.opt.Vendors = map[string]string{"p": "hosted", "o": VendorLocal}
	h.restart()
	h.tick()
	if got := p.roles(); len(got) != 0 {
		t.Fatalf("the provider ran %v", got)
	}
	qq := h.questNow(q.ID)
	if qq.Status != QuestStopped || !strings.Contains(qq.Reason, `provider "p" is vendor "hosted", which the quest's egress (local) does not allow`) {
		t.Fatalf("quest %s %q, want stopped naming the provider and its vendor", qq.Status, qq.Reason)
	}
}

// The same for a council member: a member whose provider's vendor changed
// since the quest was created never runs, and the quest stops naming it.
func TestEgressCheckedAtACouncilsDispatch(t *testing.T) {
	p := &recorder{answer: workerOrOwner}
	judge := &recorder{answer: workerOrOwner}
	h := newHarness(t, Options{Providers: map[string]Provider{"p": p, "j": judge}, MaxParallel: 2,
		Vendors: map[string]string{"p": VendorLocal, "j": VendorLocal}})
	q := h.quest(func(s *QuestSpec) {
		s.Provider, s.Roles = "p", []string{RoleScout, RoleOwner}
		s.CouncilJudges = []string{"j"}
	})
	h.opt.Vendors = map[string]string{"p": VendorLocal, "j": "hosted"}
	h.restart()
	for range 3 {
		h.tick()
		if h.questNow(q.ID).Status != QuestActive {
			break
		}
	}
	if got := judge.roles(); len(got) != 0 {
		t.Fatalf("the judge's provider ran %v", got)
	}
	qq := h.questNow(q.ID)
	if qq.Status != QuestStopped || !strings.Contains(qq.Reason, `provider "j" is vendor "hosted", which the quest's egress (local) does not allow`) {
		t.Fatalf("quest %s %q, want stopped naming the judge's provider and its vendor", qq.Status, qq.Reason)
	}
}

// A run may reach the network only when its provider's vendor is not
// local and the quest's egress allows it: the Request says so, and a
// confined command agent gets no network without it.
func TestRequestNetworkFollowsEgress(t *testing.T) {
	hosted, local := &recorder{answer: workerOrOwner}, &recorder{answer: workerOrOwner}
	h := newHarness(t, Options{Providers: map[string]Provider{"hosted": hosted, "lan": local},
		Vendors: map[string]string{"hosted": "anthropic", "lan": VendorLocal}})
	for _, c := range []struct {
		prov    string
		rec     *recorder
		network bool
	}{{"hosted", hosted, true}, {"lan", local, false}} {
		h.quest(func(s *QuestSpec) { s.Provider, s.Mode = c.prov, ModeSolo })
		h.tick()
		if got := c.rec.last().Network; got != c.network {
			t.Errorf("%s: Request.Network %v, want %v", c.prov, got, c.network)
		}
	}
	// Egress that does not name the vendor never opens the network, even
	// where the provider's vendor is not local.
	if h.e.network(&Quest{Egress: []string{VendorLocal}}, "hosted") {
		t.Error("network for a vendor the quest's egress does not allow")
	}
}
