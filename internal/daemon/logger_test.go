package daemon

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/questbox/questbox/internal/config"
)

// TestLogsAreRedacted logs a configured secret every way a log line can
// carry one (the message, an error, a string, a group, a With attribute)
// and finds it masked in all of them.
func TestLogsAreRedacted(t *testing.T) {
	cfg := config.Default()
	cfg.MQTT.Password = "inline-S3CRET"
	var buf bytes.Buffer
	e := &Env{Redact: config.NewRedactor(cfg, nil, nil)}
	log := e.newLogger(&buf, nil).With("with", "w inline-S3CRET")
	log.Info("msg inline-S3CRET", "err", errors.New("e inline-S3CRET"), "s", "inline-S3CRET",
		slog.Group("g", "k", "inline-S3CRET"), "n", 3)
	if strings.Contains(buf.String(), "inline-S3CRET") {
		t.Errorf("a log line carries the secret:\n%s", buf.String())
	}
	if got := strings.Count(buf.String(), config.Masked); got != 5 {
		t.Errorf("%d masked values, want 5:\n%s", got, buf.String())
	}
}
