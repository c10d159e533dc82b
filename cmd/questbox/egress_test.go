package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/questbox/questbox/internal/daemon/daemontest"
	"github.com/questbox/questbox/ui/api"
)

// The secrets the privacy tests plant: a key [privacy] redact matches, and
// the value of a variable a provider's env passes (a configured secret).
const (
	plantedKey   = "sk-live-0123456789"
	plantedToken = "envval-S3CRET"
)

// hostedJudgeConfig adds to citedConfig a command provider of vendor
// anthropic that appends its stdin to stdin and doubts, as both tiers of
// the L2 judge, and the lines of extra.
func hostedJudgeConfig(t *testing.T, probe, stdin, extra string) string {
	t.Helper()
	path := citedConfig(t, probe)
	doubt := `cat >> '` + stdin + `'; printf '{"decision": "doubt", "quote": "", "reason": "not convinced"}'`
	text := `
[providers.hosted]
type = "command"
vendor = "anthropic"
env = ["PATH", "QB_TEST_TOKEN"]
write = ["` + filepath.Dir(stdin) + `"]
argv = ["/bin/sh", "-c", "` + strings.ReplaceAll(doubt, `"`, `\"`) + `"]
` + judgeTable("hosted", "hosted") + extra
	appendConfig(t, path, text)
	return path
}

// The L2 judge obeys the quest, through the CLI and its API: a quest whose
// egress does not allow the judge's vendor is refused at creation naming
// each tier, its provider and vendor and the quest's egress; allowed, the
// hosted command judge is asked, and its stdin never holds the redact
// pattern's match nor the configured secret the answer's evidence carries.
func TestJudgeObeysTheQuest(t *testing.T) {
	t.Setenv("QB_TEST_TOKEN", plantedToken)
	srv := sourceServer(t, nil)
	stdin := filepath.Join(t.TempDir(), "judge.in")
	conf := hostedJudgeConfig(t, hostPort(srv), stdin, "\n[privacy]\nredact = [\"sk-live-[0-9]+\"]\n")
	data := dataDir(t)
	cmd := func(args ...string) []string { return append(args, "--data", data, "--config", conf) }
	r := must(t, 1, "", cmd("quest", "new", "ocr", "--direction", "free OCR", "--provider", "external", "--gate", "cited")...)
	for _, tier := range []string{"light", "heavy"} {
		want := fmt.Sprintf(`the L2 judge's %s tier (judge.%s): provider "hosted" is vendor "anthropic", which the quest's egress (local) does not allow`, tier, tier)
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, r.stderr)
		}
	}
	if r := must(t, 0, "", cmd("quest", "list", "--json")...); strings.Contains(r.stdout, "ocr") {
		t.Errorf("the refused quest was stored:\n%s", r.stdout)
	}

	must(t, 0, "", cmd("quest", "new", "ocr", "--direction", "free OCR", "--provider", "external", "--gate", "cited", "--egress", "local,anthropic")...)
	must(t, 0, "", cmd("scan", "q1", "which engine")...)
	b, _ := json.Marshal(map[string]any{"verdict": "dead",
		"evidence":  "Tesseract 5 is far behind; the test account " + plantedKey + " and the token " + plantedToken + " were used.",
		"citations": []any{map[string]string{"source": srv.URL + "/report", "quote": "Tesseract 5 recognised 79% of the characters"}}, "new_directions": []string{}})
	must(t, exitReview, "```json\n"+string(b)+"\n```\n", cmd("submit", "q1", "--node", "n1")...)
	got, err := os.ReadFile(stdin)
	if err != nil {
		t.Fatalf("the judge was not asked: %v", err)
	}
	for _, s := range []string{plantedKey, "sk-live", plantedToken} {
		if strings.Contains(string(got), s) {
			t.Errorf("the judge's stdin holds %q:\n%s", s, got)
		}
	}
	if !strings.Contains(string(got), "the test account [redacted] and the token xxxxx were used") {
		t.Errorf("the judge's stdin lacks the masked claim:\n%s", got)
	}
}

// run --check-config warns when a judge tier is not local and
// privacy.redact is empty, naming the tier; not when redact lists
// something, nor for a local judge.
func TestCheckConfigWarnsOfAnUnredactedJudge(t *testing.T) {
	stdin := filepath.Join(t.TempDir(), "judge.in")
	for _, tc := range []struct {
		name, extra string
		warn        bool
	}{
		{"hosted judge, no redaction", "", true},
		{"hosted judge, redaction", "\n[privacy]\nredact = [\"sk-[A-Za-z0-9]{20,}\"]\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conf := hostedJudgeConfig(t, "", stdin, tc.extra)
			r := must(t, 0, "", "run", "--check-config", "--config", conf, "--data", t.TempDir())
			for _, tier := range []string{"light", "heavy"} {
				want := fmt.Sprintf(`warning: %s: judge.%s: provider "hosted" is vendor "anthropic", not local, and privacy.redact is empty`, conf, tier)
				if got := strings.Contains(r.stderr, want); got != tc.warn {
					t.Errorf("warns %q: %v, want %v\n%s", want, got, tc.warn, r.stderr)
				}
			}
		})
	}
	local := writeConfig(t, "[providers.box]\ntype = \"command\"\nvendor = \"local\"\nargv = [\"/bin/true\"]\n"+judgeTable("box", "box"))
	if r := must(t, 0, "", "run", "--check-config", "--config", local, "--data", t.TempDir()); strings.Contains(r.stderr, "warning") {
		t.Errorf("a local judge is warned of:\n%s", r.stderr)
	}
}

// A real command agent on the box writes a key [privacy] redact matches and
// a configured secret to its stderr, each in two writes, through `questbox
// tick` as the daemon runs it; one agent answers, the other exits 1 (its
// stderr's tail in its error). No file under the data directory, the store
// included, holds either, and `questbox logs` shows the masks.
func TestRunLogsHoldNoSecret(t *testing.T) {
	t.Setenv("QB_TEST_TOKEN", plantedToken)
	dir := t.TempDir()
	ans := strings.ReplaceAll(answer("dead", "nothing to find in this direction at all"), "'", "")
	if err := os.WriteFile(filepath.Join(dir, "answer"), []byte(ans), 0o644); err != nil {
		t.Fatal(err)
	}
	leak := `cat >/dev/null; printf 'using sk-live-01' >&2; printf '23456789 now\n' >&2; printf 'and envval-S3' >&2; printf 'CRET\n' >&2`
	conf := writeConfig(t, `
[privacy]
redact = ["sk-live-[0-9]+"]

[providers.answers]
type = "command"
vendor = "local"
env = ["PATH", "QB_TEST_TOKEN"]
argv = ["/bin/sh", "-c", "`+leak+`; cat '`+dir+`/answer'"]

[providers.crashes]
type = "command"
vendor = "local"
env = ["PATH", "QB_TEST_TOKEN"]
argv = ["/bin/sh", "-c", "`+leak+`; exit 1"]
`)
	data := dataDir(t)
	cmd := func(args ...string) []string { return append(args, "--data", data, "--config", conf) }
	for _, p := range []string{"answers", "crashes"} {
		must(t, 0, "", cmd("quest", "new", p, "--direction", "find it", "--provider", p, "--mode", "solo", "--roles", "scout")...)
	}
	must(t, 0, "", cmd("tick")...)
	var runs []api.Run
	decode(t, must(t, 0, "", cmd("runs", "--json")...), &runs)
	if len(runs) != 2 {
		t.Fatalf("runs %+v, want two", runs)
	}
	for _, run := range runs {
		if run.Exit == "" {
			t.Errorf("run %+v did not end", run)
		}
		r := must(t, 0, "", cmd("logs", run.ID)...)
		if !strings.Contains(r.stdout, "using [redacted] now\nand xxxxx\n") {
			t.Errorf("the log of %s lacks the masks:\n%s", run.ID, r.stdout)
		}
	}
	if !strings.Contains(must(t, 0, "", cmd("quest", "show", "q2")...).stdout, "exited with status 1") {
		t.Error("the crash's error is not kept: the test does not reach the store")
	}
	var leaks []string
	err := filepath.WalkDir(data, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Type()&os.ModeSocket != 0 {
			return err
		}
		b, err := os.ReadFile(path)
		for _, s := range []string{"sk-live", "envval-S3CRET"} {
			if strings.Contains(string(b), s) {
				leaks = append(leaks, path+" holds "+s)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(leaks) > 0 {
		t.Errorf("secrets under the data directory:\n%s", strings.Join(leaks, "\n"))
	}
}

// With privacy.egress_consent, a quest on a hosted provider waits for its
// consent on the box's queue, saying why; its agent does not run at a
// tick; a long press of the (sim) button gives it and the agent runs; a
// triple press refuses another quest's, which ends naming the refusal.
func TestEgressConsentWithTheSimButton(t *testing.T) {
	data := daemontest.ShortDir(t)
	// The agent leaves its mark outside the data directory, which a
	// confined agent cannot write, in a directory it may.
	marks := t.TempDir()
	ran := filepath.Join(marks, "ran")
	cfg := filepath.Join(data, "questbox.toml")
	text := `
[gpio]
backend = "sim"

[privacy]
egress_consent = true

[providers.claude]
type = "command"
vendor = "anthropic"
write = ["` + marks + `"]
argv = ["/bin/sh", "-c", "cat >/dev/null; echo run >> '` + ran + `'; exit 1"]
`
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := func(args ...string) []string { return append(args, "--data", data, "--config", cfg) }
	dm := startDaemon(t, data, "--config", cfg)
	waitBooted(t, data)
	r := must(t, 0, "", cmd("quest", "new", "hosted", "--direction", "find it", "--provider", "claude")...)
	if want := "nothing of it leaves the box until you consent to its egress (anthropic,local)"; !strings.Contains(r.stderr, want) {
		t.Errorf("quest new does not say %q:\n%s", want, r.stderr)
	}
	var v api.Device
	waitFor(t, "the egress consent on the box", func() bool {
		v = deviceStatus(t, data)
		return len(v.Consents) == 1 && v.Amber.Pattern == "blink 2Hz"
	})
	if c := v.Consents[0]; c.Quest != "q1" || c.Role != "egress" || c.Why != "quest q1 would send its material to vendor anthropic (egress)" {
		t.Errorf("the consent queue shows %+v", c)
	}
	must(t, 0, "", cmd("tick")...)
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("the hosted agent ran before the consent")
	}
	r = must(t, 0, "", cmd("device", "press", "--hold", "2s")...)
	if got := strings.TrimSpace(r.stdout); got != "long (2s): approved "+v.Consents[0].Node {
		t.Errorf("the long press printed %q", got)
	}
	must(t, 0, "", cmd("tick")...)
	waitFor(t, "the agent to run", func() bool { _, err := os.Stat(ran); return err == nil })

	must(t, 0, "", cmd("quest", "new", "refused", "--direction", "find it", "--provider", "claude")...)
	waitFor(t, "the second consent", func() bool { return len(deviceStatus(t, data).Consents) == 1 })
	must(t, 0, "", cmd("device", "press", "--times", "3")...)
	q := showQuest(t, data, "q2").Quest
	if want := "egress refused by a human (button): quest q2 would send its material to vendor anthropic (egress); nothing was sent"; q.Status != api.QuestTerminated || q.Reason != want {
		t.Errorf("the refused quest is %s %q, want terminated %q", q.Status, q.Reason, want)
	}
	if err := dm.stop(); err != nil {
		t.Fatal(err)
	}
}
