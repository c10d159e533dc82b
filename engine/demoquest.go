package engine

// The demo quest that `run --demo` seeds on a fresh box (docs/design.md,
// "The demo"): its answers are the demo provider's (engine/agent/demo*.go).
const (
	DemoName      = "demo: Japanese invoice OCR"
	DemoDirection = "find the most accurate free OCR for Japanese invoices"
)

// DemoQuestSpec is the demo quest's spec: a v3.2 quest in team mode on the
// demo provider, with Teams and a council of one reviewer and two judges.
// The daemon seeds it (with every configured role on the demo provider
// too); the faces' tests run the very same quest.
func (e *Engine) DemoQuestSpec() QuestSpec {
	s := e.NewQuestSpec(DemoName, DemoDirection)
	s.Mode, s.Provider, s.Teams = ModeTeam, ProviderDemo, true
	s.CouncilReviewers = []string{ProviderDemo}
	s.CouncilJudges = []string{ProviderDemo, ProviderDemo}
	return s
}
