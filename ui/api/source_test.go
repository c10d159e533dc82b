package api

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/questbox/questbox/engine"
)

// TestSourcesAgree: the API's sources are the engine's, one for one.
func TestSourcesAgree(t *testing.T) {
	ours := []Source{SourceCLI, SourceDashboard, SourceMQTT}
	if len(ours) != len(engine.Sources) {
		t.Fatalf("got %d API sources, want the engine's %d (%v)", len(ours), len(engine.Sources), engine.Sources)
	}
	for i, s := range ours {
		if string(s) != string(engine.Sources[i]) {
			t.Errorf("source %d: got %q, want %q", i, s, engine.Sources[i])
		}
	}
}

// TestStopAndResumeRecordTheirSource: a quest stopped or resumed records
// where the command came from — the door's source, or the one the request
// names — in its reason and its event, and a stop by a person from any
// face never reads as needing attention.
func TestStopAndResumeRecordTheirSource(t *testing.T) {
	e := newEngines(t)
	ctx := context.Background()
	door := func(src Source) *Client {
		hc, stop := InProcess(New(Options{Engines: e, Internal: true, Source: src}))
		t.Cleanup(stop)
		return NewClient(hc, "test")
	}
	cli, dashboard := door(""), door(SourceDashboard)
	external := engine.ProviderExternal
	q, err := cli.NewQuest(ctx, NewQuest{Name: "q", Direction: "find the best free OCR", Provider: &external})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		c      *Client
		cmd    QuestCommand
		reason string
	}{
		{"the socket's door", cli, QuestCommand{}, "via cli"},
		{"the dashboard's door", dashboard, QuestCommand{}, "via dashboard"},
		{"a request that names mqtt", cli, QuestCommand{Source: SourceMQTT}, "via mqtt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			since := lastSeq(t, cli)
			got, err := tc.c.StopQuest(ctx, q.ID, tc.cmd)
			if err != nil {
				t.Fatal(err)
			}
			if got.Reason != "stopped "+tc.reason || got.Attention {
				t.Errorf("stopped: got reason %q, needs attention %v; want %q, false", got.Reason, got.Attention, "stopped "+tc.reason)
			}
			if got, err = tc.c.ResumeQuest(ctx, q.ID, tc.cmd); err != nil || got.Reason != "resumed "+tc.reason {
				t.Errorf("resumed: got reason %q, %v; want %q", got.Reason, err, "resumed "+tc.reason)
			}
			evs, err := cli.Events(ctx, since, 10)
			if err != nil {
				t.Fatal(err)
			}
			var reasons []string
			for _, ev := range evs.Events {
				reasons = append(reasons, ev.Reason)
			}
			if want := []string{"stopped " + tc.reason, "resumed " + tc.reason}; strings.Join(reasons, "|") != strings.Join(want, "|") {
				t.Errorf("got event reasons %q, want %q", reasons, want)
			}
		})
	}
	if _, err := cli.StopQuest(ctx, q.ID, QuestCommand{Source: "owner"}); !isCode(err, CodeInvalid) {
		t.Errorf("stop with source owner: got %v, want invalid", err)
	}
	// An empty body is the door's source, as the dashboard's page sends it.
	hc, stop := InProcess(New(Options{Engines: e, Internal: true, Source: SourceDashboard}))
	defer stop()
	resp, err := hc.Post("http://questbox/api/quests/"+q.ID+"/stop", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"reason": "stopped via dashboard"`) {
		t.Errorf("stop with an empty body: got %s %s, want 200 stopped via dashboard", resp.Status, body)
	}
}

func lastSeq(t *testing.T, c *Client) uint64 {
	t.Helper()
	evs, err := c.Events(context.Background(), 0, maxEventsPage)
	if err != nil {
		t.Fatal(err)
	}
	return evs.Next
}

func isCode(err error, code string) bool {
	ae, ok := errors.AsType[*Error](err)
	return ok && ae.Code == code
}
