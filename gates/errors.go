package gates

import "errors"

// Sentinel errors. They are wrapped with context; test with errors.Is.
var (
	// ErrInvalidLevel is returned when a level is neither fail nor review.
	ErrInvalidLevel = errors.New("invalid level")
	// ErrInvalidStage is returned when a stage is neither pure nor ground.
	ErrInvalidStage = errors.New("invalid stage")
	// ErrInvalidOutcome is returned when an outcome is not PASS, REVIEW or FAIL.
	ErrInvalidOutcome = errors.New("invalid outcome")
	// ErrEmptyCatalog is returned by NewCatalog when it is given no rules.
	ErrEmptyCatalog = errors.New("empty catalog")
	// ErrDuplicateRule is returned by NewCatalog when two rules share an id.
	ErrDuplicateRule = errors.New("duplicate rule id")
	// ErrInvalidRule is returned by NewCatalog for a nil rule or an empty id.
	ErrInvalidRule = errors.New("invalid rule")
	// ErrInvalidConfig is returned when a rule's own configuration is invalid,
	// for example evidence-length bounds with min > max.
	ErrInvalidConfig = errors.New("invalid rule configuration")
	// ErrInconsistentVerdict is returned by Verdict.Check when the outcome does
	// not follow from the facts.
	ErrInconsistentVerdict = errors.New("inconsistent verdict")
)

// ErrInvalidGraph is returned when a defeat graph's edges or weights are
// invalid: an unknown rule, a self edge, a supersedes cycle, a ground rule
// attacking a pure rule, or a weight outside (0, 1].
var ErrInvalidGraph = errors.New("invalid defeat graph")

// ErrUnknownKind is returned by LoadCatalog for a rule kind it does not know.
var ErrUnknownKind = errors.New("unknown rule kind")
