package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/internal/config"
)

// fuzzRoutes are the API's write routes that take a request body, as the
// CLI, the dashboard and MQTT reach them.
var fuzzRoutes = []string{
	"/api/quests",
	"/api/quests/q1/scan",
	"/api/quests/q1/submit?node=n1",
	"/api/quests/q1/submit?node=n2",
	"/api/quests/q1/export",
	"/api/quests/q1/export/ack",
	"/api/quests/q1/export/abort",
	"/api/quests/q1/stop",
	"/api/quests/q1/resume",
	"/api/nodes/n1/abort",
	"/api/tick",
	"/api/device/press",
}

// FuzzPostBodies sends arbitrary bodies to every write route of the handler,
// over an engine on a real store holding one external quest with pending
// nodes. A hostile body must get a JSON answer with a client error or
// success, never a panic and never a 500 (an internal error is a bug: every
// bad input has a precise message), and the store must still verify.
func FuzzPostBodies(f *testing.F) {
	for i, b := range []string{
		`{"name":"x","direction":"find things","provider":"external"}`,
		`{"name":"x","direction":"d","mode":"team","roles":["owner"]}`,
		`{"hypotheses":["alpha","beta"]}`,
		`{"hypotheses":[""]}`,
		"My findings.\n```json\n{\"verdict\":\"dead\",\"evidence\":\"checked and it does not work at all\",\"citations\":[],\"new_directions\":[]}\n```\n",
		`{"file":"/tmp/x.jsonl","size":0}`,
		`{"file":"relative","size":-1}`,
		`{"token":"nope"}`,
		`{"reason":"r"}`,
		`{"source":"mqtt"}`, `{"source":"owner"}`,
		`{"hold":"2s","times":1}`,
		`{}`, ``, `null`, `[]`, `{"name":`, `{"name":1e999}`,
		`{"limits":{"max_agent_runs":-1}}`,
	} {
		f.Add(uint8(i), []byte(b))
	}
	e := newEnginesF(f)
	srv := New(Options{Engines: e, Config: config.Default(), Internal: true})
	post := func(path string, body []byte) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, req)
		return w
	}
	if w := post("/api/quests", []byte(`{"name":"fuzz","direction":"hostile bodies","provider":"external"}`)); w.Code != http.StatusOK {
		f.Fatalf("seed quest: %d %s", w.Code, w.Body)
	}
	if w := post("/api/quests/q1/scan", []byte(`{"hypotheses":["one","two","three"]}`)); w.Code != http.StatusOK {
		f.Fatalf("seed scan: %d %s", w.Code, w.Body)
	}
	f.Fuzz(func(t *testing.T, route uint8, body []byte) {
		path := fuzzRoutes[int(route)%len(fuzzRoutes)]
		w := post(path, body)
		if w.Code >= 500 && w.Code != http.StatusServiceUnavailable {
			t.Fatalf("POST %s %q: %d %s", path, body, w.Code, w.Body)
		}
		if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Fatalf("POST %s %q: content type %q", path, body, ct)
		}
		if !json.Valid(w.Body.Bytes()) {
			t.Fatalf("POST %s %q: the answer is not JSON: %s", path, body, w.Body)
		}
	})
	if rep, err := e.eng.Verify(); err != nil {
		f.Fatalf("the store does not verify after the fuzzing: %v %+v", err, rep)
	}
}

// newEnginesF is newEngines for a fuzz target: one store for the whole
// run, so state carries from input to input as it does in a daemon.
func newEnginesF(f *testing.F) *engines {
	f.Helper()
	st, err := engine.OpenStore(f.TempDir(), engine.StoreOptions{})
	if err != nil {
		f.Fatal(err)
	}
	eng, err := engine.New(st, engine.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() {
		eng.Shutdown(0)
		st.Close()
	})
	return &engines{eng: eng}
}
