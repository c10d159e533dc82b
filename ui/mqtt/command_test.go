package mqtt

import (
	"errors"
	"strings"
	"testing"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/ui/mqtt/mosquittotest"
)

const hash = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestParseCommand(t *testing.T) {
	tests := []struct {
		name    string
		rest    string
		payload string
		want    command
		wantErr bool
	}{
		{"stop", "quest/q1/stop", "{}", command{what: "quest", id: "q1", verb: "stop"}, false},
		{"resume with {}", "quest/q1/resume", " {} ", command{what: "quest", id: "q1", verb: "resume"}, false},
		{"approve", "consent/n3/approve", `{"claim_hash":"` + hash + `"}`, command{what: "consent", id: "n3", verb: "approve", claimHash: hash}, false},
		{"reject", "consent/n3/reject", `{"claim_hash":"` + hash + `"}`, command{what: "consent", id: "n3", verb: "reject", claimHash: hash}, false},
		{"unknown verb", "quest/q1/explode", "{}", command{}, true},
		{"unknown thing", "node/n1/abort", "{}", command{}, true},
		{"too deep", "quest/q1/stop/now", "{}", command{}, true},
		{"wildcard-ish id", "quest/Q 1/stop", "{}", command{}, true},
		{"stop with text", "quest/q1/stop", "please", command{}, true},
		{"stop with fields", "quest/q1/stop", `{"force":true}`, command{}, true},
		{"two objects", "quest/q1/stop", `{}{}`, command{}, true},
		{"consent without hash", "consent/n3/approve", `{}`, command{}, true},
		{"consent with extra field", "consent/n3/approve", `{"claim_hash":"` + hash + `","by":"x"}`, command{}, true},
		{"consent not json", "consent/n3/approve", hash, command{}, true},
		{"huge payload", "quest/q1/stop", strings.Repeat(" ", maxCommandPayload+1), command{}, true},
		{"empty stop", "quest/q1/stop", "", command{}, true},
		{"blank resume", "quest/q1/resume", " \n", command{}, true},
		{"empty approve", "consent/n3/approve", "", command{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseCommand(tt.rest, []byte(tt.payload))
			if (err != nil) != tt.wantErr || err != nil && !errors.Is(err, errMalformed) && !errors.Is(err, errEmpty) {
				t.Fatalf("got error %v, want error %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func questEvents(t *testing.T, eng *engine.Engine, id string) []string {
	t.Helper()
	evs, err := eng.Events(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range evs {
		if ev.Kind == engine.KindQuest && ev.Quest == id && ev.From != "" {
			out = append(out, ev.From+">"+ev.To)
		}
	}
	return out
}

func TestCommandsStopResumeAndIgnoreRetainedAndMalformed(t *testing.T) {
	r := newRig(t, mosquittotest.Options{})
	spec := r.eng.NewQuestSpec("external", "x")
	spec.Provider = engine.ProviderExternal
	q, err := r.eng.NewQuest(spec)
	if err != nil {
		t.Fatal(err)
	}
	cmd := base + "/cmd/quest/" + q.ID + "/"
	// A retained stop waits on the broker: it must never act.
	r.broker.Publish(t, cmd+"stop", "{}", true) // (an empty retained payload would clear, not retain)
	r.start(func(o *Options) { o.Commands = true })
	r.logs.waitFor(t, "ignored a retained command")
	r.broker.Publish(t, cmd+"resume", "resume now please", false)
	r.logs.waitFor(t, "payload must be {}")
	r.broker.Publish(t, cmd+"explode", "{}", false)
	r.logs.waitFor(t, "unknown command cmd/quest/"+q.ID+"/explode")
	r.broker.Publish(t, base+"/cmd/consent/n1/approve", `{"claim_hash":"`+hash+`"}`, false)
	r.logs.waitFor(t, "MQTT consent is not enabled")
	if got := questEvents(t, r.eng, q.ID); len(got) != 0 {
		t.Fatalf("the quest changed on retained or malformed commands: %v", got)
	}
	r.broker.Publish(t, cmd+"stop", "{}", false)
	r.logs.waitFor(t, "command done")
	r.broker.Publish(t, cmd+"resume", "{}", false)
	r.broker.Publish(t, cmd+"resume", "{}", false) // not stopped any more: refused, logged
	r.logs.waitFor(t, "only a stopped quest resumes")
	if got := questEvents(t, r.eng, q.ID); strings.Join(got, " ") != "active>stopped stopped>active" {
		t.Fatalf("quest changes %v, want a stop then a resume", got)
	}
	got, err := r.eng.Quest(q.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Reason != "resumed via mqtt" {
		t.Errorf("quest reason %q, want it to name MQTT as the source", got.Reason)
	}
}

// TestEmptyCommandPayloadDoesNothing: clearing a retained command (the
// standard way: an empty retained message, which the broker also forwards
// live) or an empty live message is no command. It stopped the quest
// before.
func TestEmptyCommandPayloadDoesNothing(t *testing.T) {
	r := newRig(t, mosquittotest.Options{})
	spec := r.eng.NewQuestSpec("external", "x")
	spec.Provider = engine.ProviderExternal
	q, err := r.eng.NewQuest(spec)
	if err != nil {
		t.Fatal(err)
	}
	cmd := base + "/cmd/quest/" + q.ID + "/"
	sum := r.broker.Subscribe(t, base+"/summary")
	r.start(func(o *Options) { o.Commands = true })
	// The session publishes its state once it subscribed to the commands.
	sum.WaitFor("the summary", func(msgs []mosquittotest.Message) bool { return len(msgs) > 0 })
	r.broker.Publish(t, cmd+"stop", "", true) // clears a retained stop
	r.broker.Publish(t, cmd+"stop", "", false)
	r.broker.Publish(t, cmd+"resume", "", false)
	// Messages are handled in order: once this one is logged, the empty
	// ones before it were handled.
	r.broker.Publish(t, cmd+"explode", "{}", false)
	r.logs.waitFor(t, "unknown command cmd/quest/"+q.ID+"/explode")
	if got := questEvents(t, r.eng, q.ID); len(got) != 0 {
		t.Fatalf("an empty payload acted on the quest: %v", got)
	}
	got, err := r.eng.Quest(q.ID)
	if err != nil || got.Status != engine.QuestActive {
		t.Fatalf("quest after empty commands: %v, %v; want active", got.Status, err)
	}
}

func TestCommandsAreOffByDefault(t *testing.T) {
	r := newRig(t, mosquittotest.Options{})
	spec := r.eng.NewQuestSpec("external", "x")
	spec.Provider = engine.ProviderExternal
	q, err := r.eng.NewQuest(spec)
	if err != nil {
		t.Fatal(err)
	}
	sub := r.broker.Subscribe(t, base+"/event/quest")
	r.start(nil)
	r.waitState("connected", connected)
	r.broker.Publish(t, base+"/cmd/quest/"+q.ID+"/stop", "{}", false)
	// A change that is published after the command: had the command acted,
	// its event would come first.
	if _, err := r.eng.StopQuest(q.ID, engine.SourceCLI); err != nil {
		t.Fatal(err)
	}
	sub.WaitFor("the owner's stop", func(msgs []mosquittotest.Message) bool { return len(msgs) > 0 })
	if got := questEvents(t, r.eng, q.ID); len(got) != 1 {
		t.Fatalf("quest changes %v, want only the owner's stop", got)
	}
}

func TestConsentOverMQTTBoundToTheClaim(t *testing.T) {
	r := newRig(t, mosquittotest.Options{})
	req := r.runToConsent()
	sub := r.broker.Subscribe(t, base+"/consent")
	r.start(func(o *Options) { o.Commands, o.Consent = true, true })
	sub.WaitFor("the pending consent", func(msgs []mosquittotest.Message) bool {
		m, ok := mosquittotest.Last(msgs, base+"/consent")
		return ok && strings.Contains(m.Payload, req.ClaimHash)
	})
	topic := base + "/cmd/consent/" + req.Node + "/approve"
	r.broker.Publish(t, topic, `{"claim_hash":"`+hash+`"}`, false)
	r.logs.waitFor(t, "the claim changed after it was shown")
	r.broker.Publish(t, topic, `{"claim_hash":"`+req.ClaimHash+`"}`, false)
	sub.WaitFor("no pending consent", func(msgs []mosquittotest.Message) bool {
		m, ok := mosquittotest.Last(msgs, base+"/consent")
		return ok && m.Payload == "[]"
	})
	evs, err := r.eng.Events(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	granted := false
	for _, ev := range evs {
		granted = granted || ev.Kind == engine.KindConsent && ev.Outcome == "granted" && ev.Node == req.Node && ev.Reason == "consent by mqtt"
	}
	if !granted {
		t.Errorf("no consent granted by mqtt for %s", req.Node)
	}
}

// FuzzParseCommand: any topic and payload from the broker either parse
// into a well-formed command or are refused as malformed; none panics.
func FuzzParseCommand(f *testing.F) {
	f.Add("quest/q1/stop", "")
	f.Add("quest/q1/resume", "{}")
	f.Add("consent/n3/approve", `{"claim_hash":"`+hash+`"}`)
	f.Add("consent/n3/reject", `{"claim_hash":1}`)
	f.Add("quest/../stop", "\x00")
	f.Fuzz(func(t *testing.T, rest, payload string) {
		cmd, err := parseCommand(rest, []byte(payload))
		if err != nil {
			if !errors.Is(err, errMalformed) && !errors.Is(err, errEmpty) {
				t.Fatalf("error %v is neither errMalformed nor errEmpty", err)
			}
			return
		}
		if !idRE.MatchString(cmd.id) || len(payload) > maxCommandPayload || strings.TrimSpace(payload) == "" {
			t.Fatalf("accepted %+v from %q %q", cmd, rest, payload)
		}
		switch cmd.what + "/" + cmd.verb {
		case "quest/stop", "quest/resume":
		case "consent/approve", "consent/reject":
			if cmd.claimHash == "" {
				t.Fatalf("consent without a claim hash from %q", payload)
			}
		default:
			t.Fatalf("accepted an unknown command %+v", cmd)
		}
	})
}
