package daemon

import (
	"time"

	"github.com/questbox/questbox/engine"
	"github.com/questbox/questbox/engine/agent"
)

// newDemo returns the built-in demo provider. delay slows each answer so
// that a demo quest can be watched (`run --demo`); 0 answers at once.
func newDemo(delay time.Duration) engine.Provider {
	return agent.Demo{Delay: delay}
}
