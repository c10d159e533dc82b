package main

import (
	"github.com/questbox/questbox/ui/api"

	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/gates"
)

// page is what the cited source serves.
const page = `<html><body><p>On the 40 scanned invoices, Tesseract 5 recognised 79% of the characters; PaddleOCR reached 91%.</p></body></html>`

// sourceServer serves page at /report on 127.0.0.1 and counts requests.
func sourceServer(t *testing.T, l net.Listener) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/report", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(page))
	})
	srv := httptest.NewUnstartedServer(mux)
	if l != nil {
		srv.Listener.Close()
		srv.Listener = l
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// citedConfig writes a config whose profile "cited" checks citation quotes
// against their sources (with url-resolves superseded by citation-quote),
// probing probe, with ground allowed to reach 127.0.0.1.
func citedConfig(t *testing.T, probe string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "questbox.toml")
	cfg := `
[network]
probe = "` + probe + `"
allow_private = true
fetch_timeout = "5s"

[[gates.cited.rules]]
id = "contract"
kind = "contract"
level = "fail"

[[gates.cited.rules]]
id = "quotes"
kind = "citation-quote"
level = "fail"
supersedes = ["resolves"]

[[gates.cited.rules]]
id = "resolves"
kind = "url-resolves"
level = "fail"

[[gates.cited.rules]]
id = "no-todo"
kind = "regex"
level = "review"
params = { field = "evidence", pattern = "(?i)\\bTODO\\b", mode = "must_not_match" }
attacks = ["contract"]
weight = 0.5
`
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// cited is an answer citing source with quote.
func cited(source, quote string) string {
	b, _ := json.Marshal(map[string]any{"verdict": "dead", "evidence": "Tesseract 5 is far behind PaddleOCR on our invoices.",
		"citations": []any{map[string]string{"source": source, "quote": quote}}, "new_directions": []string{}})
	return "```json\n" + string(b) + "\n```\n"
}

func hostPort(srv *httptest.Server) string { return strings.TrimPrefix(srv.URL, "http://") }

// TestCitationGate is the citation acceptance of the gates issue through
// the CLI: a quote absent from the cited page FAILs naming the quote, a
// normalised match (extra spaces, full-width letters) PASSes, a
// zero-width-character trick FAILs.
func TestCitationGate(t *testing.T) {
	srv := sourceServer(t, nil)
	conf := citedConfig(t, hostPort(srv))
	data := dataDir(t)
	cmd := func(args ...string) []string { return append(args, "--data", data, "--config", conf) }

	must(t, 0, "", cmd("quest", "new", "ocr", "--direction", "free OCR for invoices", "--provider", "external", "--gate", "cited")...)
	must(t, 0, "", cmd("scan", "q1", "absent quote", "normalised quote", "zero-width quote")...)
	src := srv.URL + "/report"

	tests := []struct {
		name     string
		node     string
		quote    string
		code     int
		outcome  string
		contains string
	}{
		{"quote absent from the page", "n1", "PaddleOCR reached 99%", exitFail, "FAIL", `quotes @ citations[0].quote`},
		{"normalised match", "n2", "ＴＥＳＳＥＲＡＣＴ 5   recognised\n79%  of the characters", exitOK, "PASS", ""},
		{"zero-width trick", "n3", "Tesseract 5 recog\u200bnised 79%", exitFail, "FAIL", `quotes @ citations[0].quote`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := must(t, tt.code, cited(src, tt.quote), cmd("submit", "q1", "--node", tt.node)...)
			if !strings.HasPrefix(r.stdout, tt.outcome) || !strings.Contains(r.stdout, tt.contains) {
				t.Errorf("submit printed:\n%s\nwant %s mentioning %q", r.stdout, tt.outcome, tt.contains)
			}
			if tt.outcome == "FAIL" {
				// The fact names the quote (first line of the quote, as the fact excerpts it).
				if want := strings.ReplaceAll(tt.quote, "\u200b", `\u200b`); !strings.Contains(r.stdout, want) && !strings.Contains(r.stdout, tt.quote) {
					t.Errorf("the FAIL does not name the quote %q:\n%s", tt.quote, r.stdout)
				}
				// The canonical feedback (root cause, how to flip the
				// verdict) is printed line by line as the node keeps it
				// for the agent's next prompt, indented under "feedback:".
				fb := node(t, data, conf, tt.node).Feedback
				shown := "feedback:\n  " + strings.ReplaceAll(strings.TrimSuffix(fb, "\n"), "\n", "\n  ") + "\n"
				if !strings.Contains(fb, "to flip the verdict") || !strings.Contains(r.stdout, shown) {
					t.Errorf("submit output does not carry the node's feedback %q:\n%s", fb, r.stdout)
				}
				if strings.Contains(r.stdout, "resolves @") {
					t.Errorf("url-resolves fired for a page that answers 200:\n%s", r.stdout)
				}
			}
		})
	}

	// rules --json for the quest: every rule with id, level, stage,
	// description and its edges.
	var v api.Rules
	decode(t, must(t, 0, "", cmd("rules", "--quest", "q1", "--json")...), &v)
	want := []struct {
		id, level, stage   string
		attacks, supersede []string
	}{
		{"contract", "fail", "pure", []string{}, []string{}},
		{"quotes", "fail", "ground", []string{}, []string{"resolves"}},
		{"resolves", "fail", "ground", []string{}, []string{}},
		{"no-todo", "review", "pure", []string{"contract"}, []string{}},
	}
	if v.Quest != "q1" || v.Gate != "cited" || v.Kinds != nil || len(v.Rules) != len(want) {
		t.Fatalf("rules --quest q1 --json = %+v", v)
	}
	for i, w := range want {
		r := v.Rules[i]
		if r.ID != w.id || r.Level != strings.ToUpper(w.level) && r.Level != w.level || r.Stage != w.stage ||
			r.Description == "" || !reflect.DeepEqual(r.Attacks, w.attacks) || !reflect.DeepEqual(r.Supersedes, w.supersede) {
			t.Errorf("rule %d = %+v, want %+v", i, r, w)
		}
	}
	if v.Rules[3].Weight != 0.5 || v.Rules[0].Weight != 1 {
		t.Errorf("weights %v %v, want 1 and 0.5", v.Rules[0].Weight, v.Rules[3].Weight)
	}
	// The raw JSON has exactly the documented keys.
	var raw struct {
		Rules []map[string]json.RawMessage `json:"rules"`
	}
	decode(t, must(t, 0, "", cmd("rules", "--gate", "cited", "--json")...), &raw)
	for _, k := range []string{"id", "level", "stage", "kind", "description", "attacks", "supersedes", "weight"} {
		if _, ok := raw.Rules[1][k]; !ok {
			t.Errorf("rules --json lacks %q: %s", k, raw.Rules[1])
		}
	}
	if string(raw.Rules[1]["level"]) != `"fail"` && string(raw.Rules[1]["level"]) != `"FAIL"` {
		t.Errorf("level encodes as %s", raw.Rules[1]["level"])
	}
}

// TestRulesWithoutQuest: the built-in kinds and the default profile, with
// no store at all.
func TestRulesWithoutQuest(t *testing.T) {
	data := t.TempDir()
	var v api.Rules
	decode(t, must(t, 0, "", "rules", "--json", "--data", data), &v)
	if len(v.Kinds) != len(gates.Kinds()) || v.Gate != "default" || len(v.Rules) != len(gates.DefaultCatalog().Describe()) {
		t.Fatalf("rules --json = %+v", v)
	}
	for _, k := range v.Kinds {
		if k.Kind == "" || k.Description == "" || k.Params == "" {
			t.Errorf("kind %+v lacks a name, description or params", k)
		}
	}
	r := must(t, 0, "", "rules", "--data", data)
	for _, s := range []string{"citation-quote", "params: ", `Gate profile "default"`, "SUPERSEDES"} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("rules output lacks %q:\n%s", s, r.stdout)
		}
	}
	if _, err := os.Stat(filepath.Join(data, engine.StoreFile)); err == nil {
		t.Error("rules without --quest created a store")
	}
	if r := must(t, 1, "", "rules", "--gate", "strict", "--data", data); !strings.Contains(r.stderr, `"strict"`) || !strings.Contains(r.stderr, "known: default") {
		t.Errorf("rules --gate strict said %q", r.stderr)
	}
}

// TestQuestGateProfile: --gate must name a known profile; a quest whose
// profile vanished from the config is stopped with a message naming it.
func TestQuestGateProfile(t *testing.T) {
	srv := sourceServer(t, nil)
	conf := citedConfig(t, hostPort(srv))
	data := dataDir(t)
	r := must(t, 1, "", "quest", "new", "x", "--direction", "d", "--gate", "strict", "--data", data, "--config", conf)
	if !strings.Contains(r.stderr, `gate profile "strict" is not configured (known: cited, default)`) {
		t.Errorf("quest new --gate strict said %q", r.stderr)
	}
	var q api.Quest
	decode(t, must(t, 0, "", "quest", "new", "x", "--direction", "d", "--gate", "cited", "--provider", "external", "--json", "--data", data, "--config", conf), &q)
	if q.Gate != "cited" {
		t.Fatalf("quest gate = %q, want cited", q.Gate)
	}
	must(t, 0, "", "scan", q.ID, "h", "--data", data, "--config", conf)

	// Without the config that defines "cited": the answer is not judged,
	// the quest stops, and both say which profile is missing.
	bare := filepath.Join(t.TempDir(), "bare.toml")
	os.WriteFile(bare, []byte("# nothing\n"), 0o644)
	r = must(t, 1, answer("dead", "the hypothesis does not hold at all."), "submit", q.ID, "--node", "n1", "--data", data, "--config", bare)
	if !strings.Contains(r.stderr, `gate profile "cited" is not in the configuration (known: default)`) {
		t.Errorf("submit on a vanished profile said %q", r.stderr)
	}
	decode(t, must(t, 0, "", "quest", "show", q.ID, "--json", "--data", data, "--config", bare), &struct{ Quest *api.Quest }{&q})
	if q.Status != api.QuestStopped || !strings.Contains(q.Reason, `"cited"`) {
		t.Errorf("quest is %s (%s), want stopped naming the profile", q.Status, q.Reason)
	}
	if r := must(t, 1, "", "rules", "--quest", q.ID, "--data", data, "--config", bare); !strings.Contains(r.stderr, `"cited"`) {
		t.Errorf("rules --quest on a vanished profile said %q", r.stderr)
	}
}

// TestOfflineDeferral: with the probe pointing at a closed port, an answer
// that passes stage 1 and needs the cited URL is deferred (exit 0, DEFERRED,
// tries unchanged) and one that fails stage 1 still FAILs; once the source
// and the probe answer, `questbox tick` judges the kept answer again and
// the node completes without anyone submitting it again.
func TestOfflineDeferral(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there yet: the box is "offline"
	conf := citedConfig(t, addr)
	data := dataDir(t)
	cmd := func(args ...string) []string { return append(args, "--data", data, "--config", conf) }
	must(t, 0, "", cmd("quest", "new", "ocr", "--direction", "free OCR", "--provider", "external", "--gate", "cited")...)
	must(t, 0, "", cmd("scan", "q1", "deferred one", "broken one")...)

	src := "http://" + addr + "/report"
	r := must(t, 0, cited(src, "Tesseract 5 recognised 79% of the characters"), cmd("submit", "q1", "--node", "n1")...)
	if !strings.HasPrefix(r.stdout, "DEFERRED") || !strings.Contains(r.stdout, "offline") || !strings.Contains(r.stdout, "tries 0/3") {
		t.Errorf("offline submit printed:\n%s", r.stdout)
	}
	n := node(t, data, conf, "n1")
	if n.Status != api.NodeDeferred || n.Tries != 0 {
		t.Fatalf("n1 is %s with %d tries, want deferred with 0", n.Status, n.Tries)
	}
	// Stage 1 fails: FAIL even offline (no network needed to say so).
	must(t, 3, "not json", cmd("submit", "q1", "--node", "n2")...)

	// The network comes back: the source (and the probe target) listen.
	l, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s again: %v", addr, err)
	}
	sourceServer(t, l)
	var tv api.Tick
	decode(t, must(t, 0, "", cmd("tick", "--json")...), &tv)
	if !reflect.DeepEqual(tv.Resumed, []string{"n1"}) || !reflect.DeepEqual(tv.Dispatched, []string{"n1"}) {
		t.Errorf("tick report %+v, want n1 resumed and dispatched", tv)
	}
	n = node(t, data, conf, "n1")
	if n.Status != api.NodeAborted || n.Outcome != "PASS" || n.Tries != 0 {
		t.Errorf("after the network came back n1 is %s (%s, %d tries), want aborted (PASS, 0 tries)", n.Status, n.Outcome, n.Tries)
	}

	// The probe's changes are device events naming its target.
	all, err := engineEvents(data)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range all {
		if ev.Kind == engine.KindDevice && strings.HasPrefix(ev.Outcome, "network_") {
			if ev.Detail != addr {
				t.Errorf("%s event names %q, want the probe %s", ev.Outcome, ev.Detail, addr)
			}
			got = append(got, ev.Outcome)
		}
	}
	// Each CLI process probes afresh. The first submit found the box
	// offline; the FAILed submit never asked (stage 1 failed, so no
	// network was needed); the tick's process found it online at its
	// first probe, which is not news.
	if want := []string{"network_down"}; !reflect.DeepEqual(got, want) {
		t.Errorf("network events %v, want %v", got, want)
	}
}

// node reads one node through the CLI.
func node(t *testing.T, data, conf, id string) api.Node {
	t.Helper()
	var v api.QuestDetail
	decode(t, must(t, 0, "", "quest", "show", "q1", "--json", "--data", data, "--config", conf), &v)
	for _, n := range v.Nodes {
		if n.ID == id {
			return n
		}
	}
	t.Fatalf("no node %s", id)
	return api.Node{}
}

// engineEvents reads every event of the store in data.
func engineEvents(data string) ([]engine.Event, error) {
	st, err := engine.OpenStore(data, engine.StoreOptions{})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	eng, err := engine.New(st, engine.Options{})
	if err != nil {
		return nil, err
	}
	defer eng.Shutdown(0)
	return eng.Events(0, 0)
}

// judgeConfig adds to citedConfig a [judge] whose light and heavy tiers are
// command providers on the box (vendor local: a quest's default egress
// allows them) that doubt everything and count their calls in calls (in a
// directory of its own, which they may write).
func judgeConfig(t *testing.T, probe, calls string) string {
	t.Helper()
	path := citedConfig(t, probe)
	doubt := `cat >/dev/null; echo call >> '` + calls + `'; printf '{"decision": "doubt", "quote": "", "reason": "not convinced"}'`
	extra := `
[providers.small]
type = "command"
vendor = "local"
write = ["` + filepath.Dir(calls) + `"]
argv = ["/bin/sh", "-c", "` + strings.ReplaceAll(doubt, `"`, `\"`) + `"]
[providers.big]
type = "command"
vendor = "local"
write = ["` + filepath.Dir(calls) + `"]
argv = ["/bin/sh", "-c", "` + strings.ReplaceAll(doubt, `"`, `\"`) + `"]
` + judgeTable("small", "big")
	appendConfig(t, path, extra)
	return path
}

// judgeTable is a [judge] whose light and heavy tiers are the providers
// light and heavy, with one canary.
func judgeTable(light, heavy string) string {
	return `
[judge]
light = { provider = "` + light + `", model = "` + light + `1" }
heavy = { provider = "` + heavy + `", model = "` + heavy + `2" }
template = "v1"
canaries = 1
canary_threshold = 0
`
}

// appendConfig appends text to the configuration file at path.
func appendConfig(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// TestJudgeWiring: with [judge] configured, an answer the rules PASS goes
// to the judges; a doubt from both tiers is a REVIEW (exit 4) awaiting
// consent, never a PASS; the same pair again is answered from the store's
// judge cache without calling a judge.
func TestJudgeWiring(t *testing.T) {
	srv := sourceServer(t, nil)
	calls := filepath.Join(t.TempDir(), "calls")
	conf := judgeConfig(t, hostPort(srv), calls)
	data := dataDir(t)
	cmd := func(args ...string) []string { return append(args, "--data", data, "--config", conf) }
	must(t, 0, "", cmd("run", "--check-config")...)
	must(t, 0, "", cmd("quest", "new", "ocr", "--direction", "free OCR", "--provider", "external", "--gate", "cited")...)
	must(t, 0, "", cmd("scan", "q1", "first", "second")...)

	answer := cited(srv.URL+"/report", "Tesseract 5 recognised 79% of the characters")
	r := must(t, exitReview, answer, cmd("submit", "q1", "--node", "n1")...)
	if !strings.HasPrefix(r.stdout, "REVIEW") || !strings.Contains(r.stdout, "awaiting_consent") {
		t.Errorf("judged submit printed:\n%s", r.stdout)
	}
	first := countLines(t, calls)
	if first == 0 {
		t.Fatal("no judge was called")
	}
	must(t, exitReview, answer, cmd("submit", "q1", "--node", "n2")...)
	if got := countLines(t, calls); got != first {
		t.Errorf("the same pair again made %d more judge calls, want 0 (cached)", got-first)
	}

	// An incomplete [judge] stops start-up naming the key.
	bad := filepath.Join(t.TempDir(), "bad.toml")
	b, _ := os.ReadFile(conf)
	os.WriteFile(bad, []byte(strings.Replace(string(b), `heavy = { provider = "big", model = "big2" }`, `heavy = { provider = "big" }`, 1)), 0o644)
	if r := must(t, 1, "", "run", "--check-config", "--data", data, "--config", bad); !strings.Contains(r.stderr, "judge.heavy.model") {
		t.Errorf("incomplete judge said %q", r.stderr)
	}
}

func countLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}
