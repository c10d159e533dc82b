package domain

import (
	"strings"

	"github.com/questbox/questbox/gates"
)

// Feedback renders facts as the text fed back into the agent's next prompt
// and shown to humans, byte-identical in both places.
func Feedback(facts []gates.Fact) string {
	var b strings.Builder
	for _, f := range facts {
		b.WriteString(f.String())
		b.WriteByte('\n')
	}
	return b.String()
}
