package mqtt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/questbox/questbox/ui/api"
)

// maxCommandPayload bounds a command's payload.
const maxCommandPayload = 4096

// idRE is what quest and node ids look like.
var idRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// errMalformed marks a command that is not one this box understands.
var errMalformed = errors.New("malformed command")

// errEmpty marks an empty payload: no command at all. It is how a retained
// command is cleared (an empty retained message, which the broker also
// forwards to its subscribers live), and what Tasmota treats as a query:
// it must never act.
var errEmpty = errors.New("empty payload: no command")

// command is one parsed command.
type command struct {
	what      string // quest or consent
	id        string // the quest or node
	verb      string // stop, resume, approve, reject
	claimHash string // consent only
}

// parseCommand parses topic (after <base>/cmd/) and payload. It does not
// look at the store.
func parseCommand(rest string, payload []byte) (command, error) {
	parts := strings.Split(rest, "/")
	if len(parts) != 3 {
		return command{}, fmt.Errorf("%w: topic cmd/%s is not cmd/quest/<id>/stop|resume or cmd/consent/<node>/approve|reject", errMalformed, rest)
	}
	cmd := command{what: parts[0], id: parts[1], verb: parts[2]}
	if !idRE.MatchString(cmd.id) {
		return command{}, fmt.Errorf("%w: %q is not an id", errMalformed, cmd.id)
	}
	if len(payload) > maxCommandPayload {
		return command{}, fmt.Errorf("%w: payload of %d bytes (at most %d)", errMalformed, len(payload), maxCommandPayload)
	}
	if len(bytes.TrimSpace(payload)) == 0 {
		return command{}, fmt.Errorf("cmd/%s: %w", rest, errEmpty)
	}
	switch {
	case cmd.what == "quest" && (cmd.verb == "stop" || cmd.verb == "resume"):
		var none struct{}
		if err := strictJSON(payload, &none); err != nil {
			return command{}, fmt.Errorf("%w: payload must be {}: %v", errMalformed, err)
		}
	case cmd.what == "consent" && (cmd.verb == "approve" || cmd.verb == "reject"):
		var p struct {
			ClaimHash string `json:"claim_hash"`
		}
		if err := strictJSON(payload, &p); err != nil {
			return command{}, fmt.Errorf(`%w: payload must be {"claim_hash": "<sha256 hex>"}: %v`, errMalformed, err)
		}
		if p.ClaimHash == "" {
			return command{}, fmt.Errorf(`%w: payload must be {"claim_hash": "<sha256 hex>"}: claim_hash is missing`, errMalformed)
		}
		cmd.claimHash = p.ClaimHash
	default:
		return command{}, fmt.Errorf("%w: unknown command cmd/%s", errMalformed, rest)
	}
	return cmd, nil
}

// strictJSON decodes one JSON object with no unknown field and nothing
// after it.
func strictJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON object")
	}
	return nil
}

// command handles a message under <base>/cmd/. An empty payload is no
// command (clearing a retained command sends one); a retained command is
// never acted on (it may be days old, and a reconnect would replay it); a
// malformed one is logged and ignored. The command is a call of the API,
// through its handlers.
func (s *session) command(ctx context.Context, m paho.Message) {
	c := s.c
	log := c.log.With("topic", m.Topic())
	if len(bytes.TrimSpace(m.Payload())) == 0 {
		log.Debug("mqtt: an empty payload under cmd/ is no command; nothing done")
		return
	}
	if m.Retained() {
		log.Warn("mqtt: ignored a retained command: commands act only when sent live (clear it with an empty retained message)")
		return
	}
	cmd, err := parseCommand(strings.TrimPrefix(m.Topic(), c.cmdPrefix()), m.Payload())
	if err != nil {
		log.Warn("mqtt: ignored a command", "err", err)
		return
	}
	if err := s.do(ctx, cmd); err != nil {
		log.Warn("mqtt: command refused", "err", err)
		return
	}
	log.Info("mqtt: command done", "command", cmd.what+" "+cmd.verb, "id", cmd.id)
}

// do runs a parsed command: a call of the API.
func (s *session) do(ctx context.Context, cmd command) error {
	var err error
	switch cmd.what + "/" + cmd.verb {
	case "quest/stop":
		_, err = s.door.StopQuest(ctx, cmd.id, api.QuestCommand{Source: api.SourceMQTT})
	case "quest/resume":
		_, err = s.door.ResumeQuest(ctx, cmd.id, api.QuestCommand{Source: api.SourceMQTT})
	case "consent/approve":
		_, err = s.door.Approve(ctx, cmd.id, cmd.claimHash)
	case "consent/reject":
		_, err = s.door.Reject(ctx, cmd.id, cmd.claimHash)
	default:
		err = fmt.Errorf("BUG: mqtt: parsed an unknown command %+v", cmd)
	}
	return err
}
