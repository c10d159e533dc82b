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

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/gates/consent"
)

// maxCommandPayload bounds a command's payload.
const maxCommandPayload = 4096

// idRE is what quest and node ids look like.
var idRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// errMalformed marks a command that is not one this box understands.
var errMalformed = errors.New("malformed command")

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
	switch {
	case cmd.what == "quest" && (cmd.verb == "stop" || cmd.verb == "resume"):
		if len(bytes.TrimSpace(payload)) > 0 {
			var none struct{}
			if err := strictJSON(payload, &none); err != nil {
				return command{}, fmt.Errorf("%w: payload must be empty or {}: %v", errMalformed, err)
			}
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

// command handles a message under <base>/cmd/. A retained command is
// never acted on (it may be days old, and a reconnect would replay it);
// a malformed one is logged and ignored.
func (s *session) command(_ context.Context, m paho.Message) {
	c := s.c
	log := c.log.With("topic", m.Topic())
	if m.Retained() {
		log.Warn("mqtt: ignored a retained command: commands act only when sent live (clear it with an empty retained message)")
		return
	}
	cmd, err := parseCommand(strings.TrimPrefix(m.Topic(), c.cmdPrefix()), m.Payload())
	if err != nil {
		log.Warn("mqtt: ignored a command", "err", err)
		return
	}
	if err := c.do(cmd); err != nil {
		log.Warn("mqtt: command refused", "err", err)
		return
	}
	log.Info("mqtt: command done", "command", cmd.what+" "+cmd.verb, "id", cmd.id)
}

// do runs a parsed command on the engine.
func (c *Client) do(cmd command) error {
	switch cmd.what + "/" + cmd.verb {
	case "quest/stop":
		_, err := c.eng.StopQuest(cmd.id, engine.SourceMQTT)
		return err
	case "quest/resume":
		_, err := c.eng.ResumeQuest(cmd.id, engine.SourceMQTT)
		return err
	}
	src, err := consent.NewMQTT(c.opt.Consent)
	if err != nil {
		return fmt.Errorf("%w (set mqtt.commands_consent = true to allow it)", err)
	}
	cs, err := consent.New(src, cmd.claimHash)
	if err != nil {
		return err
	}
	if cmd.verb == "approve" {
		return c.eng.Approve(cmd.id, cs)
	}
	return c.eng.Reject(cmd.id, cs)
}
